"""POST /agent/scan and /agent/context with a DOM: the agent's own page read by the explorer's
scanner in real headless Chromium, ranked for a goal with the real embedding model; paging,
the first screen, patterns, suggestions, the prompt text, the snapshot it stores, and the
errors for DOMs that are too large, not HTML or have nothing to act on."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from crawl import BrowserOptions, browser_missing
from spa_phases.scan import DomScanner, ScanError, _inert, parse_scan
from tests.conftest import Site

pytestmark = pytest.mark.skipif(
    browser_missing(BrowserOptions()) is not None, reason=str(browser_missing(BrowserOptions()))
)

URL = "https://shop.example.test/shoes?page=1"
PRODUCTS = ["Red Nike", "Blue Adidas", "Green Puma", "Black Asics", "White Reebok", "Grey Vans"]
SHOP = (
    """<html><head><title>Running shoes</title></head><body>
<div id="cookie-banner"><p>We use cookies to improve your visit.</p>
<button>Accept all</button><button>Cookie settings</button></div>
<header><a href="/">Shoe shop</a>
<form role="search" action="/search"><input type="search" name="q" placeholder="Search products">
<button>Search</button></form><a href="/login">Sign in</a><a href="/cart">Cart (0)</a></header>
<aside class="filters"><h2>Filters</h2>
<label><input type="checkbox" name="brand" value="nike"> Nike</label>
<label><input type="checkbox" name="brand" value="adidas"> Adidas</label>
<label><input type="checkbox" name="colour" value="red"> Red</label></aside>
<main><label>Sort by <select name="sort"><option>Relevance</option>
<option>Price: low to high</option><option>Newest</option></select></label>
<ul class="results">"""
    + "".join(
        f'<li class="card"><a href="/p/{i}">{name} running shoe</a>'
        f'<span class="price">${40 + i}.99</span><button>Add to cart</button></li>'
        for i, name in enumerate(PRODUCTS)
    )
    + """</ul><nav class="pagination" aria-label="Pagination"><a href="?page=1">1</a>
