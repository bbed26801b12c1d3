"""Getting pages: safe single-URL fetching now; sitemap and spider strategies build on it.
Depends only on `retrieval`."""

from crawl.errors import BlockedAddressError, CrawlError, FetchError
from crawl.fetch import DEFAULT_USER_AGENT, FetchedPage, Fetcher, FetchOptions, check_address

__all__ = [
    "DEFAULT_USER_AGENT",
    "BlockedAddressError",
    "CrawlError",
    "FetchError",
    "FetchOptions",
    "FetchedPage",
    "Fetcher",
    "check_address",
]
