"""Crawl jobs against local sites on 127.0.0.1: strategies, robots, scope, duplicates, limits,
safety and resumption. The sink here records pages instead of ingesting them (ingestion is
tested through the API in test_crawl_api.py); everything else is the real crawler."""

from __future__ import annotations

import asyncio
import gzip
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawl import CrawlOptions, CrawlSpec, FetchOptions, Page, PageResult, SiteCrawl, canonicalize
from crawl.sitemaps import parse_sitemap, robots_sitemaps
from crawl.urls import Scope, absolute_link, is_route
from retrieval import Catalog, CrawlUrl
from tests.conftest import Page as SitePage
from tests.conftest import Site


def html(title: str, body: str = "", links: tuple[str, ...] = ()) -> SitePage:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return SitePage(
        f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
        f"<p>{body or 'Text of ' + title}</p>{anchors}</body></html>".encode()
    )


class RecordingSink:
    def __init__(self, delay_s: float = 0.0) -> None:
        self.pages: list[Page] = []
        self.delay_s = delay_s

    async def conditional_headers(self, url: str) -> dict[str, str]:
        return {}

    async def __call__(self, page: Page) -> PageResult:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        self.pages.append(page)
        return PageResult("ingested", chunks=1, embedded=1)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(f"sqlite:///{tmp_path / 'lore.db'}")


def options(**fetch: object) -> CrawlOptions:
    values: dict[str, object] = {"allow_private_addresses": True, "timeout_s": 1.0}
    values.update(fetch)
    return CrawlOptions(fetch=FetchOptions(**values), retries=1)  # type: ignore[arg-type]


def crawl(
    catalog: Catalog,
    spec: CrawlSpec,
    sink: RecordingSink | None = None,
    job: str = "job",
    opts: CrawlOptions | None = None,
) -> tuple[dict[str, CrawlUrl], RecordingSink]:
    sink = sink or RecordingSink()
    asyncio.run(SiteCrawl(job, spec, opts or options(), catalog, sink).run())
    return {u.url: u for u in catalog.crawl_urls(job)}, sink


def test_sitemap_index_with_gzipped_child_and_robots(site: Site, catalog: Catalog) -> None:
    site.pages["/robots.txt"] = SitePage(
        f"User-agent: *\nDisallow: /private/\nSitemap: {site.url('/sitemap_index.xml')}\n".encode(),
        content_type="text/plain",
    )
    site.pages["/sitemap_index.xml"] = SitePage(
        b'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + f"<sitemap><loc>{site.url('/sitemap-docs.xml.gz')}</loc></sitemap>".encode()
        + b"</sitemapindex>",
        content_type="application/xml",
    )
    urlset = "".join(
        f"<url><loc>{site.url(p)}</loc></url>"
        for p in ("/docs/a", "/docs/b", "/private/secret", "/docs/c?utm_source=news")
    )
    site.pages["/sitemap-docs.xml.gz"] = SitePage(
        gzip.compress(
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urlset}</urlset>'.encode()
        ),
        content_type="application/gzip",
    )
    for path in ("/docs/a", "/docs/b", "/docs/c", "/private/secret"):
        site.pages[path] = html(path, links=("/docs/not-in-sitemap",))
    urls, sink = crawl(catalog, CrawlSpec(site.url("/"), "sitemap", max_pages=50))
    assert {u: e.state for u, e in urls.items()} == {
        site.url("/docs/a"): "ingested",
        site.url("/docs/b"): "ingested",
        site.url("/docs/c"): "ingested",  # the tracking parameter is gone
        site.url("/private/secret"): "skipped",
    }
    assert urls[site.url("/private/secret")].reason == "robots"
    assert "/private/secret" not in site.requests
    assert site.requests.count("/robots.txt") == 1  # lore's read serves crawlee's rules too
    assert "/docs/not-in-sitemap" not in site.requests  # sitemap mode follows no links
    assert sorted(p.url for p in sink.pages) == sorted(
        site.url(p) for p in ("/docs/a", "/docs/b", "/docs/c")
    )


def test_sitemap_falls_back_to_spidering(site: Site, catalog: Catalog) -> None:
    site.pages["/"] = html("Home", links=("/one",))
    site.pages["/one"] = html("One")
    urls, _ = crawl(catalog, CrawlSpec(site.url("/"), "sitemap", max_pages=10))
    assert urls[site.url("/one")].state == "ingested"
    assert urls[site.url("/sitemap.xml")].reason.startswith("no_sitemap")


