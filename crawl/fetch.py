"""Fetching one URL over HTTP, safely: size and time limits, redirects checked hop by hop, and no
private, loopback or link-local addresses unless the operator allows them."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

import httpx
from opentelemetry import trace

from crawl.errors import BlockedAddressError, FetchError

log = logging.getLogger(__name__)
tracer = trace.get_tracer("lore.crawl")  # spans go nowhere unless tracing is configured

DEFAULT_USER_AGENT = "lore/0.1 (+knowledge indexer for web agents)"


@dataclass(frozen=True)
class FetchOptions:
    timeout_s: float = 20.0
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    user_agent: str = DEFAULT_USER_AGENT
    allow_private_addresses: bool = False
    # Private networks allowed even so, e.g. ("10.20.0.0/16",) for one intranet docs host.
    allow_networks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Credentials:
    """Request headers and cookies a crawl sends to the sites it crawls (pages behind a
    login), and nowhere else: `allowed(url)` says where (the crawl's own origins, see
    `Scope.login_allowed`). Their values never appear in a repr, hence in no log, and
    `redact` takes them out of a message."""

    headers: dict[str, str] = field(default_factory=dict, repr=False)
    cookies: dict[str, str] = field(default_factory=dict, repr=False)
    allowed: Callable[[str], bool] = field(default=lambda url: False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.headers or self.cookies)

    def for_url(self, url: str) -> dict[str, str]:
        """The headers to add to a request for `url`: none outside the crawl's origins."""
        if not self or not self.allowed(url):
            return {}
        headers = dict(self.headers)
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def redact(self, text: str) -> str:
        for secret in (*self.headers.values(), *self.cookies.values()):
            if secret:
                text = text.replace(secret, "[redacted]")
        return text


@dataclass(frozen=True)
class FetchedPage:
    url: str  # after redirects
    status: int
    content_type: str | None
    body: bytes
    fetched_at: datetime
    headers: dict[str, str] = field(default_factory=dict)


def _blocked(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


async def check_address(url: str, options: FetchOptions) -> None:
    """Raise `FetchError` for a URL lore must not fetch (scheme, or where its host resolves)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(url, "bad_url", f"{url!r} is not an http(s) URL")
    if options.allow_private_addresses:
        return
    host = parts.hostname
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, parts.port or 80, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise FetchError(url, "dns", f"cannot resolve {host}: {exc}") from exc
        addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    allowed = [ipaddress.ip_network(n, strict=False) for n in options.allow_networks]
    for ip in addresses:
        if _blocked(ip) and not any(ip in net for net in allowed):
            raise BlockedAddressError(
                url,
                "blocked_address",
                f"{host} resolves to {ip}, a private/loopback/link-local address; set "
                "LORE_FETCH__ALLOW_PRIVATE_ADDRESSES=true to allow it",
            )


def _page(response: httpx.Response, body: bytes) -> FetchedPage:
    return FetchedPage(
        url=str(response.url),
        status=response.status_code,
        content_type=response.headers.get("content-type"),
        body=body,
        fetched_at=datetime.now(UTC),
        headers={k.lower(): v for k, v in response.headers.items()},
    )


class Fetcher:
    """Fetches single URLs with one shared connection pool."""

    def __init__(
        self,
        options: FetchOptions,
        transport: httpx.AsyncBaseTransport | None = None,
        credentials: Credentials | None = None,
    ):
        self.options = options
        self.credentials = credentials or Credentials()
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(options.timeout_s),
            headers={
                "User-Agent": options.user_agent,
                "Accept": "text/html,text/*;q=0.9,*/*;q=0.5",
            },
            follow_redirects=False,
            transport=transport,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, url: str) -> FetchedPage:
        """The page at `url`; raises `FetchError` for an HTTP error status too."""
        page = await self.fetch_response(url)
        if page.status >= 400:
            raise FetchError(
                page.url, f"http_{page.status}", f"{page.url} answered HTTP {page.status}"
            )
        return page

    async def fetch_response(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        method: str = "GET",
        content: bytes | None = None,
    ) -> FetchedPage:
        """The final response after redirects, whatever its status (an error status has an
        empty body). `headers` add to the request's (conditional-request validators, or what a
        browser page sends); `method` and `content` serve a rendered page's own requests."""
        try:
            return await asyncio.wait_for(
                self._fetch(url, headers or {}, method, content),
                timeout=self.options.timeout_s * 2,
            )
        except TimeoutError as exc:
            raise FetchError(
                url, "timeout", f"{url} did not answer within {self.options.timeout_s:g}s"
            ) from exc

    async def _fetch(
        self, url: str, headers: dict[str, str], method: str, content: bytes | None
    ) -> FetchedPage:
        with tracer.start_as_current_span(
            "fetch", attributes={"url.full": url, "http.request.method": method}
        ) as span:
            page = await self._follow(url, headers, method, content)
            span.set_attribute("http.response.status_code", page.status)
            span.set_attribute("lore.bytes", len(page.body))
            return page

    async def _follow(
        self, url: str, headers: dict[str, str], method: str, content: bytes | None
    ) -> FetchedPage:
        current = url
        for _ in range(self.options.max_redirects + 1):
            await check_address(current, self.options)
            sent = {**headers, **self.credentials.for_url(current)}
            try:
                async with self._client.stream(
                    method, current, headers=sent, content=content
                ) as response:
                    if response.is_redirect and "location" in response.headers:
                        current = urljoin(current, response.headers["location"])
                        if response.status_code not in (307, 308):  # as browsers do
                            method, content = "GET", None
                        continue
                    if response.status_code >= 400 or response.status_code == 304:
                        return _page(response, b"")
                    declared = int(response.headers.get("content-length") or 0)
                    if declared > self.options.max_bytes:
                        raise FetchError(
                            current,
                            "too_large",
                            f"{current} is {declared} bytes; the limit is {self.options.max_bytes}",
                        )
                    body = bytearray()
                    async for piece in response.aiter_bytes():
                        body.extend(piece)
                        if len(body) > self.options.max_bytes:
                            raise FetchError(
                                current,
                                "too_large",
                                f"{current} is over the {self.options.max_bytes}-byte limit",
                            )
                    return _page(response, bytes(body))
            except httpx.TimeoutException as exc:
                raise FetchError(
                    current,
                    "timeout",
                    f"{current} did not answer within {self.options.timeout_s:g}s",
                ) from exc
            except httpx.HTTPError as exc:  # its text may quote a header: no login value in it
                why = self.credentials.redact(str(exc))
                raise FetchError(current, "network", f"cannot fetch {current}: {why}") from None
        raise FetchError(
            url,
            "too_many_redirects",
            f"{url} redirected more than {self.options.max_redirects} times",
        )
