"""Schedules: a job made again every so often (a re-crawl of a source), by whichever API
process finds it due first (the catalog's conditional update decides)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from retrieval import Job, NotFoundError, utcnow

if TYPE_CHECKING:
    from api.service import Lore

log = logging.getLogger(__name__)


def make_due_jobs(lore: Lore, now: datetime | None = None) -> list[Job]:
    """Queue a job for every schedule that is due, and move it to its next run (runs missed
    while no server ran are not made up). A run is skipped while the schedule's previous job
    has not finished: a slow crawl is not started twice."""
    now = now or utcnow()
    made = []
    for schedule in lore.catalog.due_schedules(now):
        every = timedelta(seconds=schedule.every_s)
        later = schedule.next_run_at + every
        if later <= now:  # runs were missed: the next is a whole interval from now
            later = now + every
        if not lore.catalog.advance_schedule(schedule, later):
            continue  # another process took this run
        if schedule.last_job_id and _unfinished(lore, schedule.last_job_id):
            log.info(
                "schedule %s: job %s has not finished; run skipped",
                schedule.id,
                schedule.last_job_id,
            )
            continue
        job = lore.catalog.create_job(
            schedule.tenant_id,
            schedule.kind,
            {**schedule.request, "scheduleId": schedule.id},
            lore.catalog.secrets(schedule.id),
        )
        lore.catalog.set_schedule_job(schedule.id, job.id)
        log.info("schedule %s: job %s queued", schedule.id, job.id)
        made.append(job)
    return made


def _unfinished(lore: Lore, job_id: str) -> bool:
    try:
        return not lore.catalog.get_job(job_id).finished
    except NotFoundError:
        return False


class Scheduler:
    """Asks the catalog for due schedules every `poll_s` seconds and hands their jobs to
    `submit` (what runs this API's jobs)."""

    def __init__(self, lore: Lore, submit: Callable[[str], None], poll_s: float) -> None:
        self._lore = lore
        self._submit = submit
        self._poll_s = poll_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                for job in await asyncio.to_thread(make_due_jobs, self._lore):
                    self._submit(job.id)
            except Exception:  # the catalog may be away a while: try again next time
                log.exception("schedules: due jobs not made")
            await asyncio.sleep(self._poll_s)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