<a href="?page=2">2</a><a href="?page=2" rel="next">Next</a></nav>
<div style="margin-top: 3000px"><a href="/about">About the shop</a></div></main></body></html>"""
)


def scan(client: TestClient, dom: str = SHOP, **extra: object) -> dict:
    response = client.post("/agent/scan", json={"url": URL, "dom": dom, **extra})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_scan_ranks_the_right_element_first_for_the_goal(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    found = scan(client, goal="add the red Nike shoes to my cart", maxElements=5)
    first = found["elements"][0]
    assert (first["label"], first["type"]) == ("Add to cart", "button"), found["text"]
    assert first["context"].startswith("Red Nike running shoe $40.99"), first
    assert first["score"] > found["elements"][-1]["score"]
    nxt = scan(client, goal="go to the next page of results", maxElements=3)["elements"][0]
    assert (nxt["label"], nxt["role"]) == ("Next", "pagination")
    box = scan(client, goal="search for trail shoes", maxElements=3)["elements"][0]
    assert (box["type"], box["role"]) == ("search", "search_box")
    adidas = scan(client, goal="show only Adidas shoes", maxElements=3)["elements"][0]
    assert (adidas["label"], adidas["type"], adidas["region"]) == (
        "Adidas",
        "checkbox",
        "aside: Filters",
    )


def test_scan_reads_the_page_patterns_and_suggests_next_actions(
    make_client: Callable[..., TestClient],
) -> None:
    found = scan(make_client(), goal="buy the cheapest shoes")
    patterns = {p["type"]: p for p in found["patterns"]}
    assert set(patterns) >= {
        "cookie_banner",
        "search",
        "login",
        "product_listing",
        "pagination",
        "filters",
        "sort",
        "cart",
    }, patterns
    assert patterns["product_listing"]["count"] == 6
    assert patterns["filters"]["count"] == 3
    by_id = {e["id"]: e for e in found["elements"]}
    suggestions = found["suggestions"]
    assert suggestions[0]["name"] == "accept_cookies"  # a blocker comes first
    assert suggestions[0]["reason"] == "a consent banner blocks the page"
    assert by_id[suggestions[0]["elements"][0]]["label"] == "Accept all"
    named = {s["name"]: s for s in suggestions}
    assert named["extract_products"]["reason"] == "6 product links with prices"
    assert named["sort"]["parameters"]["options"] == ["Relevance", "Price: low to high", "Newest"]
    assert named["filter"]["parameters"]["options"] == ["Nike", "Adidas", "Red"]
    assert by_id[named["next_page"]["elements"][0]]["label"] == "Next"


def test_scan_pages_through_elements_and_keeps_to_the_first_screen(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    first = scan(client, maxElements=10)
    summary = first["summary"]
    total = summary["totalElements"]
    assert total == sum(summary["elementTypes"].values()) > 20
    assert summary["includedElements"] == 10
    assert summary["paginationHints"] == {
        "offset": 0,
        "nextOffset": 10,
        "remaining": total - 10,
        "pageControls": ["next_page"],
    }
    assert first["text"].startswith(f"# Showing 10 of {total} elements (1-10)")
    assert "# To see more: scan again with offset=10" in first["text"]
    assert [e["id"] for e in first["elements"]] == list(range(10))  # no goal: document order
    rest = scan(client, maxElements=500, offset=10)
    ids = [e["id"] for e in first["elements"] + rest["elements"]]
    assert sorted(ids) == list(range(total))  # every element once
    assert rest["summary"]["paginationHints"]["nextOffset"] is None
    screen = scan(client, viewportOnly=True, maxElements=500)
    labels = {e["label"] for e in screen["elements"]}
    assert "Accept all" in labels and "About the shop" not in labels
    assert screen["summary"]["filtersApplied"] == ["viewportOnly (top < 720px)"]


def test_scan_refuses_doms_it_cannot_use(make_client: Callable[..., TestClient]) -> None:
    client = make_client(spa={"max_dom_bytes": 1000})
    big = client.post("/agent/scan", json={"url": URL, "dom": SHOP})
    assert big.status_code == 413 and big.json()["error"] == "too_large", big.text
    assert "1000-byte limit" in big.json()["message"]
    text = client.post("/agent/scan", json={"url": URL, "dom": "just some words"})
    assert text.status_code == 422 and text.json()["error"] == "invalid_dom"
    assert "no HTML tags" in text.json()["message"]
    inert = client.post("/agent/scan", json={"url": URL, "dom": "<p>Nothing to click.</p>"})
    assert inert.status_code == 422 and inert.json()["error"] == "invalid_dom"
    assert "no element an agent could act on" in inert.json()["message"]
    missing = client.post("/agent/scan", json={"url": URL})
    assert missing.status_code == 422 and "dom" in missing.json()["message"], missing.text
    bad_url = client.post("/agent/scan", json={"url": "not a url", "dom": SHOP[:900]})
    assert bad_url.status_code == 422 and "not a url" in bad_url.json()["message"], bad_url.text
    many = client.post("/agent/scan", json={"url": URL, "dom": "<a href=/>x</a>", "maxElements": 0})
    assert many.status_code == 422 and "maxElements" in many.json()["message"], many.text


def test_context_with_a_dom_scans_it_and_stores_it_as_a_snapshot(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    body = {"url": URL, "goal": "add the red Nike shoes to my cart", "dom": SHOP}
    context = client.post("/agent/context", json={**body, "maxElements": 4})
    assert context.status_code == 200, context.text
    data = context.json()
    assert data["scan"]["elements"][0]["context"].startswith("Red Nike running shoe")
    assert len(data["scan"]["elements"]) == 4
    assert data["snapshot"]["phase"] == "initial" and data["snapshot"]["chunks"] >= 1
    # What the agent saw is now knowledge of the page, found by the same call.
    assert any("Red Nike running shoe" in c["text"] for c in data["chunks"]), data["chunks"]
    after = SHOP.replace("Cart (0)", "Cart (1)").replace(
        "<main>", "<main><p>Red Nike running shoe was added to your cart.</p>"
    )
    second = client.post(
        "/agent/context",
        json={**body, "dom": after, "lastAction": "click(body > main > ul > li > button)"},
    ).json()
    assert second["snapshot"]["phase"] == "post_interaction"
    assert second["snapshot"]["documentId"] is not None  # something new was stored
    found = client.get(
        "/knowledge/resolve", params={"url": URL, "query": "was the shoe added to the cart?"}
    ).json()["chunks"]
    assert any("added to your cart" in c["text"] for c in found[:3]), found
    plain = client.post("/agent/context", json={"url": URL, "goal": "x"}).json()
    assert plain["scan"] is None and plain["snapshot"] is None


def test_the_agents_dom_reaches_nothing_outside_the_browser(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """The DOM comes from an agent: nothing in it may make lore's Chromium fetch anything, on
    loopback included (stylesheets, images, frames, preconnects, a refresh)."""
    dom = f"""<html><head><meta http-equiv="refresh" content="0;url={site.url("/refresh")}">
