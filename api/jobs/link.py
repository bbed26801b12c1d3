"""index-link jobs: a `SiteCrawl` (crawl/) joined to ingestion (ingest/) through a page sink;
pages that disappeared are removed after a healthy crawl."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio.to_thread

from api.errors import status_for
from api.jobs.base import JobRunner, Outcome
from api.jobs.pages import PageQueue, page_message, page_queue
from crawl import CrawlOptions, CrawlSpec, Credentials, Page, PageResult, SiteCrawl
from ingest import IngestError, PreparedDocument, SourceDocument
from retrieval import CrawlUrl, Document, Job, NotFoundError, bytes_hash, document_id

if TYPE_CHECKING:
    from api.service import Lore

log = logging.getLogger(__name__)

DRAIN_POLL_S = 0.5  # how often a crawl waiting for its queued pages asks the catalog

# Failures that say the page is gone; other failures (timeouts, 5xx) say nothing about it.
GONE = frozenset({"http_404", "http_410"})


def crawl_spec(request: dict[str, Any], secrets: dict[str, Any] | None = None) -> CrawlSpec:
    """The crawl a job's request asks for; `secrets`: its login headers and cookies."""
    secrets = secrets or {}
    urls = [str(u) for u in request.get("urls") or [request["url"]]]
    return CrawlSpec(
        url=urls[0],
        more_urls=tuple(urls[1:]),
        credentials=Credentials(
            headers=dict(secrets.get("headers") or {}), cookies=dict(secrets.get("cookies") or {})
        ),
        strategy=request.get("strategy", "single"),
        max_pages=int(request.get("maxPages", 1)),
        max_depth=int(request.get("maxDepth", 0)),
        include=tuple(request.get("include") or ()),
        exclude=tuple(request.get("exclude") or ()),
        allow_subdomains=bool(request.get("allowSubdomains", False)),
        render=request.get("render", "http"),
        map_only=bool(request.get("map", False)),
    )


def stored_document(lore: Lore, tenant: str, url: str) -> Document | None:
    try:
        return lore.catalog.get_document(tenant, document_id(tenant, url))
    except NotFoundError:
        return None


def unchanged(lore: Lore, job: Job, page: Page) -> PageResult | None:
    """The result for a page whose body has not changed since it was stored (304, or the same
    bytes) with the same metadata: it costs no extraction and no embedding. None: the page must
    be stored."""
    doc = stored_document(lore, job.tenant_id, page.url)
    if doc is not None and doc.metadata != job_metadata(job) and page.status != 304:
        return None  # the same page, new metadata: stored again (its chunks carry it)
    if doc is not None and (page.status == 304 or doc.body_hash == bytes_hash(page.body)):
        if page.status == 304:
            links = lore.catalog.document_links(job.tenant_id, doc.id)
            return PageResult("unchanged", "not_modified", doc.id, doc.chunk_count, links=links)
        return PageResult("unchanged", "same_content", doc.id, doc.chunk_count)
    if page.status == 304:  # validators of a document deleted since: fetch it whole next time
        return PageResult("failed", "not_modified_but_not_stored")
    return None


def job_metadata(job: Job) -> dict[str, str]:
    return dict(job.request.get("metadata") or {})


def page_document(job: Job, page: Page) -> SourceDocument:
    return SourceDocument(
        tenant_id=job.tenant_id,
        data=page.body,
        url=page.url,
        source="link",
        source_id=job.id,
        content_type=page.content_type,
        fetched_at=page.fetched_at,
        last_modified=page.headers.get("last-modified"),
        etag=page.headers.get("etag"),
        filename=urlsplit(page.final_url).path,
        metadata=job_metadata(job),
    )


def index_page(lore: Lore, job: Job, page: Page, prepared: PreparedDocument) -> PageResult:
    """Embed and store an extracted page, and keep its links (blocking)."""
    try:
        [result] = lore.index([prepared])
    except IngestError as exc:
        return failed_page(exc)
    lore.catalog.set_document_links(job.tenant_id, result.document.id, page.links)
    return PageResult("ingested", "", result.document.id, result.chunks, embedded=result.embedded)


def failed_page(exc: IngestError) -> PageResult:
    return PageResult("failed", f"{status_for(exc)[1]}: {exc}")


