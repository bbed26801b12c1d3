"""One crawl job on crawlee: seed (single, sitemap, spider), fetch politely and safely, follow
links in scope, and record every URL's outcome in the catalog, so that a job interrupted at any
point resumes from what the catalog says is still pending.

The caller supplies a `PageSink` that turns a fetched page into stored knowledge (the api layer
joins crawl and ingest through it) and says whether the page was new, changed or unchanged."""

from __future__ import annotations

import contextlib
import logging
import math
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup
from crawlee import ConcurrencySettings, Request, service_locator
from crawlee._service_locator import ServiceLocator
from crawlee.configuration import Configuration
from crawlee.crawlers import (
    BasicCrawlingContext,
    BeautifulSoupCrawler,
    BeautifulSoupCrawlingContext,
)
from crawlee.errors import HttpStatusCodeError
from crawlee.request_loaders import ThrottlingRequestManager
from crawlee.storage_clients import MemoryStorageClient, StorageClient
from crawlee.storages import RequestQueue
from protego import Protego

from crawl.browser import BrowserOptions, BrowserUnavailableError, Renderer, needs_render
from crawl.client import HostGate, SafeHttpClient
from crawl.errors import FetchError
from crawl.fetch import Credentials, FetchedPage, Fetcher, FetchOptions
from crawl.sitemaps import read_sitemaps
from crawl.urls import Scope, absolute_link, canonicalize, fetch_address, is_route
from retrieval import Catalog, CrawlUrl, bytes_hash

log = logging.getLogger(__name__)


def _links(soup: Any, base: str, routes: bool = False) -> dict[str, str]:
    """The page's followable links, canonical, in page order, each with the address to fetch
    it at (as first linked); client-side routes (`#/plugins`) among them with `routes` (a page
    rendered in a browser)."""
    found: dict[str, str] = {}
    for anchor in soup.find_all("a", href=True):
        if "nofollow" not in (anchor.get("rel") or []):
            href = str(anchor["href"])
            target = absolute_link(base, href, routes)
            if target and target not in found:
                found[target] = fetch_address(target, urljoin(base, href.strip()))
    return found


class _RecordedFailures(logging.Filter):
    """crawlee logs each failed request with a traceback; lore records it per URL instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "reached maximum retries" not in record.getMessage()


crawlee_log = logging.getLogger("crawl.crawlee")
crawlee_log.addFilter(_RecordedFailures())

Strategy = Literal["single", "sitemap", "spider"]
Render = Literal["http", "browser", "auto"]
STRATEGIES: tuple[Strategy, ...] = ("single", "sitemap", "spider")
RENDERS: tuple[Render, ...] = ("http", "browser", "auto")
NO_SITEMAP = "no_sitemap: spidered instead"


@dataclass(frozen=True)
class CrawlSpec:
    """What an operator asked to crawl."""

    url: str
    strategy: Strategy = "single"
    max_pages: int = 100
    max_depth: int = 5
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    allow_subdomains: bool = False
    render: Render = "http"
    map_only: bool = False  # list the URLs the crawl would ingest, ingest nothing
    allowed_hosts: tuple[str, ...] = ("*",)  # the tenant's allowedDomains
    more_urls: tuple[str, ...] = ()  # a batch: more start URLs beside `url`
    # headers and cookies sent to the crawl's own hosts (pages behind a login)
    credentials: Credentials | None = field(default=None, repr=False)

    def scope(self) -> Scope:
        return Scope(
            canonicalize(self.url),
            self.allow_subdomains,
            self.include,
            self.exclude,
            self.allowed_hosts,
            tuple(canonicalize(u) for u in self.more_urls),
        )

    def starts(self) -> list[str]:
        """The start URLs, canonical, each once, in the order asked."""
        return list(dict.fromkeys(canonicalize(u) for u in (self.url, *self.more_urls)))


@dataclass(frozen=True)
class CrawlOptions:
    """The operator's limits, the same for every job."""

    fetch: FetchOptions = field(default_factory=FetchOptions)
    respect_robots: bool = True
    max_concurrency: int = 8
    per_host_concurrency: int = 4
    per_host_delay_s: float = 0.0
    max_urls: int = 10_000  # URLs recorded per job, skipped ones included
    retries: int = 2
    browser: BrowserOptions = field(default_factory=BrowserOptions)


