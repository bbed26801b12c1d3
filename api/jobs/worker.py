"""The job worker: runs queued jobs, each claimed in the catalog by exactly one runner, which
says it is alive (a heartbeat) while it runs them. A job whose runner stopped cleanly is
released and taken at once; one whose runner died (SIGKILL, a lost machine) is taken when its
process is gone (same host) or its heartbeat is `claim_ttl_s` old. Queued jobs are looked for
at start and every few seconds, so jobs left by another process are not lost."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from api.service import Lore
from retrieval import Job, utcnow

log = logging.getLogger(__name__)

Run = Callable[[Lore, str, None, Callable[[], bool]], Awaitable[Job]]


def runner_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def stale_claim(ttl_s: float) -> Callable[[Job], bool]:
    """Whether a job's runner is gone: a process of this host that no longer runs, or a
    heartbeat older than `ttl_s`."""
    host = socket.gethostname()

    def stale(job: Job) -> bool:
        owner_host, _, rest = (job.claimed_by or "").partition(":")
        pid = rest.partition(":")[0]
        if owner_host == host and pid.isdigit() and not _alive(int(pid)):
            return True
        heartbeat = job.heartbeat_at
        return heartbeat is None or utcnow() - heartbeat > timedelta(seconds=ttl_s)

    return stale


@dataclass(frozen=True)
class JobsHealth:
    """What runs an API instance's jobs, for `/healthz`."""

    mode: str  # "process", "in-process" (the caller's event loop) or "workers" (`lore worker`)
    alive: bool
    restarts: int = 0
    pid: int | None = None


class JobWorker:
    def __init__(
        self,
        lore: Lore,
        concurrency: int,
        run: Run,
        claim_ttl_s: float = 30.0,
        poll_s: float = 5.0,
    ) -> None:
        """`poll_s`: how often the catalog is asked for jobs nobody runs (at most a third of
        `claim_ttl_s`)."""
        self._lore = lore
        self._run_job = run
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._concurrency = concurrency
        self._ttl = claim_ttl_s
        self._poll_s = min(poll_s, claim_ttl_s / 3)
        self._stale = stale_claim(claim_ttl_s)
        self._running: set[str] = set()
        self._queued: set[str] = set()
        self.owner = runner_id()
        self._stopping = asyncio.Event()

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._work(), name=f"lore-worker-{n}")
            for n in range(self._concurrency)
        ]
        self._tasks.append(asyncio.create_task(self._watch(), name="lore-worker-watch"))

    def health(self) -> JobsHealth:
        alive = bool(self._tasks) and not any(task.done() for task in self._tasks)
        return JobsHealth("in-process", alive, pid=os.getpid())

    def submit(self, job_id: str) -> None:
        if job_id not in self._queued and job_id not in self._running:
            self._queued.add(job_id)
            self._queue.put_nowait(job_id)

    async def _watch(self) -> None:
        """Heartbeats for the jobs running here; jobs nobody runs put in the queue."""
        while True:
            self._lore.catalog.heartbeat(self.owner, sorted(self._running))
            for job in self._lore.catalog.jobs_with_status("queued", "running"):
                if job.claimed_by is None or (job.claimed_by != self.owner and self._stale(job)):
                    self.submit(job.id)
            await asyncio.sleep(self._poll_s)

    async def _work(self) -> None:
        while True:
            job_id = await self._queue.get()
            self._queued.discard(job_id)
            if self._stopping.is_set():
                continue
            try:
                if self._lore.catalog.claim_job(job_id, self.owner, self._stale) is None:
                    continue  # finished, cancelled or another runner's
                self._running.add(job_id)
                log.info("running job %s", job_id)
                await self._run_job(self._lore, job_id, None, self._stopping.is_set)
            except Exception:
                log.exception("job %s could not be run", job_id)
            finally:
                self._running.discard(job_id)
                self._queue.task_done()

    async def stop(self, grace_s: float = 3.0) -> None:
        """Stop: running jobs stop at their next page (within `grace_s`, else their tasks are
        cancelled) and are released unfinished, for the next runner to resume."""
        self._stopping.set()
        deadline = asyncio.get_running_loop().time() + grace_s
        while self._running and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        for task in self._tasks:
            task.cancel()
        pending: set[asyncio.Task[None]] = set()
        if self._tasks:  # a crawl that swallows its cancellation is not waited for
            _, pending = await asyncio.wait(self._tasks, timeout=grace_s)
        self._tasks = []
        if pending:  # still running here: released, another runner would run them twice
            log.warning(
                "%d job task(s) did not stop within %.0f s; their jobs stay claimed until this "
                "process ends",
                len(pending),
                grace_s,
            )
            return
        self._lore.catalog.release_jobs(self.owner)