<link rel="stylesheet" href="{site.url("/style.css")}"><link rel="preconnect" href="{site.base}">
<link rel="prefetch" href="{site.url("/prefetch")}"><script src="{site.url("/app.js")}"></script>
</head><body><img src="{site.url("/pixel.png")}"><iframe src="{site.url("/frame")}"></iframe>
<video src="{site.url("/video.mp4")}"></video><form action="{site.url("/post")}">
<button>Send</button></form><a href="{site.url("/next")}">Next</a></body></html>"""
    found = scan(make_client(), dom=dom)
    assert {e["label"] for e in found["elements"]} == {"Send", "Next"}
    time.sleep(1.0)  # anything the page might still try
    assert site.requests == [] and site.posts == [], site.requests


def test_fetching_attributes_are_renamed_without_changing_what_the_scan_reads(
    make_client: Callable[..., TestClient],
) -> None:
    """Images, media, frames, scripts and stylesheets fetch nothing in the scan page, so their
    fetching attributes are renamed before it parses the DOM; an attribute value that only
    says "src=", links and the document's base are left as they were."""
    assert _inert('<IMG alt="see src=x" SRC=a.png srcset="b 2x">') == (
        '<IMG data-lore-alt="see src=x" data-lore-SRC=a.png data-lore-srcset="b 2x">'
    )
    assert _inert("<link rel=stylesheet href='x.css'><base href=/d/><a href=y>") == (
        "<link rel=stylesheet data-lore-href='x.css'><base href=/d/><a href=y>"
    )
    # Images stand in as boxes (their alt text read as the scanner's alt): a link that holds
    # one is visible by its box; one whose image is decorative (an empty alt), hidden by the
    # page or sized 0 by its attributes is not.
    dom = """<!doctype html><html><head><base href="https://shop.example.test/deals/">
<style>.gone img { display: none }</style></head><body>
<a href="cart"><img src="cart.png" alt="Cart src=top"></a>
<a href="next"><img src="n.png" srcset="n2.png 2x" alt="Next deals"></a>
<a href="spacer" title="Spacer"><img src="s.gif" alt=""></a>
<a href="pixel" title="Pixel"><img src="p.gif" alt="Pixel" width="0" height="0"></a>
<a href="gone" class="gone"><img src="g.png" alt="Gone"></a>
<img src="x.png" alt="Close" role="button" tabindex="0"></body></html>"""
    found = scan(make_client(), dom=dom)
    got = {(e["label"], e["href"], e["visible"]) for e in found["elements"]}
    assert got == {
        ("Cart src=top", "https://shop.example.test/deals/cart", True),
        ("Next deals", "https://shop.example.test/deals/next", True),
        ("Spacer", "https://shop.example.test/deals/spacer", False),
        ("Pixel", "https://shop.example.test/deals/pixel", False),
        ("Gone", "https://shop.example.test/deals/gone", False),
        ("Close", "", True),  # an image that is a control itself
    }, found["elements"]
    # A custom element whose name starts like a fetching tag's is not one.
    assert _inert('<img-slider alt="x" src=a><link-card href="/x">') == (
        '<img-slider alt="x" src=a><link-card href="/x">'
    )