def spider_site(site: Site) -> None:
    site.pages["/"] = html(
        "Home",
        links=(
            "/guide",
            "/guide/",
            "/guide#install",
            "/dup-a",
            "/dup-b",
            "/calendar?month=1",
            "/old",
            "/missing",
            "/slow",
            "/leak",
            "https://elsewhere.example/page",
            "mailto:someone@example.com",
            "/skip/me",
        ),
    )
    site.pages["/guide"] = html("Guide", links=("/",))
    site.pages["/dup-a"] = html("Same", "identical body")
    site.pages["/dup-b"] = html("Same", "identical body")
    for month in range(1, 500):  # a spider trap: every month links to the next
        site.pages[f"/calendar?month={month}"] = html(
            f"Month {month}", links=(f"/calendar?month={month + 1}",)
        )
    site.pages["/old"] = SitePage(b"", status=301, headers={"Location": "/guide"})
    site.pages["/slow"] = SitePage(b"<html><body><p>late</p></body></html>", delay_s=3.0)
    site.pages["/leak"] = SitePage(b"", status=302, headers={"Location": "http://10.9.8.7/admin"})
    site.pages["/skip/me"] = html("Excluded")


def test_spider_scope_duplicates_redirects_traps_and_failures(site: Site, catalog: Catalog) -> None:
    spider_site(site)
    spec = CrawlSpec(site.url("/"), "spider", max_pages=20, max_depth=4, exclude=("/skip/*",))
    # Loopback is allowed (the site lives there); other private addresses stay blocked.
    opts = options(allow_private_addresses=False, allow_networks=("127.0.0.1/32",))
    started = time.monotonic()
    urls, sink = crawl(catalog, spec, opts=opts)
    elapsed = time.monotonic() - started

    def state(path: str) -> tuple[str, str]:
        entry = urls[site.url(path)]
        return entry.state, entry.reason.split(":")[0]

    assert state("/") == ("ingested", "")
    assert state("/guide") == ("ingested", "")  # /guide/ and /guide#install are the same URL
    assert "/guide/" not in site.requests and site.url("/guide/") not in urls
    assert sorted([state("/dup-a"), state("/dup-b")]) == [
        ("ingested", ""),
        ("skipped", "duplicate"),
    ]
    assert state("/old") == ("skipped", "duplicate")  # redirects to /guide, already in the job
    assert state("/missing") == ("failed", "http_404")
    assert state("/slow") == ("failed", "timeout")
    assert state("/leak") == ("failed", "blocked_address")
    assert state("/skip/me") == ("skipped", "out_of_scope")
    assert urls["https://elsewhere.example/page"].reason == "out_of_scope:host"
    assert not any(u.startswith("mailto") for u in urls)
    calendar = [u for u in urls.values() if "calendar" in u.url]
    assert [u for u in calendar if u.state == "ingested"]
    assert max(u.depth for u in calendar if u.state == "ingested") <= 4
    assert any(u.reason == "max_depth" for u in calendar)  # the trap ends at maxDepth
    fetched = [u for u in urls.values() if u.state in ("ingested", "failed")]
    assert len(fetched) + sum(u.reason.startswith("duplicate") for u in urls.values()) <= 20
    assert len(sink.pages) == len({p.url for p in sink.pages})
    assert elapsed < 30


def test_a_page_is_fetched_at_the_address_it_was_linked_with(site: Site, catalog: Catalog) -> None:
    # `/kb/` and `/kb` are one page to lore, but this server serves only the slash form (as
    # many static hosts do without redirecting), and the page's relative links resolve against
    # the address it was fetched at.
    site.pages["/docs/"] = html("Docs", links=("kb/", "guide/"))
    site.pages["/docs/kb/"] = html("Knowledge base", links=("intro",))
    site.pages["/docs/kb/intro"] = html("Intro")
    site.pages["/docs/guide/"] = html("Guide", links=("../kb",))  # the same page, no slash
    urls, sink = crawl(catalog, CrawlSpec(site.url("/docs/"), "spider", max_pages=10))
    stored = {p.url: p.final_url for p in sink.pages}
    assert stored == {
        site.url("/docs"): site.url("/docs/"),
        site.url("/docs/kb"): site.url("/docs/kb/"),
        site.url("/docs/kb/intro"): site.url("/docs/kb/intro"),
        site.url("/docs/guide"): site.url("/docs/guide/"),
    }
    assert {u.state for u in urls.values()} == {"ingested"}
    # fetched as /docs/kb, its link would have been /docs/intro
    assert not {"/docs", "/docs/kb", "/docs/guide", "/docs/intro"} & set(site.requests)
    assert site.requests.count("/docs/kb/") == 1


