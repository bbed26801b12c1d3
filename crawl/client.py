"""crawlee's HTTP client seam, implemented on lore's safe `Fetcher`: every request crawlee makes
(pages and robots.txt) is checked hop by hop against the address rules and the size and time
limits, and goes through a per-host gate (concurrency and minimum delay)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawlee._types import HttpHeaders
from crawlee.http_clients import HttpClient, HttpCrawlingResult

from crawl.errors import FetchError
from crawl.fetch import FetchedPage, Fetcher

if TYPE_CHECKING:
    from crawlee import Request
    from crawlee.proxy_configuration import ProxyInfo
    from crawlee.sessions import Session
    from crawlee.statistics import Statistics

# Reasons not worth retrying: the same request would fail the same way.
FINAL_REASONS = frozenset({"blocked_address", "bad_url", "too_large", "too_many_redirects", "dns"})

Headers = Callable[[str], Awaitable[dict[str, str]]]
Backoff = Callable[[str, timedelta | None], object]  # what it returns is ignored


class HostGate:
    """At most `concurrency` requests in flight per host, started at least `delay_s` apart."""

    def __init__(self, concurrency: int, delay_s: float) -> None:
        self._concurrency = max(1, concurrency)
        self._delay_s = max(0.0, delay_s)
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._next_start: dict[str, float] = {}
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def slot(self, url: str) -> AsyncIterator[None]:
        host = (urlsplit(url).hostname or "").lower()
        semaphore = self._slots.setdefault(host, asyncio.Semaphore(self._concurrency))
        async with semaphore:
            if self._delay_s:
                async with self._lock:
                    now = time.monotonic()
                    start = max(now, self._next_start.get(host, 0.0))
                    self._next_start[host] = start + self._delay_s
                await asyncio.sleep(start - now)
            yield


class _Response:
    """A fetched page in the shape crawlee's `HttpResponse` protocol asks for."""

    def __init__(self, page: FetchedPage) -> None:
        self.page = page

    @property
    def http_version(self) -> str:
        return "HTTP/1.1"

    @property
    def status_code(self) -> int:
        return self.page.status

    @property
    def headers(self) -> HttpHeaders:
        return HttpHeaders(self.page.headers)

    async def read(self) -> bytes:
        return self.page.body

    async def read_stream(self) -> AsyncIterator[bytes]:
        yield self.page.body


def parse_retry_after(value: str | None) -> timedelta | None:
    if value and value.strip().isdigit():
        return timedelta(seconds=int(value.strip()))
    return None


class SafeHttpClient(HttpClient):
    """Serves crawlee's page and robots.txt requests through a `Fetcher`.

    `headers(url)` supplies conditional-request validators for a page; `on_unavailable(url,
    retry_after)` hears of a 503 so the caller can back off that host (crawlee handles 429);
    `prefetched` holds answers the caller already has (its robots.txt), each served once."""

    def __init__(
        self,
        fetcher: Fetcher,
        gate: HostGate,
        headers: Headers | None = None,
        on_unavailable: Backoff | None = None,
        prefetched: dict[str, FetchedPage] | None = None,
    ) -> None:
        super().__init__(persist_cookies_per_session=False)
        self._prefetched = prefetched if prefetched is not None else {}
        self._fetcher = fetcher
        self._gate = gate
        self._headers = headers
        self._on_unavailable = on_unavailable

    async def _get(self, url: str, headers: dict[str, str]) -> FetchedPage:
        async with self._gate.slot(url):
            page = await self._fetcher.fetch_response(url, headers)
        if page.status == 503 and self._on_unavailable is not None:
            self._on_unavailable(url, parse_retry_after(page.headers.get("retry-after")))
        return page

    async def crawl(
        self,
        request: Request,
        *,
        session: Session | None = None,
        proxy_info: ProxyInfo | None = None,
        statistics: Statistics | None = None,
        timeout: timedelta | None = None,
    ) -> HttpCrawlingResult:
        # validators are kept under the URL a page is stored under, the request's key
        headers = await self._headers(request.unique_key) if self._headers else {}
        try:
            page = await self._get(request.url, headers)
        except FetchError as exc:
            if exc.reason in FINAL_REASONS:
                request.no_retry = True
            raise
        request.loaded_url = page.url
        if statistics is not None:
            statistics.register_status_code(page.status)
        return HttpCrawlingResult(http_response=_Response(page))

    async def send_request(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: HttpHeaders | dict[str, str] | None = None,
        payload: Any = None,
        session: Session | None = None,
        proxy_info: ProxyInfo | None = None,
        timeout: timedelta | None = None,
    ) -> _Response:
        if method != "GET" or payload is not None:
            raise FetchError(url, "bad_request", "lore's crawler only sends GET requests")
        page = self._prefetched.pop(url, None)
        return _Response(page if page is not None else await self._get(url, {}))

    @asynccontextmanager
    async def stream(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: HttpHeaders | dict[str, str] | None = None,
        payload: Any = None,
        session: Session | None = None,
        proxy_info: ProxyInfo | None = None,
        timeout: timedelta | None = None,
    ) -> AsyncIterator[_Response]:
        yield await self.send_request(url, method=method, payload=payload)

    async def cleanup(self) -> None:
        """The fetcher belongs to the caller, who closes it."""