def test_scan_reads_what_real_pages_throw_at_it(make_client: Callable[..., TestClient]) -> None:
    """A consent class on <html> itself, a select with an empty option, a disabled control,
    what the agent's browser marked hidden (its stylesheets do not come along), a link in a
    shut `details` (Chromium lays it out when asked, but draws nothing of it), text only."""
    client = make_client()
    page = """<html class="cookie-consent show--consent"><body>
<label>Sort by <select name="sort"><option></option><option>Price</option><option>Rating</option>
</select></label><button disabled>Next</button><a href="/help">Help</a>
<div role="dialog" aria-label="Newsletter" data-lore-hidden><button>Close</button></div>
<details><summary>Guides</summary><a href="/install">Install</a></details>
</body></html>"""
    found = scan(client, dom=page)
    by_label = {e["label"]: e for e in found["elements"]}
    assert by_label["Sort by"]["options"] == ["", "Price", "Rating"]
    assert by_label["Next"]["disabled"] and by_label["Next"]["visible"]
    assert not by_label["Close"]["visible"]  # inside what the agent's browser hid
    install = next(e for e in found["elements"] if e["href"].endswith("/install"))
    assert by_label["Guides"]["visible"] and not install["visible"]
    assert "modal" not in {p["type"] for p in found["patterns"]}
    assert all(s["name"] != "close_dialog" for s in found["suggestions"])
    text = "<html><body><h1>Opening hours</h1><p>We open at nine.</p></body></html>"
    context = client.post("/agent/context", json={"url": URL, "dom": text, "query": "open"})
    assert context.status_code == 200, context.text  # no controls: still knowledge
    data = context.json()
    assert data["scan"]["elements"] == [] and data["snapshot"]["chunks"] >= 1
    assert any("We open at nine" in c["text"] for c in data["chunks"])
    refused = client.post("/agent/context", json={"url": URL, "dom": "no markup at all"})
    assert refused.status_code == 422 and refused.json()["error"] == "invalid_dom"


def navigations_of(scanner: DomScanner) -> list[str]:
    """The URLs `scanner`'s pages navigate to (frames included), in order, as they happen."""
    navigations: list[str] = []
    serve = scanner._serve

    def counted(page: object) -> Callable[[object], object]:
        handler = serve(page)

        async def route(route: Any) -> None:
            if route.request.is_navigation_request():
                navigations.append(route.request.url)
            await handler(route)

        return route

    scanner._serve = counted  # type: ignore[method-assign]
    return navigations


def test_the_next_dom_of_a_site_replaces_the_last_one_in_place(site: Site) -> None:
    """A page already on the DOM's site gets the next DOM written into it, not navigated to:
    the scan sees that DOM alone, its links resolve against its own URL, and nothing in it
    reaches the network (a refresh, a stylesheet, a frame, a form's action). Another site, or
    a DOM after one that set a Content-Security-Policy, is navigated to."""
    scanner = DomScanner(BrowserOptions(), pages=1)
    navigations = navigations_of(scanner)
    # An element named as the scanner the page keeps in its window is not taken for it.
    old = (
        "<html><head><title>Old</title></head><body><div id='__loreScan'></div>"
        "<a href='one'>One</a><button>Old</button>"
    )
    new = f"""<html><head><title>New</title>
<meta http-equiv="refresh" content="0;url={site.url("/r")}">
<link rel="stylesheet" href="{site.url("/style.css")}"></head><body><a href="two">Two</a>
<iframe src="{site.url("/frame")}"></iframe><form action="{site.url("/post")}"><button>Send</button>
</form></body></html>"""
    strict = "<html><head><meta http-equiv='Content-Security-Policy' content=\"style-src 'none'\">"
    scans = (
        ("https://shop.example.test/a/", old),
        ("https://shop.example.test/b/list?page=2", new),  # in place
        ("https://other.example.test/c/", old),
        # An image's alt text stays where a policy could refuse the stand-in box's style.
        ("https://other.example.test/d/", strict + "<body><a href='x'><img alt='X'></a>"),
        ("https://other.example.test/e/", old),
    )

    async def run() -> list[dict]:
        try:
            found = [parse_scan(await scanner.scan(url, dom)) for url, dom in scans]
            await asyncio.sleep(1.0)  # anything the page might still try
            return found
        finally:
            await scanner.aclose()

    first, second, elsewhere, policy, after_policy = asyncio.run(run())
    assert [(c["label"], c["visible"]) for c in policy["candidates"]] == [("X", True)], policy
    urls = {c["label"]: c["url"] for c in second["candidates"]}
    assert (second["title"], urls) == (
        "New",
        {"Two": "https://shop.example.test/b/two", "Send": ""},
    ), second
    assert {c["url"] for c in first["candidates"]} == {"https://shop.example.test/a/one", ""}
    assert {c["url"] for c in elsewhere["candidates"]} == {"https://other.example.test/c/one", ""}
    assert {c["url"] for c in after_policy["candidates"]} == {scans[4][0] + "one", ""}
    assert [u for u in navigations if "example.test" in u] == [scans[i][0] for i in (0, 2, 4)]
    assert site.requests == [] and site.posts == [], site.requests


