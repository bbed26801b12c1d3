"""Sitemaps: where to find them (robots.txt `Sitemap:` lines, then /sitemap.xml) and what they
list (urlsets and sitemap indexes, plain or gzipped), within size and count limits."""

from __future__ import annotations

import gzip
import logging
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

log = logging.getLogger(__name__)

# The sitemap protocol's own limits: 50,000 URLs and 50 MB uncompressed per file.
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
MAX_SITEMAP_FILES = 100

FetchBody = Callable[[str], Awaitable[bytes | None]]


@dataclass
class SitemapResult:
    urls: list[str] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)  # the files that were read
    errors: list[str] = field(default_factory=list)


def robots_sitemaps(robots_txt: str, base: str) -> list[str]:
    """The `Sitemap:` lines of a robots.txt, as absolute URLs."""
    found = []
    for line in robots_txt.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "sitemap" and value.strip():
            found.append(urljoin(base, value.strip()))
    return found


def _decompress(body: bytes) -> bytes:
    if body[:2] != b"\x1f\x8b":
        return body
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = inflater.decompress(body, MAX_SITEMAP_BYTES + 1)
    if len(out) > MAX_SITEMAP_BYTES:
        raise ValueError(f"expands past {MAX_SITEMAP_BYTES} bytes")
    return out


def parse_sitemap(body: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, child sitemap URLs) of one sitemap file. Raises `ValueError` when it is not
    a sitemap."""
    try:
        root = ElementTree.fromstring(_decompress(body))
    except (ElementTree.ParseError, DefusedXmlException, gzip.BadGzipFile, zlib.error) as exc:
        raise ValueError(f"not a readable sitemap: {exc}") from exc
    tag = root.tag.rsplit("}", 1)[-1]
    if tag not in ("urlset", "sitemapindex"):
        raise ValueError(f"not a sitemap (root element <{tag}>)")
    locs = [
        el.text.strip()
        for el in root.iter()
        if el.tag.rsplit("}", 1)[-1] == "loc" and el.text and el.text.strip()
    ]
    return (locs, []) if tag == "urlset" else ([], locs)


async def read_sitemaps(
    start_url: str, fetch: FetchBody, robots_txt: str | None, max_urls: int
) -> SitemapResult:
    """Every page URL the site's sitemaps list (up to `max_urls`), following indexes.
    `fetch` returns a body, or None when the URL does not exist."""
    parts = urlsplit(start_url)
    root = f"{parts.scheme}://{parts.netloc}/"
    pending = robots_sitemaps(robots_txt or "", root) or [urljoin(root, "sitemap.xml")]
    result = SitemapResult()
    seen: set[str] = set()
    while pending and len(result.sitemaps) < MAX_SITEMAP_FILES and len(result.urls) < max_urls:
        url = pending.pop(0)
        if url in seen:
            continue
        seen.add(url)
        body = await fetch(url)
        if body is None:
            continue
        try:
            pages, children = parse_sitemap(body)
        except ValueError as exc:
            result.errors.append(f"{url}: {exc}")
            log.info("sitemap %s skipped: %s", url, exc)
            continue
        result.sitemaps.append(url)
        result.urls.extend(pages[: max_urls - len(result.urls)])
        pending.extend(children)
    return result