def store_page(lore: Lore, job: Job, page: Page) -> PageResult:
    """Extract, chunk, embed and store a fetched page for the job's tenant (blocking)."""
    try:
        prepared = lore.prepare(page_document(job, page))
    except IngestError as exc:
        return failed_page(exc)
    return index_page(lore, job, page, prepared)


class IngestSink:
    """Turns fetched pages into chunks for one tenant, in this process."""

    def __init__(self, lore: Lore, job: Job) -> None:
        self._lore = lore
        self._job = job
        self._index_lock = asyncio.Lock()  # one page at a time: embedding is CPU-bound
        # One page extracted at a time too, beside the embedding: extraction holds the GIL, so
        # more at once gained nothing but memory (a docs site's first pages are its indexes,
        # megabytes of HTML each, and their trees all at once were a crawl's peak).
        self._prepare_lock = asyncio.Lock()

    async def conditional_headers(self, url: str) -> dict[str, str]:
        doc = stored_document(self._lore, self._job.tenant_id, url)
        headers: dict[str, str] = {}
        if doc is None or doc.metadata != job_metadata(self._job):  # to be stored whole
            return headers
        if doc.etag:
            headers["If-None-Match"] = doc.etag
        if doc.http_last_modified:
            headers["If-Modified-Since"] = doc.http_last_modified
        return headers

    async def __call__(self, page: Page) -> PageResult:
        if (same := unchanged(self._lore, self._job, page)) is not None:
            return same
        # Extraction runs beside another page's embedding; one page is embedded at a time.
        try:
            async with self._prepare_lock:
                prepared = await anyio.to_thread.run_sync(
                    self._lore.prepare, page_document(self._job, page)
                )
        except IngestError as exc:
            return failed_page(exc)
        async with self._index_lock:
            return await anyio.to_thread.run_sync(index_page, self._lore, self._job, page, prepared)


class QueueSink(IngestSink):
    """Hands each changed page to the `lore worker`s on the queue engine (`queued`); the worker
    that stores it records what became of it."""

    def __init__(self, lore: Lore, job: Job, queue: PageQueue) -> None:
        super().__init__(lore, job)
        self._queue = queue

    async def __call__(self, page: Page) -> PageResult:
        if (same := unchanged(self._lore, self._job, page)) is not None:
            return same
        await self._queue.send(page_message(self._job.id, page))
        # Queued once the broker has it; unless a worker was quicker and recorded it already.
        self._lore.catalog.set_crawl_url(
            self._job.id,
            page.url,
            when_state=("pending",),
            state="queued",
            status_code=page.status,
            content_hash=bytes_hash(page.body),
        )
        return PageResult("queued")