def test_an_unchanged_page_s_links_are_fetched_where_they_were_found(
    site: Site, catalog: Catalog
) -> None:
    # A re-crawl whose page answers 304 follows the links it had when stored: at the address
    # they were found as (`/docs/kb/`), which this host alone answers, not the canonical one.
    site.pages["/docs/"] = SitePage(html("Docs", links=("kb/",)).body, etag='"v1"')
    site.pages["/docs/kb/"] = html("Knowledge base")
    _, first = crawl(catalog, CrawlSpec(site.url("/docs/"), "spider", max_pages=10), job="one")
    stored = {p.url: p.links for p in first.pages}

    class Revisiting(RecordingSink):
        async def conditional_headers(self, url: str) -> dict[str, str]:
            return {"If-None-Match": '"v1"'} if url in stored else {}

        async def __call__(self, page: Page) -> PageResult:
            if page.status == 304:
                return PageResult("unchanged", links=stored[page.url])
            return await super().__call__(page)

    site.requests.clear()
    urls, _ = crawl(
        catalog, CrawlSpec(site.url("/docs/"), "spider", max_pages=10), Revisiting(), job="two"
    )
    assert site.not_modified == ["/docs/"]
    assert {u: e.state for u, e in urls.items()} == {
        site.url("/docs"): "unchanged",
        site.url("/docs/kb"): "ingested",  # no validator of its own: fetched whole
    }
    assert "/docs/kb" not in site.requests and "/docs/kb/" in site.requests


def test_a_sitemap_s_addresses_are_fetched_as_listed(site: Site, catalog: Catalog) -> None:
    site.pages["/sitemap.xml"] = SitePage(
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + f"<url><loc>{site.url('/a/')}</loc></url><url><loc>{site.url('/b')}</loc></url>".encode()
        + b"</urlset>",
        content_type="application/xml",
    )
    site.pages["/a/"] = html("A")
    site.pages["/b"] = html("B")
    urls, sink = crawl(catalog, CrawlSpec(site.url("/"), "sitemap", max_pages=10))
    assert sorted(p.url for p in sink.pages) == [site.url("/a"), site.url("/b")]
    assert {u.state for u in urls.values()} == {"ingested"}


def test_max_pages_caps_a_spider(site: Site, catalog: Catalog) -> None:
    for n in range(60):
        site.pages[f"/p{n}"] = html(f"P{n}", links=tuple(f"/p{m}" for m in range(n, n + 5)))
    urls, sink = crawl(catalog, CrawlSpec(site.url("/p0"), "spider", max_pages=10, max_depth=50))
    assert len(sink.pages) == 10
    assert len([r for r in site.requests if r != "/robots.txt"]) == 10
    assert {u.reason for u in urls.values() if u.state == "skipped"} == {"max_pages"}


def test_map_lists_without_ingesting(site: Site, catalog: Catalog) -> None:
    site.pages["/"] = html("Home", links=("/a", "/b"))
    site.pages["/a"] = html("A")
    site.pages["/b"] = html("B")
    urls, sink = crawl(catalog, CrawlSpec(site.url("/"), "spider", max_pages=10, map_only=True))
    assert sink.pages == []
    assert {u.state for u in urls.values()} == {"listed"}
    assert len(urls) == 3


def test_crawl_delay_from_robots_spaces_requests(site: Site, catalog: Catalog) -> None:
    site.pages["/robots.txt"] = SitePage(
        b"User-agent: *\nCrawl-delay: 1\n", content_type="text/plain"
    )
    site.pages["/"] = html("Home", links=("/a", "/b"))
    site.pages["/a"] = html("A")
    site.pages["/b"] = html("B")
    started = time.monotonic()
    urls, _ = crawl(catalog, CrawlSpec(site.url("/"), "spider", max_pages=10))
    assert sum(u.state == "ingested" for u in urls.values()) == 3
    assert time.monotonic() - started >= 2.0  # three pages, one second apart
    assert site.requests.count("/robots.txt") == 1


