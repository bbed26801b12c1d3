"""What every kind of job shares: running it to its end, progress on the job row, how it ended,
and the completion webhook (sent once). A kind writes one `JobRunner` subclass with `work()`
and registers it in `api.jobs.RUNNERS`."""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import httpx
from opentelemetry import trace

from api.auth import domain_allowed
from crawl import FetchError, FetchOptions, check_address
from retrieval import Job, NotFoundError, utcnow

if TYPE_CHECKING:
    from api.service import Lore

log = logging.getLogger(__name__)
tracer = trace.get_tracer("lore.jobs")  # spans go nowhere unless tracing is configured

PROGRESS_EVERY_S = 0.25  # job row writes while a job runs, at most


@dataclass(frozen=True)
class Outcome:
    status: str  # completed | failed | cancelled
    counts: dict[str, int]
    error: str | None = None
    message: str = ""


class JobRunner(ABC):
    """Runs (or resumes) one job to its end and records how it ended."""

    kind: ClassVar[str]

    def __init__(
        self,
        lore: Lore,
        job_id: str,
        on_progress: Callable[[Job], None] | None = None,
        interrupted: Callable[[], bool] = lambda: False,
    ) -> None:
        """`interrupted()`: the runner's process is stopping; the job stops at the next page
        and is left unfinished, to be resumed."""
        self.lore = lore
        self.job = lore.catalog.get_job(job_id)
        self._on_progress = on_progress
        self._interrupted = interrupted
        self._last_write = 0.0
        self._cancelled = False

    @abstractmethod
    async def work(self) -> Outcome:
        """Do the job; a crash is recorded as `failed` with the error."""

    def counts(self) -> dict[str, int]:
        """The counts so far (recorded when `work` crashes)."""
        return dict(self.job.counts)

    async def run(self) -> Job:
        if self.job.finished:
            return self.job
        if self.job.status != "running":
            self.job = self.lore.catalog.update_job(
                self.job.id, status="running", started_at=utcnow(), message=self.starting()
            )
        try:
            with tracer.start_as_current_span(
                f"job {self.kind}", attributes={"lore.job_id": self.job.id}
            ):
                outcome = await self.work()
        except Exception as exc:
            if self.interrupted():
                return self.lore.catalog.get_job(self.job.id)
            log.exception("%s job %s crashed", self.kind, self.job.id)
            outcome = Outcome("failed", self.counts(), f"internal error: {exc}", "failed")
        if self.interrupted():  # stopped, not finished: the next runner resumes it
            log.info("%s job %s interrupted; it resumes at the next start", self.kind, self.job.id)
            return self.lore.catalog.get_job(self.job.id)
        job = self.lore.catalog.update_job(
            self.job.id,
            status=outcome.status,
            counts=outcome.counts,
            error=outcome.error,
            message=outcome.message or outcome.status,
            progress=1.0,
            finished_at=utcnow(),
        )
        try:
            return await notify(self.lore, job)
        finally:
            self.lore.catalog.forget_secrets(job.id)  # a login is kept no longer than its job

    def starting(self) -> str:
        return f"running {self.kind}"

    def interrupted(self) -> bool:
        """Whether this runner's process is stopping (or its task was cancelled)."""
        task = asyncio.current_task()
        return self._interrupted() or (task is not None and task.cancelling() > 0)

    def cancelled(self) -> bool:
        """Whether the job was cancelled (asked of the catalog until it says so)."""
        if not self._cancelled:
            self._cancelled = self.lore.catalog.get_job(self.job.id).status == "cancelled"
        return self._cancelled

    def progress(
        self, counts: dict[str, int], message: str, done: float | None = None, force: bool = False
    ) -> None:
        """Record progress on the job row (at most every `PROGRESS_EVERY_S` unless forced)."""
        now = time.monotonic()
        if not force and now - self._last_write < PROGRESS_EVERY_S:
            return
        self._last_write = now
        changes: dict[str, Any] = {"counts": counts, "message": message}
        if done is not None:
            changes["progress"] = round(done, 4)
        job = self.lore.catalog.update_job(self.job.id, **changes)
        if self._on_progress is not None:
            self._on_progress(job)


@dataclass(frozen=True)
class Webhook:
    url: str
    headers: dict[str, str]


def job_payload(job: Job) -> dict[str, Any]:
    return {
        "jobId": job.id,
        "status": job.status,
        "counts": job.counts,
        "error": job.error,
        "url": job.request.get("url"),
        "finishedAt": job.finished_at.isoformat() if job.finished_at else None,
    }


async def notify(lore: Lore, job: Job) -> Job:
    """POST the finished job to its webhook, if it has one, once: the first runner to record
    the notification sends it (a job resumed after a crash that had sent it does not)."""
    hook = job.request.get("webhook")
    if not hook or not lore.catalog.mark_notified(job.id):
        return job
    host = urlsplit(str(hook["url"])).hostname or ""
    try:
        allowed = domain_allowed(lore.catalog.get_tenant(job.tenant_id), host)
    except NotFoundError:  # no keys, no tenant row: the open embedded setup
        allowed = True
    if not allowed:  # the tenant's domains changed since the job was queued
        log.warning("webhook of job %s not sent: %s is not in its allowedDomains", job.id, host)
        return lore.catalog.update_job(
            job.id, message=f"{job.message}; webhook not sent: {host} is not in allowedDomains"
        )
    headers = hook.get("headers")  # names; the values are kept apart (older jobs: both)
    if not isinstance(headers, dict):
        headers = lore.catalog.secrets(job.id).get("webhookHeaders") or {}
    delivered = await deliver_webhook(
        Webhook(str(hook["url"]), dict(headers)),
        job_payload(job),
        lore.fetch_options,
        lore.settings.crawl.webhook_attempts,
        lore.settings.crawl.webhook_backoff_s,
    )
    return lore.catalog.update_job(
        job.id, message=f"{job.message}; webhook {'delivered' if delivered else 'failed'}"
    )


async def deliver_webhook(
    hook: Webhook, payload: dict[str, Any], fetch: FetchOptions, attempts: int, backoff_s: float
) -> bool:
    """POST the payload; a network error or a non-2xx answer is retried with doubling delays."""
    delay = backoff_s
    for attempt in range(1, attempts + 1):
        try:
            await check_address(hook.url, fetch)
            async with httpx.AsyncClient(timeout=fetch.timeout_s) as client:
                response = await client.post(hook.url, json=payload, headers=hook.headers)
            if response.is_success:
                log.info("webhook %s delivered (attempt %d)", hook.url, attempt)
                return True
            why = f"HTTP {response.status_code}"
        except (httpx.HTTPError, FetchError) as exc:
            why = str(exc)
        log.warning("webhook %s attempt %d/%d failed: %s", hook.url, attempt, attempts, why)
        if attempt < attempts:
            await asyncio.sleep(delay)
            delay *= 2
    return False
