"""Fetching one URL: limits, redirects and the private-address guard."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from crawl import BlockedAddressError, Fetcher, FetchError, FetchOptions
from tests.conftest import Page, Site


def fetch(url: str, **options: object) -> object:
    async def run() -> object:
        fetcher = Fetcher(FetchOptions(**options))  # type: ignore[arg-type]
        try:
            return await fetcher.fetch(url)
        finally:
            await fetcher.aclose()

    return asyncio.run(run())


def test_follows_redirects_and_reports_the_final_url(site: Site) -> None:
    site.pages["/old"] = Page(b"", status=301, headers={"Location": "/new"})
    site.pages["/new"] = Page(b"<html><body><p>moved here</p></body></html>")
    page = fetch(site.url("/old"), allow_private_addresses=True)
    assert page.url == site.url("/new") and b"moved here" in page.body  # type: ignore[attr-defined]
    assert site.requests == ["/old", "/new"]


def test_redirect_loops_and_oversized_bodies_fail(site: Site) -> None:
    site.pages["/loop"] = Page(b"", status=302, headers={"Location": "/loop"})
    with pytest.raises(FetchError) as loop:
        fetch(site.url("/loop"), allow_private_addresses=True, max_redirects=3)
    assert loop.value.reason == "too_many_redirects"
    site.pages["/big"] = Page(b"x" * 5000)
    with pytest.raises(FetchError) as big:
        fetch(site.url("/big"), allow_private_addresses=True, max_bytes=1000)
    assert big.value.reason == "too_large"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",
        "http://10.1.2.3/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:9/",
    ],
)
def test_private_addresses_are_blocked_by_default(url: str) -> None:
    with pytest.raises(BlockedAddressError, match="ALLOW_PRIVATE_ADDRESSES"):
        fetch(url)


def test_a_redirect_to_a_private_address_is_blocked() -> None:
    # A public address answered by an in-process mock transport (no traffic leaves the
    # machine) redirects to loopback: the guard runs again on every hop and refuses it.
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://127.0.0.1:8080/admin"})

    async def run() -> None:
        fetcher = Fetcher(FetchOptions(), transport=httpx.MockTransport(handler))
        try:
            await fetcher.fetch("http://93.184.216.34/start")
        finally:
            await fetcher.aclose()

    with pytest.raises(BlockedAddressError, match=r"127\.0\.0\.1"):
        asyncio.run(run())
    assert seen == ["http://93.184.216.34/start"]


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "example.com"])
def test_only_http_urls(url: str) -> None:
    with pytest.raises(FetchError) as err:
        fetch(url)
    assert err.value.reason == "bad_url"
