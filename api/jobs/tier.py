"""The worker tier: `lore worker` processes, on any number of machines, sharing the catalog
(PostgreSQL), the vector store (a Qdrant server) and the queue engine (RabbitMQ) with the API
instances, which only record jobs.

Each worker runs jobs it claims in the catalog (an index-link job's runner fetches, follows
links and queues the pages; an SPA capture runs whole) and stores the pages of any job that it
takes from the queue. SIGTERM or Ctrl-C: it stops taking work, pages being stored get
`PAGE_GRACE_S` to finish, jobs stop at their next page and are released to another worker,
and the pages it took but did not finish go back to the queue."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
from typing import Any

from api.jobs.link import store_page
from api.jobs.pages import PageQueue, message_page, page_queue
from api.jobs.registry import run_job
from api.jobs.worker import JobsHealth, JobWorker
from api.observe import configure_tracing
from api.service import Lore
from api.settings import Settings
from crawl import Page, PageResult
from retrieval import NotFoundError, bytes_hash

log = logging.getLogger(__name__)

# A page's URL is queued once the broker has it; a worker may take it a moment before that.
WAITING = ("pending", "queued")
PAGE_GRACE_S = 3.0  # pages being stored, and jobs, get this long to stop
STOP_S = 7.0  # then the worker exits whatever still runs (container runtimes allow 10 s)


class WorkerTier:
    """The API's side when `lore worker`s run the jobs: a job is a catalog row that the workers
    look for every `queue.poll_s`; the API holds no job state and runs nothing."""

    def start(self) -> None:
        pass

    def health(self) -> JobsHealth:
        return JobsHealth("workers", True)

    def submit(self, job_id: str) -> None:
        pass

    async def stop(self) -> None:
        pass


def store_queued_page(lore: Lore, message: dict[str, Any]) -> None:
    """Store one page taken from the queue and record its outcome; raises when it could not
    (the page is tried again later, and recorded as failed by `give_up` after its last try)."""
    job_id, url = message["job"], message["url"]
    entry = lore.catalog.get_crawl_url(job_id, url)
    if entry is None or entry.state not in WAITING:  # done by an earlier delivery
        return
    try:
        job = lore.catalog.get_job(job_id)
    except NotFoundError:  # deleted with its job
        return
    if job.status == "cancelled":
        lore.catalog.set_crawl_url(
            job_id, url, when_state=WAITING, state="skipped", reason="cancelled"
        )
        return
    page = message_page(message)
    result = store_page(lore, job, page)
    record(lore, job_id, url, result, page)


def record(lore: Lore, job_id: str, url: str, result: PageResult, page: Page | None) -> None:
    """A page's outcome, unless an earlier delivery recorded one."""
    lore.catalog.set_crawl_url(
        job_id,
        url,
        when_state=WAITING,
        state=result.state,
        reason=result.reason,
        document_id=result.document_id,
        chunks=result.chunks,
        embedded=result.embedded,
        **({"status_code": page.status, "content_hash": bytes_hash(page.body)} if page else {}),
    )


def give_up(lore: Lore, message: dict[str, Any], why: BaseException) -> None:
    """A page that failed on its last attempt (an error, its time limit, a message that cannot
    be read) is recorded as failed, so that its job can finish."""
    log.error("page %s of job %s failed on its last attempt: %r", message.get("url"),
              message.get("job"), why)  # fmt: skip
    try:
        failed = PageResult("failed", f"error: {type(why).__name__}: {why}"[:500])
        record(lore, str(message["job"]), str(message["url"]), failed, None)
    except Exception:
        log.exception("the failure of page %s could not be recorded", message.get("url"))


def run_worker(settings: Settings, threads: int) -> None:
    """Run until SIGTERM or SIGINT."""
    queue = page_queue(settings)
    if queue is None:
        raise ValueError("lore worker takes its work from a queue engine: set LORE_QUEUE__URL")
    stop_tracing = configure_tracing(settings.tracing, "worker")
    lore = Lore(settings)
    try:
        asyncio.run(_serve(lore, queue, threads))
    finally:
        stop_tracing()


async def _serve(lore: Lore, queue: PageQueue, threads: int) -> None:
    settings = lore.settings
    jobs = JobWorker(
        lore, settings.workers, run_job, settings.job_claim_ttl_s, poll_s=settings.queue.poll_s
    )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    jobs.start()
    queue.consume(
        functools.partial(store_queued_page, lore), functools.partial(give_up, lore), threads
    )
    log.info(
        "lore worker %d: jobs from the catalog, pages from queue %r (%d threads)",
        os.getpid(),
        queue.name,
        threads,
    )
    await stopping.wait()
    log.info("lore worker %d stopping", os.getpid())
    # The job runners stop at their next page while the page threads finish theirs; the
    # queue closes after the runners stopped sending. Whatever is still running after
    # STOP_S (a task that does not let go) ends with the process: its pages go back to the
    # queue, its jobs to the next worker.
    try:
        await asyncio.wait_for(
            asyncio.gather(
                loop.run_in_executor(None, queue.stop_consuming, PAGE_GRACE_S),
                jobs.stop(grace_s=PAGE_GRACE_S),
            ),
            STOP_S,
        )
    except TimeoutError:
        log.warning("lore worker %d: work still running after %.0f s ends with it", os.getpid(),
                    STOP_S)  # fmt: skip
    queue.close()
    lore.close()
    logging.shutdown()
    os._exit(0)  # tasks and threads that did not stop are not waited for