def test_429_backs_off_and_retries(site: Site, catalog: Catalog) -> None:
    site.pages["/"] = SitePage(b"busy", status=429, headers={"Retry-After": "1"})
    spec = CrawlSpec(site.url("/"), "single")

    async def recover() -> None:
        await asyncio.sleep(0.5)
        site.pages["/"] = html("Home")

    async def run() -> None:
        job = SiteCrawl("job", spec, options(), catalog, RecordingSink())
        await asyncio.gather(job.run(), recover())

    started = time.monotonic()
    asyncio.run(run())
    [entry] = catalog.crawl_urls("job")
    assert entry.state == "ingested"
    assert site.requests.count("/") == 2
    assert time.monotonic() - started >= 1.0  # Retry-After was honoured


def test_a_resumed_job_fetches_only_what_was_pending(site: Site, catalog: Catalog) -> None:
    for n in range(6):
        site.pages[f"/p{n}"] = html(f"P{n}")
    # The state a crash leaves: two pages done, four pending.
    catalog.add_crawl_urls(
        "job",
        [CrawlUrl(site.url(f"/p{n}"), 0, "ingested" if n < 2 else "pending") for n in range(6)],
    )
    urls, sink = crawl(catalog, CrawlSpec(site.url("/p0"), "sitemap", max_pages=10))
    assert sorted(p.url for p in sink.pages) == [site.url(f"/p{n}") for n in range(2, 6)]
    assert {u.state for u in urls.values()} == {"ingested"}
    assert "/p0" not in site.requests and "/sitemap.xml" not in site.requests


def test_a_resumed_job_fetches_a_pending_page_where_it_was_found(
    site: Site, catalog: Catalog
) -> None:
    """A page linked as `/kb/` is stored as `/kb`; a host that answers only `/kb/` still gets
    asked for `/kb/` by the run that resumes the job."""
    site.pages["/kb/"] = html("Knowledge base")
    catalog.add_crawl_urls("job", [CrawlUrl(site.url("/"), 0, "ingested")])
    catalog.add_crawl_urls(
        "job", [CrawlUrl(site.url("/kb"), 1, "pending", address=site.url("/kb/"))]
    )
    assert catalog.crawl_urls("job", states=("pending",))[0].address == site.url("/kb/")
    urls, sink = crawl(catalog, CrawlSpec(site.url("/"), "spider", max_pages=10))
    assert [p.url for p in sink.pages] == [site.url("/kb")]
    assert urls[site.url("/kb")].state == "ingested", urls
    assert "/kb" not in site.requests and "/kb/" in site.requests


def test_cancel_stops_the_crawl(site: Site, catalog: Catalog) -> None:
    for n in range(40):
        site.pages[f"/p{n}"] = html(f"P{n}", links=(f"/p{n + 1}",))
    stop = {"now": False}
    sink = RecordingSink(delay_s=0.1)

    async def run() -> None:
        job = SiteCrawl(
            "job",
            CrawlSpec(site.url("/p0"), "spider", max_pages=40, max_depth=40),
            options(),
            catalog,
            sink,
            cancelled=lambda: stop["now"],
        )

        async def cancel() -> None:
            while len(sink.pages) < 3:
                await asyncio.sleep(0.05)
            stop["now"] = True

        summary, _ = await asyncio.gather(job.run(), cancel())
        assert summary.cancelled

    asyncio.run(run())
    assert 3 <= len(sink.pages) < 15
    states = {u.state for u in catalog.crawl_urls("job")}
    assert "pending" not in states
    assert any(u.reason == "cancelled" for u in catalog.crawl_urls("job"))


# pure parts ---------------------------------------------------------------------------------


