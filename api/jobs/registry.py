"""The kinds of job and their runners: adding a kind is one module and one line here."""

from __future__ import annotations

from collections.abc import Callable

from api.jobs.base import JobRunner
from api.jobs.capture import CaptureJobRunner
from api.jobs.link import LinkJobRunner
from api.service import Lore
from retrieval import Job

RUNNERS: dict[str, type[JobRunner]] = {
    LinkJobRunner.kind: LinkJobRunner,
    CaptureJobRunner.kind: CaptureJobRunner,
}


async def run_job(
    lore: Lore,
    job_id: str,
    on_progress: Callable[[Job], None] | None = None,
    interrupted: Callable[[], bool] = lambda: False,
) -> Job:
    """Run (or resume) a job of any kind to its end; the job row says how it ended. When
    `interrupted()` turns true, the job stops at the next page, unfinished."""
    kind = lore.catalog.get_job(job_id).kind
    return await RUNNERS[kind](lore, job_id, on_progress, interrupted).run()
