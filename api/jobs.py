"""The in-process job worker: index-link jobs run on the server's event loop, persisted in the
catalog, so a job queued or running when the server stopped runs again when it starts."""

from __future__ import annotations

import asyncio
import logging

from api.service import Lore

log = logging.getLogger(__name__)


class JobWorker:
    def __init__(self, lore: Lore, concurrency: int) -> None:
        self._lore = lore
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._concurrency = concurrency

    def start(self) -> None:
        for job in self._lore.catalog.jobs_with_status("queued", "running"):
            log.info("resuming job %s (%s)", job.id, job.status)
            self._queue.put_nowait(job.id)
        self._tasks = [
            asyncio.create_task(self._run(), name=f"lore-worker-{n}")
            for n in range(self._concurrency)
        ]

    def submit(self, job_id: str) -> None:
        self._queue.put_nowait(job_id)

    async def _run(self) -> None:
        while True:
            job_id = await self._queue.get()
            try:
                await self._lore.run_job(job_id)
            except Exception:
                log.exception("job %s could not be run", job_id)
            finally:
                self._queue.task_done()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
