"""Jobs: long work that runs outside a request (crawls, SPA captures), persisted in the catalog.

`RUNNERS` maps each kind to its `JobRunner` (`registry`: adding a kind is one module and one
line there); the generic parts (running to the end, progress, how it ended, the webhook) are
in `base`; the worker claims jobs and runs them (`worker`), in `lore serve` inside a process of
their own below the API's priority (`process`)."""

from __future__ import annotations

from api.jobs.base import JobRunner, Outcome
from api.jobs.process import JobProcess
from api.jobs.registry import RUNNERS, run_job
from api.jobs.worker import JobWorker

__all__ = ["RUNNERS", "JobProcess", "JobRunner", "JobWorker", "Outcome", "run_job"]