@dataclass(frozen=True)
class Page:
    url: str  # canonical URL the page is stored under
    final_url: str  # after redirects
    status: int  # 200, or 304 when a conditional request said it has not changed
    content_type: str | None
    body: bytes
    fetched_at: datetime
    headers: dict[str, str]
    depth: int
    links: tuple[str, ...] = ()  # the page's links as found, for the sink to keep for a 304


@dataclass(frozen=True)
class PageResult:
    # queued: handed to another process that records what became of it (the sink records the
    # URL as queued, with its status code and body hash, before handing it over)
    state: Literal["ingested", "unchanged", "skipped", "failed", "queued"]
    reason: str = ""
    document_id: str | None = None
    chunks: int = 0
    embedded: int = 0
    links: tuple[str, ...] = ()  # for a 304: the links the page had when it was stored


class PageSink(Protocol):
    async def conditional_headers(self, url: str) -> dict[str, str]:
        """If-None-Match / If-Modified-Since for a page stored before, else {}."""

    async def __call__(self, page: Page) -> PageResult:
        """Store the page's knowledge (or decide it has not changed)."""


@dataclass
class CrawlSummary:
    counts: dict[str, int]
    exhaustive: bool  # nothing in scope was left out for a limit (max_pages, max_depth, cap)
    cancelled: bool


Progress = Callable[[dict[str, int]], None]


def _fetch_reason(error: BaseException) -> str:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, FetchError):
            return f"{current.reason}: {current}"
        if isinstance(current, BrowserUnavailableError):
            return f"browser_unavailable: {current}"
        if isinstance(current, HttpStatusCodeError):
            return f"http_{current.status_code}"
        wrapped = getattr(current, "wrapped_exception", None)
        current = wrapped or current.__cause__ or current.__context__
    return f"error:{type(error).__name__}"