def test_agents_on_two_sites_taking_turns_keep_a_page_each() -> None:
    """Two scan pages and DOMs of two sites in turn: each site keeps the page its first DOM was
    navigated to, and its later DOMs are written in place (had the page used last been taken,
    every DOM would have been navigated to). Selectors count siblings of the same tag."""
    scanner = DomScanner(BrowserOptions(), pages=2)
    navigations = navigations_of(scanner)
    mixed = (
        "<html><body><div id='box'><span>a</span><a href='/1'>One {n}</a><span>b</span>"
        "<a href='/2'>Two {n}</a><p>c</p></div></body></html>"
    )
    scans = [
        (f"https://{site}.example.test/{n}", mixed.format(n=f"{site}{n}"))
        for n in range(3)
        for site in ("a", "b")
    ]

    async def run() -> list[dict]:
        try:
            return [parse_scan(await scanner.scan(url, dom)) for url, dom in scans]
        finally:
            await scanner.aclose()

    found = asyncio.run(run())
    assert navigations == [scans[0][0], scans[1][0]], navigations
    for (url, _), scan_ in zip(scans, found, strict=True):
        name = url.split("//")[1][0] + url[-1]
        selectors = {c["label"]: c["selector"] for c in scan_["candidates"]}
        assert selectors == {
            f"One {name}": "#box > a:nth-of-type(1)",
            f"Two {name}": "#box > a:nth-of-type(2)",
        }, scan_


LINK = "<html><body><a href='/x'>Link {n}</a>{more}</body></html>"
BIG = "".join(
    f"<div><a href='/p/{i}'>Item {i}</a><button>Buy {i}</button></div>" for i in range(3000)
)


def labels_of(text: str) -> list[str]:
    return [c["label"] for c in parse_scan(text)["candidates"]][:1]


async def crash(scanner: DomScanner) -> None:
    """Chromium crashes (its own CDP command), not closed through Playwright."""
    session = await scanner._browser.new_browser_cdp_session()
    with contextlib.suppress(Exception):
        await session.send("Browser.crash")


async def page_taken(scanner: DomScanner) -> None:
    """Until a scan has the one page."""
    async with asyncio.timeout(30):
        while scanner._free:
            await asyncio.sleep(0.005)


async def scans_waiting(scanner: DomScanner, n: int) -> None:
    """Until `n` scans wait for a page (the one page is busy with another)."""
    async with asyncio.timeout(30):
        while len(scanner._waiting) < n:
            await asyncio.sleep(0.005)


def test_a_scanner_whose_browser_crashed_between_scans_starts_another() -> None:
    """Chromium crashed while no scan ran: the next scan starts a new one and reads its DOM
    (no scan fails on a page of the dead browser)."""
    scanner = DomScanner(BrowserOptions(), pages=1)

    async def run() -> tuple[list[str], list[str], int]:
        try:
            before = labels_of(await scanner.scan(URL, LINK.format(n=1, more="")))
            await crash(scanner)
            async with asyncio.timeout(30):
                while scanner._started:  # the crash is told through "disconnected"
                    await asyncio.sleep(0.01)
            after = labels_of(await scanner.scan(URL, LINK.format(n=2, more="")))
            return before, after, scanner._browsers
        finally:
            await scanner.aclose()

    assert asyncio.run(run()) == (["Link 1"], ["Link 2"], 2)


