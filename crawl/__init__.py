"""Getting pages: safe fetching, URL canonicalisation and scope, sitemaps, and crawl jobs on
crawlee that record every URL's outcome. Depends only on `retrieval`."""

from crawl.browser import (
    BrowserOptions,
    BrowserUnavailableError,
    Renderer,
    browser_missing,
    close_browser,
    launch_browser,
)
from crawl.crawler import (
    RENDERS,
    STRATEGIES,
    CrawlOptions,
    CrawlSpec,
    CrawlSummary,
    Page,
    PageResult,
    PageSink,
    SiteCrawl,
)
from crawl.errors import BlockedAddressError, CrawlError, FetchError
from crawl.fetch import (
    DEFAULT_USER_AGENT,
    Credentials,
    FetchedPage,
    Fetcher,
    FetchOptions,
    check_address,
)
from crawl.urls import Scope, canonicalize, fetch_address, host_matches, is_route, origin

__all__ = [
    "DEFAULT_USER_AGENT",
    "RENDERS",
    "STRATEGIES",
    "BlockedAddressError",
    "BrowserOptions",
    "BrowserUnavailableError",
    "CrawlError",
    "CrawlOptions",
    "CrawlSpec",
    "CrawlSummary",
    "Credentials",
    "FetchError",
    "FetchOptions",
    "FetchedPage",
    "Fetcher",
    "Page",
    "PageResult",
    "PageSink",
    "Renderer",
    "Scope",
    "SiteCrawl",
    "browser_missing",
    "canonicalize",
    "check_address",
    "close_browser",
    "fetch_address",
    "host_matches",
    "is_route",
    "launch_browser",
    "origin",
]
