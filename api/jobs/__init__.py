"""Jobs: long work that runs outside a request (crawls, SPA captures), persisted in the catalog.

`RUNNERS` maps each kind to its `JobRunner` (`registry`: adding a kind is one module and one
line there); the generic parts (running to the end, progress, how it ended, the webhook) are
in `base`; the worker claims jobs and runs them (`worker`), in `lore serve` inside a process of
their own below the API's priority (`process`), or in `lore worker` processes that also store
crawls' pages taken from a queue engine (`tier`, `pages`). `schedules` makes a job again every
so often (re-crawls)."""

from __future__ import annotations

from api.jobs.base import JobRunner, Outcome
from api.jobs.process import JobProcess
from api.jobs.registry import RUNNERS, run_job
from api.jobs.schedules import Scheduler, make_due_jobs
from api.jobs.tier import WorkerTier
from api.jobs.worker import JobWorker

Jobs = JobProcess | JobWorker | WorkerTier  # what runs an API instance's jobs

__all__ = [
    "RUNNERS",
    "JobProcess",
    "JobRunner",
    "JobWorker",
    "Jobs",
    "Outcome",
    "Scheduler",
    "WorkerTier",
    "make_due_jobs",
    "run_job",
]