class SiteCrawl:
    """Runs one job; `run()` again after a crash picks up the pending URLs."""

    def __init__(
        self,
        job_id: str,
        spec: CrawlSpec,
        options: CrawlOptions,
        catalog: Catalog,
        sink: PageSink,
        cancelled: Callable[[], bool] = lambda: False,
        progress: Progress | None = None,
        interrupted: Callable[[], bool] = lambda: False,
    ) -> None:
        """`cancelled()`: the job was cancelled (its pending URLs end skipped: cancelled);
        `interrupted()`: the process is stopping (they stay pending, for a resumed run)."""
        self.job_id = job_id
        self.spec = spec
        self.options = options
        self.catalog = catalog
        self.sink = sink
        self.scope = spec.scope()
        self._cancelled = cancelled
        self._interrupted = interrupted
        self._progress = progress
        self._limited = False
        self._hashes: dict[str, str] = {}  # body hash -> first URL with it
        self._last_cancel_check = 0.0
        self._stopped: str | None = None  # "cancelled" or "interrupted"
        self._robots_txt: bytes | None = None
        # Answers lore fetched before the crawl that crawlee asks for again (robots.txt): the
        # client serves them once instead of fetching them a second time.
        self._prefetched: dict[str, FetchedPage] = {}
        self._renderer: Renderer | None = None
        # canonical URL -> the address it was found as (`/kb` -> `/kb/`), where that differs;
        # the start URLs are fetched as asked for, a resumed run's too
        self._addresses: dict[str, str] = {}
        for start in (spec.url, *spec.more_urls):
            with contextlib.suppress(ValueError):
                url = canonicalize(start)
                self._addresses.setdefault(url, fetch_address(url, start.strip()))

    # frontier ---------------------------------------------------------------------------------

    def _admit(
        self, candidates: Sequence[tuple[str, int]], addresses: Mapping[str, str] | None = None
    ) -> list[CrawlUrl]:
        """Record found URLs (canonical; `addresses` says where to fetch those found in another
        form); returns the new in-scope ones that should be fetched."""
        known = self.catalog.count_crawl_urls(self.job_id)
        total = sum(known.values())
        wanted = total - known.get("skipped", 0)
        entries = []
        for url, depth in candidates:
            reason = self.scope.reason_out(url)
            if reason is None and depth > self.spec.max_depth:
                reason = "max_depth"
            state = "skipped" if reason else "pending"
            address = (addresses or {}).get(url)
            entries.append(CrawlUrl(url, depth, state, reason or "", address=address))
        fresh = self.catalog.add_crawl_urls(self.job_id, entries[: self.options.max_urls - total])
        if len(entries) > self.options.max_urls - total:
            self._limited = True
        admitted = []
        for entry in fresh:
            if entry.state != "pending":
                self._limited |= entry.reason == "max_depth"
                continue
            if wanted >= self.spec.max_pages:
                self.catalog.set_crawl_url(
                    self.job_id, entry.url, state="skipped", reason="max_pages"
                )
                self._limited = True
                continue
            wanted += 1
            admitted.append(entry)
            if entry.address:
                self._addresses[entry.url] = entry.address
        return admitted

    def _record(self, url: str, **changes: Any) -> None:
        self.catalog.set_crawl_url(self.job_id, url, **changes)
        self._report()

    def _report(self) -> None:
        if self._progress is not None:
            self._progress(self.counts())

    def counts(self) -> dict[str, int]:
        """The job's counts, from the catalog (a resumed job counts what it did before)."""
        states, totals = self.catalog.crawl_tally(self.job_id)
        return {
            "discovered": sum(states.values()),
            "pending": states.get("pending", 0),
            "queued": states.get("queued", 0),
            "fetched": totals["fetched"],
            "ingested": states.get("ingested", 0),
            "unchanged": states.get("unchanged", 0),
            "skipped": states.get("skipped", 0),
            "failed": states.get("failed", 0),
            "listed": states.get("listed", 0),
            "chunks": totals["chunks"],
            "embedded": totals["embedded"],
        }

    async def _seed(self, fetcher: Fetcher) -> list[CrawlUrl]:
        start = self.scope.start_url
        if self.spec.strategy != "sitemap":
            return self._admit([(url, 0) for url in self.spec.starts()])
        robots = await self._robots(fetcher)
        sitemap = await read_sitemaps(
            start,
            lambda u: self._body(fetcher, u),
            robots.decode("utf-8", "replace") if robots else None,
            self.options.max_urls,
        )
        listed: list[tuple[str, int]] = []
        addresses: dict[str, str] = {}
        for loc in sitemap.urls:
            try:
                url = canonicalize(loc)
            except ValueError:
                continue
            listed.append((url, 0))
            addresses.setdefault(url, fetch_address(url, loc))
        if not listed:
            log.info("job %s: %s has no sitemap; spidering instead", self.job_id, start)
            self.spec = replace(self.spec, strategy="spider")
            # The marker tells a resumed run that this job spiders.
            self.catalog.add_crawl_urls(
                self.job_id, [CrawlUrl(self.scope.root + "sitemap.xml", 0, "skipped", NO_SITEMAP)]
            )
            return self._admit([(start, 0)])
        return self._admit(listed, addresses)

    async def _robots(self, fetcher: Fetcher) -> bytes | None:
        if self._robots_txt is None:
            robots_url = self.scope.root + "robots.txt"
            page = await self._fetch(fetcher, robots_url)
            if page is not None:
                self._prefetched[robots_url] = page
            self._robots_txt = page.body if page is not None and page.status == 200 else b""
        return self._robots_txt or None

    async def _crawl_delay(self, fetcher: Fetcher) -> int | None:
        """robots.txt's Crawl-delay for the start host, known before the first request (crawlee
        learns it only after dispatching one)."""
        if not self.options.respect_robots:
            return None
        robots = await self._robots(fetcher)
        if not robots:
            return None
        rules = Protego.parse(robots.decode("utf-8", "replace"))
        delay = rules.crawl_delay(self.options.fetch.user_agent)
        return math.ceil(delay) if delay else None

    async def _fetch(self, fetcher: Fetcher, url: str) -> FetchedPage | None:
        try:
            return await fetcher.fetch_response(url)
        except FetchError as exc:
            log.info("job %s: %s: %s", self.job_id, url, exc)
            return None

    async def _body(self, fetcher: Fetcher, url: str) -> bytes | None:
        page = await self._fetch(fetcher, url)
        return page.body if page is not None and page.status == 200 else None

    # the crawl --------------------------------------------------------------------------------

    async def run(self) -> CrawlSummary:
        credentials = self.spec.credentials
        if credentials:  # to the crawl's own origins only
            credentials = replace(credentials, allowed=self.scope.login_allowed)
        fetcher = Fetcher(self.options.fetch, credentials=credentials)
        if self.spec.render != "http":
            self._renderer = Renderer(fetcher, self.options.browser)
        try:
            return await self._run(fetcher)
        finally:
            if self._renderer is not None:
                await self._renderer.aclose()
            await fetcher.aclose()

    async def _run(self, fetcher: Fetcher) -> CrawlSummary:
        if self.catalog.count_crawl_urls(self.job_id):
            for done in self.catalog.crawl_urls(
                self.job_id, states=("ingested", "unchanged", "queued")
            ):
                if done.content_hash:
                    self._hashes.setdefault(done.content_hash, done.url)
            # whether the crawl was limited is in its skipped URLs (a run that stopped early
            # must not count as exhaustive and remove the pages it did not reach)
            self._limited = any(
                u.reason in ("max_pages", "max_depth")
                for u in self.catalog.crawl_urls(self.job_id, states=("skipped",))
            )
            if self.spec.strategy == "sitemap" and self._fell_back():
                self.spec = replace(self.spec, strategy="spider")
            pending = self.catalog.crawl_urls(self.job_id, states=("pending",))
            for entry in pending:  # fetched where they were found, as in the first run
                if entry.address:
                    self._addresses.setdefault(entry.url, entry.address)
            log.info("job %s: resuming with %d pending URLs", self.job_id, len(pending))
        else:
            pending = await self._seed(fetcher)
        if self.spec.map_only and self.spec.strategy == "sitemap":
            for entry in pending:
                self._record(entry.url, state="listed")
            return self._summary()

        # crawlee caches queues process-wide by alias (its throttler names its per-domain
        # queues after the domain): every alias this run opens carries a run id.
        run_id = f"lore-{self.job_id}-{uuid.uuid4().hex[:8]}"
        storage = MemoryStorageClient()
        locator = ServiceLocator(configuration=Configuration(), storage_client=storage)
        queue = await RequestQueue.open(alias=run_id, storage_client=storage)

        async def open_queue(
            *,
            alias: str | None = None,
            storage_client: StorageClient | None = None,
            configuration: Configuration | None = None,
        ) -> RequestQueue:
            return await RequestQueue.open(
                alias=f"{run_id}-{alias}",
                storage_client=storage_client,
                configuration=configuration,
            )

        hosts = sorted({urlsplit(e.url).hostname or "" for e in pending} | {self.scope.host})
        throttler = ThrottlingRequestManager(
            queue,
            domains=hosts,
            request_manager_opener=open_queue,
            service_locator=locator,
            max_delay=timedelta(seconds=60),
        )
        client = SafeHttpClient(
            fetcher,
            HostGate(self.options.per_host_concurrency, self.options.per_host_delay_s),
            # A rendered page's content comes from its scripts' requests too: the page's own
            # validators cannot say it is unchanged, so browser crawls ask unconditionally.
            headers=None
            if self.spec.map_only or self.spec.render == "browser"
            else self.sink.conditional_headers,
            # a 503 backs the host off the way crawlee backs off a 429
            on_unavailable=lambda url, after: throttler.record_domain_delay(url, retry_after=after),
            prefetched=self._prefetched,
        )
        crawler = self._crawler(client, throttler, storage)
        if delay := await self._crawl_delay(fetcher):
            throttler.set_crawl_delay(self.scope.start_url, delay)
        await throttler.add_requests([self._request(e) for e in pending])
        try:
            await crawler.run()
        finally:
            await throttler.drop()
        return self._summary()

    def _fell_back(self) -> bool:
        skipped = self.catalog.crawl_urls(self.job_id, states=("skipped",), limit=1)
        return bool(skipped) and skipped[0].reason == NO_SITEMAP

    def _summary(self) -> CrawlSummary:
        cancelled = self._stopped is not None
        if self._stopped == "cancelled":
            for entry in self.catalog.crawl_urls(self.job_id, states=("pending",)):
                self.catalog.set_crawl_url(  # unless a worker recorded it meanwhile
                    self.job_id, entry.url, when_state=("pending",), state="skipped",
                    reason="cancelled",
                )  # fmt: skip
        counts = self.counts()
        self._report()
        return CrawlSummary(counts, exhaustive=not self._limited, cancelled=cancelled)

    def _request(self, entry: CrawlUrl) -> Request:
        # Known by its canonical URL (fragments in it are client-side routes: pages of their
        # own), fetched where it was found.
        return Request.from_url(
            self._addresses.get(entry.url, entry.url),
            unique_key=entry.url,
            user_data={"depth": entry.depth},
            keep_url_fragment=True,
        )

    def _crawler(
        self,
        client: SafeHttpClient,
        throttler: ThrottlingRequestManager[RequestQueue],
        storage: MemoryStorageClient,
    ) -> BeautifulSoupCrawler:
        n = max(1, self.options.max_concurrency)
        crawler = BeautifulSoupCrawler(
            parser="lxml",
            http_client=client,
            request_manager=throttler,
            storage_client=storage,
            configuration=Configuration(purge_on_start=True),
            respect_robots_txt_file=self.options.respect_robots,
            max_request_retries=self.options.retries,
            use_session_pool=False,
            retry_on_blocked=False,
            configure_logging=False,
            concurrency_settings=ConcurrencySettings(
                min_concurrency=n, desired_concurrency=n, max_concurrency=n
            ),
            request_handler_timeout=timedelta(minutes=10),
            status_message_logging_interval=timedelta(hours=1),
            event_manager=service_locator.get_event_manager(),
            _logger=crawlee_log,
        )
        crawler.router.default_handler(self._handle)
        crawler.failed_request_handler(self._failed)
        crawler.on_skipped_request(self._skipped)
        self._crawlee = crawler
        self._throttler = throttler
        return crawler

    def _check_cancelled(self) -> bool:
        now = time.monotonic()
        if self._stopped is None and self._interrupted():
            self._stopped = "interrupted"
            self._crawlee.stop("the process is stopping")
        elif self._stopped is None and now - self._last_cancel_check > 0.5:
            self._last_cancel_check = now
            if self._cancelled():
                self._stopped = "cancelled"
                self._crawlee.stop("the job was cancelled")
        return self._stopped is not None

    async def _handle(self, context: BeautifulSoupCrawlingContext) -> None:
        request = context.request
        url = request.unique_key  # canonical (see _request)
        depth = request.user_data.get("depth", 0)
        assert isinstance(depth, int)
        if self._check_cancelled():
            return  # stays pending; marked cancelled at the end
        response = context.http_response
        final = request.loaded_url or request.url
        if is_route(url) and not urlsplit(final).fragment:
            final = f"{final}#{urlsplit(url).fragment}"  # a browser keeps it through redirects
        status = response.status_code
        body = await response.read()
        if status == 304:  # unchanged: follow the links it had when it was stored
            result = await self._store(url, final, status, response.headers, b"", depth, {})
            await self._follow({canonicalize(a): a for a in result.links}, depth)
            return
        soup = context.soup
        headers = dict(response.headers)
        rendered = self._renderer is not None and self._should_render(url, headers, soup)
        if rendered:
            assert self._renderer is not None
            soup.decompose()  # the app's shell: its rendered DOM is read instead
            body = await self._renderer.render(final, body, headers.get("content-type"))
            headers["content-type"] = "text/html; charset=utf-8"  # the DOM, serialised
            soup = BeautifulSoup(body, "lxml")
        # A rendered page is told from another by its text: the DOM also holds which sidebar
        # entry is highlighted, so the same view under a link to one of its headings
        # (docsify's `#/page?id=usage`) would not read as a duplicate.
        digest = bytes_hash(soup.get_text(" ", strip=True).encode() if rendered else body)
        stored_as, links = self._read(soup, url, final, depth, rendered)
        if stored_as is None:
            return
        first_url = self._hashes.setdefault(digest, stored_as)
        if first_url != stored_as:
            self._record(
                stored_as, state="skipped", reason=f"duplicate:{first_url}", status_code=status
            )
            return
        await self._follow(links, depth)
        await self._store(stored_as, final, status, headers, body, depth, links, digest)

    def _read(
        self, soup: Any, url: str, final: str, depth: int, rendered: bool
    ) -> tuple[str | None, dict[str, str]]:
        """The URL the page is stored under (None: a duplicate) and its links; the parsed tree
        is taken apart after, before the page waits to be stored. It is a web of parent and
        child references that only Python's cyclic collector frees, which seldom runs on a big
        heap: a crawl kept the trees of pages long done (100 MB after 80 pages)."""
        try:
            stored_as = self._stored_url(url, final, soup, depth)
            return stored_as, _links(soup, final, routes=rendered) if stored_as else {}
        finally:
            soup.decompose()

    def _should_render(self, url: str, headers: dict[str, str], soup: Any) -> bool:
        content_type = (headers.get("content-type") or "text/html").lower()
        if "html" not in content_type:
            return False
        # A client-side route's HTML is the app's shell: only its scripts show the route.
        return self.spec.render == "browser" or is_route(url) or needs_render(soup)

    def _stored_url(self, url: str, final: str, soup: Any, depth: int) -> str | None:
        """The URL a page is stored under: its `<link rel=canonical>`, else where a redirect
        ended, else the URL asked for. None (and the URL recorded as skipped) when that URL is
        already part of the job: the page is a duplicate."""
        target = url
        with contextlib.suppress(ValueError):
            target = canonicalize(final)
        tag = soup.find("link", rel="canonical", href=True)
        declared = absolute_link(final, str(tag["href"])) if tag is not None else None
        if is_route(url):
            declared = None  # the shell's canonical URL names the app, not this route
        if declared and self.scope.reason_out(declared) is None:
            target = declared
        if target == url or self.scope.reason_out(target) is not None:
            return url
        if not self.catalog.add_crawl_urls(self.job_id, [CrawlUrl(target, depth, "pending")]):
            self._record(url, state="skipped", reason=f"duplicate:{target}")
            return None
        self._record(url, state="skipped", reason=f"stored_as:{target}")
        return target

    async def _follow(self, links: Mapping[str, str], depth: int) -> None:
        """Queue a page's links (canonical URL -> the address to fetch it at)."""
        if self.spec.strategy != "spider" or not links:
            return
        admitted = self._admit([(link, depth + 1) for link in links], links)
        if admitted:
            await self._throttler.add_requests([self._request(e) for e in admitted])

    async def _store(
        self,
        url: str,
        final: str,
        status: int,
        headers: Any,
        body: bytes,
        depth: int,
        links: Mapping[str, str],
        digest: str | None = None,
    ) -> PageResult:
        if self.spec.map_only:
            self._record(url, state="listed", status_code=status, content_hash=digest)
            return PageResult("skipped", "listed")
        page = Page(
            url=url,
            final_url=final,
            status=status,
            content_type=headers.get("content-type"),
            body=body,
            fetched_at=datetime.now(UTC),
            headers=dict(headers),
            depth=depth,
            links=tuple(links.values()),  # where they were found: canonical again on a 304
        )
        result = await self.sink(page)
        if result.state == "queued":  # the sink recorded it before handing it over
            self._report()
            return result
        self._record(
            url,
            state=result.state,
            reason=result.reason,
            status_code=status,
            content_hash=digest,
            document_id=result.document_id,
            chunks=result.chunks,
            embedded=result.embedded,
        )
        return result

    async def _failed(self, context: BasicCrawlingContext, error: Exception) -> None:
        reason = _fetch_reason(error)
        url = context.request.unique_key  # canonical (see _request)
        log.info("job %s: %s failed: %s", self.job_id, url, reason)
        answered = reason.removeprefix("http_")  # an answer, if not a page: it counts as fetched
        status = int(answered) if answered.isdigit() else None
        self._record(
            url,
            when_state=("pending",),  # a page a worker stored is not failed by its sending
            state="failed",
            reason=reason,
            status_code=status,
        )

    async def _skipped(self, url: str, reason: str) -> None:
        url = canonicalize(url)  # crawlee names the address fetched (see _request)
        self._record(url, state="skipped", reason="robots" if reason == "robots_txt" else reason)
