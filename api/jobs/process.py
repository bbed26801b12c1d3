"""`lore serve`'s jobs in a process of their own, below the API's priority.

Crawling, extraction and embedding are CPU work in Python: on the API's event loop (or its
threads, which share the interpreter lock) they made `/agent/context` 4.9x slower at p95
while a crawl ran (benchmarks/agent_latency_under_crawl.py). The job process runs them with
its own interpreter at a lower OS priority (`nice`), so the agent's requests come first on a
busy machine. It opens the catalog itself; the vector store it writes through the process that
owns it (`retrieval.RemoteStore`), since a Qdrant Edge shard is opened by one process: the
store process (`retrieval.StoreProcess`, `lore serve`'s default) or else the API process.

Stopping (SIGTERM, Ctrl-C to `lore serve`): the job process is asked to stop, its running jobs
are cancelled and released (they stay `running`, their unfinished pages `pending`, and the next
start resumes them), and after `grace_s` it is killed. A job process whose parent died sees
its control pipe close and stops the same way."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from api.jobs.registry import run_job
from api.jobs.worker import JobsHealth, JobWorker
from api.memory import lean_child
from api.observe import configure_logging, configure_tracing
from api.service import Lore
from api.settings import Settings
from retrieval import RemoteStore, StoreAddress, StoreServer, supervise

log = logging.getLogger(__name__)

NICENESS = 10
STOP_S = 4.0  # the job process's own limit for stopping its jobs (the parent waits grace_s)


class JobProcess:
    """The parent's handle: starts the job process, serves it the store, sends it jobs, and
    starts it again when it dies (a crash, the kernel's OOM killer): its running jobs were
    claimed by a process that no longer runs, so the new one takes them over at once."""

    def __init__(self, lore: Lore, grace_s: float = 5.0) -> None:
        self._lore = lore
        self._grace_s = grace_s
        self._context = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()  # the pipes and the process change on a restart
        self._stopping = threading.Event()
        self.restarts = 0

    def _spawn(self) -> None:
        owner = self._lore.store_process
        child_store: Connection | StoreAddress
        self._store_pipe: Connection | None = None
        self._server: StoreServer | None = None
        if owner is not None:  # the job process calls the store process itself
            child_store = owner.address
        else:  # it calls this process, which serves it the store
            self._store_pipe, far = self._context.Pipe()
            child_store, self._server = far, StoreServer(self._lore.store, self._store_pipe)
        self._control, child_control = self._context.Pipe()
        self._process = self._context.Process(
            target=_main,
            args=(self._lore.settings.model_dump(), child_store, child_control, _log_level()),
            name="lore-jobs",
            daemon=True,
        )
        self._process.start()
        child_control.close()  # the child holds it now: its death closes the pipe here
        if self._server is not None:
            far.close()  # the child holds its end now
            self._server.start()
        log.info("job process %s started (nice +%d)", self._process.pid, NICENESS)

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def health(self) -> JobsHealth:
        return JobsHealth("process", self._process.is_alive(), self.restarts, self._process.pid)

    def start(self) -> None:
        self._spawn()
        threading.Thread(target=self._watch, name="lore-jobs-watch", daemon=True).start()

    def _watch(self) -> None:
        """Start the job process again when it dies before `stop` (`retrieval.supervise`)."""
        supervise("job process", lambda: self._process, self._stopping, self._restart)

    def _restart(self) -> None:
        with self._lock:
            if self._stopping.is_set():
                return
            self._control.close()
            if self._store_pipe is not None:
                self._store_pipe.close()
            dead = self._process
            self.restarts += 1
            try:
                self._spawn()
            except Exception:
                self._process = dead  # joined at once: the next try waits longer
                raise

    def submit(self, job_id: str) -> None:
        try:
            with self._lock:
                self._control.send(("submit", job_id))
        except OSError:  # the job process is gone; it finds the job when it starts again
            log.warning("job %s queued, but the job process is not running", job_id)

    async def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            process = self._process
        if process.is_alive():
            with contextlib.suppress(OSError):
                self._control.send(("stop", None))
            await asyncio.to_thread(process.join, self._grace_s)
        if process.is_alive():
            log.warning("job process did not stop within %.0f s: killed", self._grace_s)
            process.kill()
            await asyncio.to_thread(process.join, 5)
        self._control.close()
        if self._store_pipe is not None:
            self._store_pipe.close()


def _log_level() -> int:
    return logging.getLogger().getEffectiveLevel()


def _main(
    settings: dict[str, Any],
    store: Connection | StoreAddress,
    control: Connection,
    log_level: int,
) -> None:
    """The job process: a `JobWorker` over a `Lore` whose store is the parent's, or the store
    process's at `store`."""
    # Ctrl-C reaches the whole process group: the parent decides when the jobs stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(NICENESS)
    lean_child()
    config = Settings(**settings)
    configure_logging(log_level, config.log_format, "jobs")
    stop_tracing = configure_tracing(config.tracing, "jobs")
    remote = RemoteStore(store) if isinstance(store, Connection) else store.store()
    lore = Lore(config, store=remote)
    try:
        asyncio.run(_serve(lore, control, stop_tracing))  # ends the process itself when it stops
    finally:  # reached only when it failed first
        lore.close()


async def _serve(lore: Lore, control: Connection, stop_tracing: Callable[[], None]) -> None:
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    settings = lore.settings
    worker = JobWorker(lore, settings.workers, run_job, settings.job_claim_ttl_s)

    def read() -> None:
        while True:
            try:
                kind, job_id = control.recv()
            except (EOFError, OSError):  # the parent is gone
                kind, job_id = "stop", None
            if kind == "stop":
                loop.call_soon_threadsafe(stopping.set)
                return
            loop.call_soon_threadsafe(worker.submit, job_id)

    worker.start()
    threading.Thread(target=read, name="lore-jobs-control", daemon=True).start()
    await stopping.wait()
    stop = asyncio.ensure_future(worker.stop())
    await asyncio.wait({stop}, timeout=STOP_S)
    if not stop.done():  # a crawl that does not let go: its pages stay pending
        log.warning("jobs did not stop within %.0f s; they resume at the next start", STOP_S)
    lore.catalog.release_jobs(worker.owner)  # whatever still runs ends with this process
    lore.close()
    stop_tracing()  # the last spans are sent
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    # Not asyncio's own shutdown: it would wait for whatever task does not let go.
    os._exit(0)
