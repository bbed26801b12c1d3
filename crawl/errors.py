"""Errors raised while fetching.

CrawlError
 └── FetchError               a URL could not be fetched; `reason` is a short machine-readable
     │                        code (http_404, timeout, too_large, blocked_address, ...)
     └── BlockedAddressError  the URL resolves to a private, loopback or link-local address
"""


class CrawlError(Exception):
    """Root of every error the crawl package raises."""


class FetchError(CrawlError):
    def __init__(self, url: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason


class BlockedAddressError(FetchError):
    pass