def test_sitemap_parsing_refuses_what_is_not_a_sitemap() -> None:
    assert parse_sitemap(b"<urlset><url><loc> http://a.test/x </loc></url></urlset>") == (
        ["http://a.test/x"],
        [],
    )
    with pytest.raises(ValueError, match="not a sitemap"):
        parse_sitemap(b"<html><body>hi</body></html>")
    with pytest.raises(ValueError, match="readable"):
        parse_sitemap(b'<!DOCTYPE x [<!ENTITY a "aaaa">]><urlset>&a;</urlset>')
    assert robots_sitemaps("User-agent: *\nsitemap: /s.xml\n", "http://a.test/") == [
        "http://a.test/s.xml"
    ]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM:80/a/./b/../c/?utm_source=x&b=2#frag", "http://example.com/a/c?b=2"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com/a%7Eb/?gclid=1", "https://example.com/a~b"),
        ("http://example.com:8080//x//y/", "http://example.com:8080/x/y"),
        # A fragment that routes a single-page app names a page of its own; the root route and
        # an in-page anchor do not.
        ("http://Docs.test/#/plugins/", "http://docs.test/#/plugins"),
        ("http://docs.test/app/#!/users/./7", "http://docs.test/app#!/users/7"),
        ("http://docs.test/#/", "http://docs.test/"),
        ("http://docs.test/guide#install", "http://docs.test/guide"),
        # A route's own in-page anchor, as hash routers write a link to a heading, is not a page.
        ("http://docs.test/#/#contributors", "http://docs.test/"),
        ("http://docs.test/#/DEVELOPMENT#release", "http://docs.test/#/DEVELOPMENT"),
    ],
)
def test_canonical_urls(url: str, expected: str) -> None:
    assert canonicalize(url) == expected


@given(
    st.sampled_from(["http", "https", "HTTP"]),
    st.sampled_from(["example.com", "Docs.Example.com", "127.0.0.1:8080", "[::1]:81"]),
    st.lists(st.text(min_size=0, max_size=8), max_size=4),
    st.lists(st.tuples(st.text(max_size=5), st.text(max_size=5)), max_size=3),
    st.text(max_size=6),
)
def test_canonicalisation_is_idempotent(
    scheme: str, host: str, segments: list[str], query: list[tuple[str, str]], fragment: str
) -> None:
    from urllib.parse import quote, urlencode

    url = f"{scheme}://{host}/" + "/".join(quote(s, safe="") for s in segments)
    if query:
        url += "?" + urlencode(query)
    url += "#" + quote(fragment)
    once = canonicalize(url)
    assert canonicalize(once) == once
    assert "#" not in once or is_route(once)


def test_route_links_are_followed_only_from_rendered_pages() -> None:
    """`#/plugins` in a page rendered in a browser is another page; in HTML fetched over HTTP
    it is the same document, and an in-page anchor is never a link."""
    assert absolute_link("http://d.test/docs/", "#/plugins", routes=True) == (
        "http://d.test/docs#/plugins"
    )
    assert absolute_link("http://d.test/docs/", "#/plugins") is None
    assert absolute_link("http://d.test/", "/x#/y") == "http://d.test/x"
    assert absolute_link("http://d.test/", "#install", routes=True) is None


def test_scope_rules() -> None:
    scope = Scope("https://docs.example.com/", include=("/guide/*",), exclude=("*.pdf",))
    assert scope.reason_out("https://docs.example.com/guide/a") is None
    assert scope.reason_out("https://docs.example.com/blog/a") == "out_of_scope:include"
    assert scope.reason_out("https://docs.example.com/guide/a.pdf") == "out_of_scope:exclude"
    assert scope.reason_out("https://api.example.com/guide/a") == "out_of_scope:host"
    wide = Scope("https://docs.example.com/", allow_subdomains=True)
    assert wide.reason_out("https://api.docs.example.com/x") is None
    assert wide.reason_out("https://example.org/x") == "out_of_scope:host"


def test_scope_keeps_a_crawl_inside_the_tenants_allowed_domains() -> None:
    scope = Scope("http://acme.test/", allow_subdomains=True, allowed_hosts=("acme.test",))
    assert scope.reason_out("http://acme.test/guide") is None
    assert scope.reason_out("http://api.acme.test/x") == "out_of_scope:domain_not_allowed"
    assert scope.reason_out("http://evil.test/") == "out_of_scope:host"
    wide = Scope("http://acme.test/", allow_subdomains=True, allowed_hosts=("*.acme.test",))
    assert wide.reason_out("http://api.acme.test/x") is None
    assert Scope("http://acme.test/").reason_out("http://acme.test/a") is None  # default "*"