class LinkJobRunner(JobRunner):
    """An index-link job: a `SiteCrawl` into an `IngestSink`, and the documents of earlier
    crawls that this one did not find removed after a healthy, exhaustive crawl."""

    kind = "index-link"
    _crawl: SiteCrawl | None = None  # while `work` runs

    def options(self) -> CrawlOptions:
        crawl = self.lore.settings.crawl
        return CrawlOptions(
            fetch=self.lore.fetch_options,
            respect_robots=crawl.respect_robots,
            max_concurrency=crawl.max_concurrency,
            per_host_concurrency=crawl.per_host_concurrency,
            per_host_delay_s=crawl.per_host_delay_s,
            max_urls=crawl.max_urls_per_job,
            retries=crawl.retries,
            browser=self.lore.browser_options,
        )

    def starting(self) -> str:
        return f"crawling {self.job.request['url']}"

    def counts(self) -> dict[str, int]:
        return self._crawl.counts() if self._crawl is not None else super().counts()

    def _progress(self, counts: dict[str, int]) -> None:
        total = counts["discovered"] - counts["skipped"]
        done = total - counts["pending"] - counts["queued"]
        self.progress(counts, f"{done} of {total} URLs done", done / total if total else 0.0)

    async def work(self) -> Outcome:
        spec = crawl_spec(self.job.request, self.lore.catalog.secrets(self.job.id))
        with contextlib.suppress(NotFoundError):  # a tenant without keys: the operator's own
            tenant = self.lore.catalog.get_tenant(self.job.tenant_id)
            spec = replace(spec, allowed_hosts=tenant.allowed_domains)
        queue = page_queue(self.lore.settings)
        sink = (
            IngestSink(self.lore, self.job)
            if queue is None
            else QueueSink(self.lore, self.job, queue)
        )
        self._crawl = crawl = SiteCrawl(
            self.job.id,
            spec,
            self.options(),
            self.lore.catalog,
            sink,
            cancelled=self.cancelled,
            progress=self._progress,
            interrupted=self.interrupted,
        )
        summary = await crawl.run()
        if queue is not None:
            await self._drain(crawl)
        counts = crawl.counts()
        if self.interrupted():  # not an outcome: `run` leaves the job to be resumed
            return Outcome("running", counts)
        if summary.cancelled or self.cancelled():
            return Outcome("cancelled", counts, None, "cancelled")
        attempted = counts["ingested"] + counts["unchanged"] + counts["failed"]
        removed = 0
        healthy = attempted > 0 and counts["failed"] <= attempted * (
            self.lore.settings.crawl.healthy_share
        )
        note = ""
        if spec.strategy != "single" and not spec.map_only:
            if healthy and summary.exhaustive and self._reached_a_start(crawl.spec):
                removed = self._remove_disappeared(crawl)
            else:
                note = (
                    " (nothing removed: the crawl was limited, mostly failed, or its start "
                    "page answered with another page, e.g. a sign-in form)"
                )
        counts = {**crawl.counts(), "removed": removed}
        if counts["ingested"] + counts["unchanged"] + counts["listed"] == 0:
            failures = self.lore.catalog.crawl_urls(self.job.id, states=("failed", "skipped"))
            why = "; ".join(f"{u.reason}: {u.url}" for u in failures[:3]) or "nothing fetched"
            return Outcome("failed", counts, why, "failed")
        message = (
            f"{counts['ingested']} ingested, {counts['unchanged']} unchanged, "
            f"{counts['skipped']} skipped, {counts['failed']} failed, {removed} removed{note}"
        )
        return Outcome("completed", counts, None, message)

    async def _drain(self, crawl: SiteCrawl) -> None:
        """Wait until the workers have stored (or failed) every page this crawl queued; a page
        of a cancelled job is skipped by the worker that takes it."""
        while not self.interrupted():
            if self.cancelled():  # not worth waiting for the queue to reach them
                for entry in self.lore.catalog.crawl_urls(self.job.id, states=("queued",)):
                    self.lore.catalog.set_crawl_url(
                        self.job.id, entry.url, when_state=("queued",), state="skipped",
                        reason="cancelled",
                    )  # fmt: skip
                return
            counts = crawl.counts()
            if not counts["queued"]:
                return
            self._progress(counts)
            await asyncio.sleep(DRAIN_POLL_S)

    def _reached_a_start(self, spec: CrawlSpec) -> bool:
        """Whether a spider's start URL came back as itself: one that redirected elsewhere (a
        sign-in form once a session expired) hid the site, and its pages must not count as
        gone. (A sitemap crawl starts from the sitemap, which answered.)"""
        if spec.strategy != "spider":
            return True
        entries = (self.lore.catalog.get_crawl_url(self.job.id, url) for url in spec.starts())
        return any(e is not None and e.state in ("ingested", "unchanged") for e in entries)

    def _remove_disappeared(self, crawl: SiteCrawl) -> int:
        """Delete the documents of earlier crawls of this site that this crawl did not find."""
        job = self.job
        start = urlsplit(crawl.scope.start_url)
        one_site = not crawl.scope.allow_subdomains and len(crawl.scope.hosts) == 1
        prefix = f"{start.scheme}://{start.netloc}/" if one_site else ""
        # A page that answered with another page (a redirect to a login form once a session
        # expired, a duplicate) is still there: only a page that is gone is removed.
        present = {
            u.url
            for u in self.lore.catalog.crawl_urls(job.id)
            if u.state in ("ingested", "unchanged")
            or (u.state == "failed" and u.reason not in GONE)
            or (u.state == "skipped" and u.reason.startswith(("stored_as:", "duplicate:")))
        }
        gone = [
            doc
            for doc in self.lore.catalog.documents_by_source(job.tenant_id, "link", prefix)
            if doc.url not in present and crawl.scope.reason_out(doc.url) is None
        ]
        for doc in gone:
            self.lore.indexer.delete(job.tenant_id, doc.id)
            if not self.lore.catalog.add_crawl_urls(job.id, [CrawlUrl(doc.url, 0, "removed")]):
                self.lore.catalog.set_crawl_url(job.id, doc.url, state="removed")
        return len(gone)