def test_a_crash_under_a_scan_fails_that_scan_alone() -> None:
    """One page; a scan is reading a large DOM and two wait for the page when Chromium
    crashes. The scan under way fails with a ScanError (502 over HTTP); the two waiting start
    a new Chromium and each gets its own DOM's answer; the pool holds its one page again."""
    scanner = DomScanner(BrowserOptions(), pages=1, timeout_s=120)
    huge = BIG * 8  # seconds of reading: still under way when Chromium crashes

    async def run() -> tuple[list[Any], int, int]:
        try:
            await scanner.scan(URL, LINK.format(n=0, more=""))  # Chromium started
            tasks = [asyncio.create_task(scanner.scan(URL, LINK.format(n=1, more=huge)))]
            await page_taken(scanner)
            tasks += [
                asyncio.create_task(scanner.scan(URL, LINK.format(n=n, more=""))) for n in (2, 3)
            ]
            await scans_waiting(scanner, 2)
            await crash(scanner)
            async with asyncio.timeout(60):
                done = await asyncio.gather(*tasks, return_exceptions=True)
            return done, len(scanner._free), scanner._browsers
        finally:
            await scanner.aclose()

    (first, second, third), free, browsers = asyncio.run(run())
    assert isinstance(first, ScanError), str(first)[:200]
    assert (labels_of(second), labels_of(third)) == (["Link 2"], ["Link 3"])
    assert (free, browsers) == (1, 2)


def test_a_scan_cancelled_while_it_waits_loses_no_page() -> None:
    """One page: a scan cancelled while it waits for the page, and one cancelled while it
    reads its DOM, leave the page to the next scan (a page lost there would leave every later
    scan waiting for ever)."""
    scanner = DomScanner(BrowserOptions(), pages=1)

    async def run() -> tuple[list[str], int]:
        try:
            await scanner.scan(URL, LINK.format(n=0, more=""))
            reading = asyncio.create_task(scanner.scan(URL, LINK.format(n=1, more=BIG)))
            await page_taken(scanner)
            waiting = asyncio.create_task(scanner.scan(URL, LINK.format(n=2, more="")))
            await scans_waiting(scanner, 1)
            waiting.cancel()
            reading.cancel()
            await asyncio.gather(reading, waiting, return_exceptions=True)
            async with asyncio.timeout(30):
                last = labels_of(await scanner.scan(URL, LINK.format(n=3, more="")))
            return last, len(scanner._free)
        finally:
            await scanner.aclose()

    assert asyncio.run(run()) == (["Link 3"], 1)


def test_a_closed_scanner_fails_the_scans_that_wait() -> None:
    """Closed while a scan waits for its one page (the server stopping): that scan fails with
    a ScanError that says so instead of waiting for ever; a scan after that starts another
    Chromium."""
    scanner = DomScanner(BrowserOptions(), pages=1)

    async def run() -> tuple[list[Any], bool, list[str]]:
        try:
            await scanner.scan(URL, LINK.format(n=0, more=""))
            tasks = [asyncio.create_task(scanner.scan(URL, LINK.format(n=1, more=BIG)))]
            await page_taken(scanner)
            tasks.append(asyncio.create_task(scanner.scan(URL, LINK.format(n=2, more=""))))
            await scans_waiting(scanner, 1)
            await scanner.aclose()
            async with asyncio.timeout(30):
                done = await asyncio.gather(*tasks, return_exceptions=True)
            closed = scanner._browser is None
            return done, closed, labels_of(await scanner.scan(URL, LINK.format(n=3, more="")))
        finally:
            await scanner.aclose()

    (_, waited), closed, later = asyncio.run(run())
    assert isinstance(waited, ScanError) and "closed" in str(waited), str(waited)[:200]
    assert (closed, later) == (True, ["Link 3"])


def test_more_scans_at_once_than_pages_each_get_their_own_dom() -> None:
    """Six scans of three sites at once on two pages: each answer is its own DOM's, and both
    pages are free again afterwards."""
    scanner = DomScanner(BrowserOptions(), pages=2)
    scans = [
        (f"https://{site}.example.test/{n}", f"<html><body><a href='/x'>{site} {n}</a></body>")
        for n in range(2)
        for site in ("a", "b", "c")
    ]

    async def run() -> tuple[list[dict], int]:
        try:
            found = await asyncio.gather(*(scanner.scan(url, dom) for url, dom in scans))
            return [parse_scan(text) for text in found], len(scanner._free)
        finally:
            await scanner.aclose()

    found, free = asyncio.run(run())
    labels = [[c["label"] for c in scan_["candidates"]] for scan_ in found]
    assert labels == [[url.split("//")[1][0] + " " + url[-1]] for url, _ in scans], labels
    assert free == 2
