"""Jobs: long work that runs outside a request (crawls, SPA captures), persisted in the catalog.

`RUNNERS` maps each kind to its `JobRunner` (adding a kind: one module, one line here); the
generic parts (running to the end, progress, how it ended, the webhook) are in `base`; the
worker claims jobs and runs them (`worker`)."""

from __future__ import annotations

from collections.abc import Callable

from api.jobs.base import JobRunner, Outcome
from api.jobs.capture import CaptureJobRunner
from api.jobs.link import LinkJobRunner
from api.jobs.worker import JobWorker
from api.service import Lore
from retrieval import Job

RUNNERS: dict[str, type[JobRunner]] = {
    LinkJobRunner.kind: LinkJobRunner,
    CaptureJobRunner.kind: CaptureJobRunner,
}


async def run_job(lore: Lore, job_id: str, on_progress: Callable[[Job], None] | None = None) -> Job:
    """Run (or resume) a job of any kind to its end; the job row says how it ended."""
    job = lore.catalog.get_job(job_id)
    if job.finished:
        return job
    return await RUNNERS[job.kind](lore, job_id, on_progress).run()


__all__ = [
    "RUNNERS",
    "JobRunner",
    "JobWorker",
    "Outcome",
    "run_job",
]
