"""index-link jobs: a `SiteCrawl` (crawl/) joined to ingestion (ingest/) through a page sink, the
job row kept up to date, pages that disappeared removed after a healthy crawl, and the optional
completion webhook."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio.to_thread
import httpx

from api.errors import status_for
from crawl import (
    CrawlOptions,
    CrawlSpec,
    CrawlSummary,
    FetchError,
    Page,
    PageResult,
    SiteCrawl,
    check_address,
)
from ingest import IngestError, SourceDocument
from retrieval import CrawlUrl, Document, Job, NotFoundError, bytes_hash, document_id, utcnow

if TYPE_CHECKING:
    from api.service import Lore

log = logging.getLogger(__name__)

# Failures that say the page is gone; other failures (timeouts, 5xx) say nothing about it.
GONE = frozenset({"http_404", "http_410"})


def crawl_spec(request: dict[str, Any]) -> CrawlSpec:
    return CrawlSpec(
        url=str(request["url"]),
        strategy=request.get("strategy", "single"),
        max_pages=int(request.get("maxPages", 1)),
        max_depth=int(request.get("maxDepth", 0)),
        include=tuple(request.get("include") or ()),
        exclude=tuple(request.get("exclude") or ()),
        allow_subdomains=bool(request.get("allowSubdomains", False)),
        render=request.get("render", "http"),
        map_only=bool(request.get("map", False)),
    )


class IngestSink:
    """Turns fetched pages into chunks for one tenant; a page whose body is unchanged since it
    was stored (304, or the same bytes) costs no extraction and no embedding."""

    def __init__(self, lore: Lore, job: Job) -> None:
        self._lore = lore
        self._job = job
        self._index_lock = asyncio.Lock()  # one writer to the store; embedding is CPU-bound

    def _stored(self, url: str) -> Document | None:
        try:
            return self._lore.catalog.get_document(
                self._job.tenant_id, document_id(self._job.tenant_id, url)
            )
        except NotFoundError:
            return None

    async def conditional_headers(self, url: str) -> dict[str, str]:
        doc = self._stored(url)
        headers = {}
        if doc is not None and doc.etag:
            headers["If-None-Match"] = doc.etag
        if doc is not None and doc.http_last_modified:
            headers["If-Modified-Since"] = doc.http_last_modified
        return headers

    async def __call__(self, page: Page) -> PageResult:
        tenant = self._job.tenant_id
        doc = self._stored(page.url)
        if doc is not None and (page.status == 304 or doc.body_hash == bytes_hash(page.body)):
            if page.status == 304:
                links = self._lore.catalog.document_links(tenant, doc.id)
                return PageResult("unchanged", "not_modified", doc.id, doc.chunk_count, links=links)
            return PageResult("unchanged", "same_content", doc.id, doc.chunk_count)
        if page.status == 304:  # validators of a document deleted since: fetch it whole next time
            return PageResult("failed", "not_modified_but_not_stored")
        source = SourceDocument(
            tenant_id=tenant,
            data=page.body,
            url=page.url,
            source="link",
            source_id=self._job.id,
            content_type=page.content_type,
            fetched_at=page.fetched_at,
            last_modified=page.headers.get("last-modified"),
            etag=page.headers.get("etag"),
            filename=urlsplit(page.final_url).path,
        )
        try:
            prepared = await anyio.to_thread.run_sync(self._lore.prepare, source)
            async with self._index_lock:
                [result] = await anyio.to_thread.run_sync(self._lore.index, [prepared])
        except IngestError as exc:
            return PageResult("failed", f"{status_for(exc)[1]}: {exc}")
        self._lore.catalog.set_document_links(tenant, result.document.id, page.links)
        return PageResult(
            "ingested", "", result.document.id, result.chunks, embedded=result.embedded
        )


@dataclass(frozen=True)
class Webhook:
    url: str
    headers: dict[str, str]


class LinkJobRunner:
    """Runs (or resumes) one index-link job to its end and records how it ended."""

    def __init__(self, lore: Lore, job_id: str, on_progress: Callable[[Job], None] | None = None):
        self._lore = lore
        self._job = lore.catalog.get_job(job_id)
        self._on_progress = on_progress
        self._last_write = 0.0
        self._cancelled = False

    def options(self) -> CrawlOptions:
        crawl = self._lore.settings.crawl
        return CrawlOptions(
            fetch=self._lore.fetch_options,
            respect_robots=crawl.respect_robots,
            max_concurrency=crawl.max_concurrency,
            per_host_concurrency=crawl.per_host_concurrency,
            per_host_delay_s=crawl.per_host_delay_s,
            max_urls=crawl.max_urls_per_job,
            retries=crawl.retries,
            browser=self._lore.browser_options,
        )

    def _is_cancelled(self) -> bool:
        if not self._cancelled:
            self._cancelled = self._lore.catalog.get_job(self._job.id).status == "cancelled"
        return self._cancelled

    def _progress(self, counts: dict[str, int]) -> None:
        now = time.monotonic()
        if now - self._last_write < 0.25:
            return
        self._last_write = now
        total = counts["discovered"] - counts["skipped"]
        done = total - counts["pending"]
        job = self._lore.catalog.update_job(
            self._job.id,
            counts=counts,
            progress=round(done / total, 4) if total else 0.0,
            message=f"{done} of {total} URLs done",
        )
        if self._on_progress is not None:
            self._on_progress(job)

    async def run(self) -> Job:
        job = self._job
        spec = crawl_spec(job.request)
        with contextlib.suppress(NotFoundError):  # a tenant without keys: the operator's own
            tenant = self._lore.catalog.get_tenant(job.tenant_id)
            spec = replace(spec, allowed_hosts=tenant.allowed_domains)
        if job.status != "running":
            job = self._lore.catalog.update_job(
                job.id, status="running", started_at=utcnow(), message=f"crawling {spec.url}"
            )
        crawl = SiteCrawl(
            job.id,
            spec,
            self.options(),
            self._lore.catalog,
            IngestSink(self._lore, job),
            cancelled=self._is_cancelled,
            progress=self._progress,
        )
        try:
            summary = await crawl.run()
        except Exception as exc:
            log.exception("index-link job %s crashed", job.id)
            finished = self._finish("failed", crawl.counts(), error=f"internal error: {exc}")
        else:
            finished = self._finish(*self._outcome(spec, summary, crawl))
        await self._notify(finished)
        return finished

    def _outcome(
        self, spec: CrawlSpec, summary: CrawlSummary, crawl: SiteCrawl
    ) -> tuple[str, dict[str, int], str | None, str]:
        counts = summary.counts
        if summary.cancelled or self._is_cancelled():
            return "cancelled", counts, None, "cancelled"
        attempted = counts["ingested"] + counts["unchanged"] + counts["failed"]
        removed = 0
        healthy = attempted > 0 and counts["failed"] <= attempted * (
            self._lore.settings.crawl.healthy_share
        )
        note = ""
        if spec.strategy != "single" and not spec.map_only:
            if healthy and summary.exhaustive:
                removed = self._remove_disappeared(crawl)
            else:
                note = " (nothing removed: the crawl was limited or mostly failed)"
        counts = {**crawl.counts(), "removed": removed}
        if counts["ingested"] + counts["unchanged"] + counts["listed"] == 0:
            failures = self._lore.catalog.crawl_urls(self._job.id, states=("failed", "skipped"))
            why = "; ".join(f"{u.reason}: {u.url}" for u in failures[:3]) or "nothing fetched"
            return "failed", counts, why, "failed"
        message = (
            f"{counts['ingested']} ingested, {counts['unchanged']} unchanged, "
            f"{counts['skipped']} skipped, {counts['failed']} failed, {removed} removed{note}"
        )
        return "completed", counts, None, message

    def _remove_disappeared(self, crawl: SiteCrawl) -> int:
        """Delete the documents of earlier crawls of this site that this crawl did not find."""
        job = self._job
        start = urlsplit(crawl.scope.start_url)
        prefix = "" if crawl.scope.allow_subdomains else f"{start.scheme}://{start.netloc}/"
        present = {
            u.url
            for u in self._lore.catalog.crawl_urls(job.id)
            if u.state in ("ingested", "unchanged")
            or (u.state == "failed" and u.reason not in GONE)
        }
        gone = [
            doc
            for doc in self._lore.catalog.documents_by_source(job.tenant_id, "link", prefix)
            if doc.url not in present and crawl.scope.reason_out(doc.url) is None
        ]
        for doc in gone:
            self._lore.indexer.delete(job.tenant_id, doc.id)
            if not self._lore.catalog.add_crawl_urls(job.id, [CrawlUrl(doc.url, 0, "removed")]):
                self._lore.catalog.set_crawl_url(job.id, doc.url, state="removed")
        return len(gone)

    def _finish(
        self, status: str, counts: dict[str, int], error: str | None, message: str = ""
    ) -> Job:
        return finish_job(self._lore, self._job.id, status, counts, error, message)

    async def _notify(self, job: Job) -> None:
        hook = job.request.get("webhook")
        if not hook:
            return
        webhook = Webhook(str(hook["url"]), dict(hook.get("headers") or {}))
        delivered = await deliver_webhook(
            webhook,
            job_payload(job),
            self._lore.fetch_options,
            self._lore.settings.crawl.webhook_attempts,
            self._lore.settings.crawl.webhook_backoff_s,
        )
        self._lore.catalog.update_job(
            job.id, message=f"{job.message}; webhook {'delivered' if delivered else 'failed'}"
        )


def finish_job(
    lore: Lore, job_id: str, status: str, counts: dict[str, int], error: str | None, message: str
) -> Job:
    """Record how a job ended (any kind of job)."""
    return lore.catalog.update_job(
        job_id,
        status=status,
        counts=counts,
        error=error,
        message=message or status,
        progress=1.0,
        finished_at=utcnow(),
    )


def job_payload(job: Job) -> dict[str, Any]:
    return {
        "jobId": job.id,
        "status": job.status,
        "counts": job.counts,
        "error": job.error,
        "url": job.request.get("url"),
        "finishedAt": job.finished_at.isoformat() if job.finished_at else None,
    }


async def deliver_webhook(
    hook: Webhook, payload: dict[str, Any], fetch: Any, attempts: int, backoff_s: float
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
