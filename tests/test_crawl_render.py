"""Crawls that render pages in Debian's headless Chromium (real browser, real local sites on
127.0.0.1): script-built content and links, the page's own requests going through lore's safe
fetcher, 'auto' rendering only the pages that need it, a page that never loads, and the API
refusing a render it cannot do."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from crawl import BrowserOptions, CrawlOptions, CrawlSpec, SiteCrawl, browser_missing
from crawl.browser import DRAWING, close_browser, launch_browser
from retrieval import Catalog, CrawlUrl
from tests.conftest import Page, Site, wait_for_job
from tests.test_crawl import RecordingSink, options

needs_chromium = pytest.mark.skipif(
    browser_missing(BrowserOptions()) is not None,
    reason=str(browser_missing(BrowserOptions())),
)

SHELL = (
    b"<html><head><title>Acme app</title></head><body><div id='root'></div>"
    b"<noscript>You need to enable JavaScript to run this app.</noscript>"
    b"<script src='/static/app.js'></script></body></html>"
)
APP_JS = b"""
fetch('/api/items.json').then(r => r.json()).then(items => {
  const root = document.getElementById('root');
  root.innerHTML = '<h1>Product catalogue</h1>' + items.map(i =>
    `<section><h2>${i.name}</h2><p>${i.text}</p><a href="/items/${i.id}">details</a></section>`
  ).join('');
  return fetch('http://10.9.8.7/admin').then(() => 'reached', () => 'refused');
}).then(outcome => {
  document.body.insertAdjacentHTML('beforeend', `<p id="internal">internal: ${outcome}</p>`);
});
"""
ITEMS = (
    b'[{"id": 1, "name": "Anvil", "text": "A forged steel anvil for heavy work."},'
    b' {"id": 2, "name": "Rocket skates", "text": "Skates that reach sixty miles an hour."}]'
)
STATIC = (
    b"<html><head><title>About</title><script>var analytics = 1;</script></head><body>"
    b"<h1>About Acme</h1><p>"
    + b"Acme has made tools for roadrunner enthusiasts since 1949. " * 5
    + b"</p></body></html>"
)


def spa(site: Site) -> None:
    site.pages["/app"] = Page(SHELL)
    site.pages["/static/app.js"] = Page(APP_JS, content_type="application/javascript")
    site.pages["/api/items.json"] = Page(ITEMS, content_type="application/json")
    for n, name in ((1, "Anvil"), (2, "Rocket skates")):
        site.pages[f"/items/{n}"] = Page(
            f"<html><body><h1>{name}</h1><p>Details of the {name}.</p></body></html>".encode()
        )
    site.pages["/about"] = Page(STATIC)


def browser_options(**browser: object) -> CrawlOptions:
    # Loopback is where the sites live; 10.9.8.7 and the rest stay blocked.
    base = options(allow_private_addresses=False, allow_networks=("127.0.0.1/32",))
    return replace(base, browser=BrowserOptions(**browser))  # type: ignore[arg-type]


def run(
    tmp_path: Path, spec: CrawlSpec, opts: CrawlOptions
) -> tuple[dict[str, CrawlUrl], RecordingSink]:
    catalog = Catalog(f"sqlite:///{tmp_path / 'lore.db'}")
    sink = RecordingSink()
    asyncio.run(SiteCrawl("job", spec, opts, catalog, sink).run())
    return {u.url: u for u in catalog.crawl_urls("job")}, sink


@needs_chromium
def test_browser_render_runs_scripts_follows_their_links_and_keeps_the_address_rules(
    site: Site, tmp_path: Path
) -> None:
    spa(site)
    spec = CrawlSpec(site.url("/app"), strategy="spider", max_pages=10, render="browser")
    report, sink = run(tmp_path, spec, browser_options())
    pages = {p.url: p.body.decode() for p in sink.pages}
    app = pages[site.url("/app")]
    assert "A forged steel anvil for heavy work." in app  # built by the script from the JSON
    assert "internal: refused" in app  # the page's request to 10.9.8.7 was refused
    # Links that exist only in the rendered DOM were followed.
    assert report[site.url("/items/1")].state == "ingested"
    assert report[site.url("/items/2")].state == "ingested"
    assert "Details of the Anvil." in pages[site.url("/items/1")]
    # The script's request reached the site through lore's fetcher, not Chromium's network
    # stack (which would send its Sec-Fetch-* headers).
    api_calls = [h for path, h in site.headers if path == "/api/items.json"]
    assert api_calls and all("Sec-Fetch-Mode" not in h for h in api_calls)
    assert all(h["User-Agent"].startswith("lore/") for h in api_calls)


# A documentation sidebar as site generators draw it: its categories are collapsed, and their
# links exist only once opened (a category inside a category, too). Beside them, a link that
# says it is collapsed but goes to a page (not clicked: it would leave), a menu toggle
# hidden at this width (not clicked: it would hide the sidebar) and a theme picker (not
# clicked: as Headless UI's does, it hides the rest of the page while its choices are open).
# The last category is drawn as Vocs draws one: shut by a class on its section, headed by a
# `role=button` with no `aria-expanded` that holds a chevron button of its own (a click on
# both would shut it again).
KB = b"""<html><head><title>Knowledge base</title></head><body>
<nav class="sidebar">
  <button class="menu" style="display: none" aria-expanded="false">Menu</button>
  <button class="theme" aria-haspopup="listbox" aria-expanded="false">System</button>
  <a href="/kb/elsewhere" aria-expanded="false">Elsewhere</a>
  <div><button aria-expanded="false" data-group="setup">Setup</button></div>
  <div><a href="#" role="button" aria-expanded="false" data-group="ops">Operations</a></div>
  <section class="level levelCollapsed"><div role="button" tabindex="0" class="head">Help
    <div role="button" tabindex="0" aria-label="toggle section">&gt;</div></div></section>
</nav><main><h1>Knowledge base</h1><p>Start with the setup pages.</p></main>
<script>
document.querySelector('.head').addEventListener('click', (e) => {
  const section = e.currentTarget.parentElement;
  if (section.classList.toggle('levelCollapsed')) section.lastElementChild.remove();
  else section.insertAdjacentHTML('beforeend', '<div><a href="/kb/faq">FAQ</a></div>');
});
const groups = {
  setup: '<a href="/kb/install">Install</a><a href="/kb/upgrade">Upgrade</a>',
  ops: '<a href="/kb/backups">Backups</a>'
    + '<div><button aria-expanded="false" data-group="deep">More</button></div>',
  deep: '<a href="/kb/restore">Restore</a>',
};
document.addEventListener('click', (e) => {
  const toggle = e.target.closest('[data-group]');
  if (toggle) {
    e.preventDefault();
    toggle.setAttribute('aria-expanded', 'true');
    toggle.parentElement.insertAdjacentHTML('beforeend', groups[toggle.dataset.group]);
  }
  if (e.target.closest('.menu')) document.querySelector('.sidebar').remove();
  if (e.target.closest('.theme')) {
    e.target.setAttribute('aria-expanded', 'true');
    for (const el of document.body.children) el.setAttribute('aria-hidden', 'true');
    const choices = document.body.appendChild(document.createElement('ul'));
    choices.setAttribute('role', 'listbox');
  }
});
</script></body></html>"""
KB_PAGES = ("install", "upgrade", "backups", "restore", "faq")


@needs_chromium
def test_the_links_in_a_sidebar_s_collapsed_categories_are_followed(
    site: Site, tmp_path: Path
) -> None:
    site.pages["/kb/"] = Page(KB)
    site.pages["/kb"] = Page(b"", status=301, headers={"Location": "/kb/"})  # as servers do
    for name in (*KB_PAGES, "elsewhere"):
        site.pages[f"/kb/{name}"] = Page(
            f"<html><body><h1>{name}</h1><p>How to {name} the cluster.</p></body></html>".encode()
        )
    spec = CrawlSpec(site.url("/kb/"), strategy="spider", max_pages=10, render="browser")
    report, sink = run(tmp_path, spec, browser_options())
    for name in KB_PAGES:
        assert report[site.url(f"/kb/{name}")].state == "ingested", name
    home = next(p.body.decode() for p in sink.pages if p.url == site.url("/kb"))
    assert "Start with the setup pages." in home and 'class="sidebar"' in home
    assert 'role="listbox"' not in home and 'aria-hidden="true"' not in home


@needs_chromium
def test_a_page_and_a_frame_that_redirect_render_where_they_end(site: Site, tmp_path: Path) -> None:
    # The page's script is linked relative to where the redirect ends, and so is found only
    # there; the frame's redirect must not take the page away with it: the frame's words are
    # read in its place, inside the page.
    site.pages["/shop"] = Page(b"", status=301, headers={"Location": "/shop/"})
    site.pages["/shop/"] = Page(
        b"<html><body><main></main><iframe src='/widget'></iframe>"
        b"<script src='app.js'></script></body></html>"
    )
    site.pages["/shop/app.js"] = Page(
        b"document.querySelector('main').innerHTML = '<h1>Shop</h1><p>Anvils ship today.</p>';",
        content_type="application/javascript",
    )
    site.pages["/widget"] = Page(b"", status=302, headers={"Location": "/widget/"})
    site.pages["/widget/"] = Page(b"<html><body><p>Frame widget.</p></body></html>")
    spec = CrawlSpec(site.url("/shop"), render="browser")
    report, sink = run(tmp_path, spec, browser_options())
    assert report[site.url("/shop")].state == "ingested"
    body = sink.pages[0].body.decode()
    assert "<main><h1>Shop</h1><p>Anvils ship today.</p></main>" in body, body
    assert '<div src="/widget"><p>Frame widget.</p></div>' in body, body


@needs_chromium
def test_auto_renders_only_pages_without_content_of_their_own(site: Site, tmp_path: Path) -> None:
    spa(site)
    site.pages["/"] = Page(b"<html><body><a href='/app'>app</a> <a href='/about'>about</a></body>")
    spec = CrawlSpec(site.url("/"), strategy="spider", max_pages=3, max_depth=1, render="auto")
    report, sink = run(tmp_path, spec, browser_options())
    pages = {p.url: p for p in sink.pages}
    assert "Skates that reach sixty miles an hour." in pages[site.url("/app")].body.decode()
    assert pages[site.url("/app")].content_type == "text/html; charset=utf-8"
    # A page with text of its own is stored exactly as served (no rendering, no API calls).
    assert pages[site.url("/about")].body == STATIC
    assert site.requests.count("/api/items.json") == 1
    assert report[site.url("/about")].state == "ingested"


# An app that draws its page a while after its last request ends (its scripts still running,
# here a timer): meanwhile a loading skeleton that says it is busy, as dumi's does, or an
# empty shell.
SKELETON = b"""<div id="root"><p aria-busy="true">Loading the page</p></div>"""
EMPTY = b"""<div id="root"></div>"""
DRAWN_LATE = b"""<script>setTimeout(() => { document.getElementById('root').innerHTML =
  '<h1>Berths</h1><p>' + ['Berths', 'are', 'assigned', 'at', 'dawn'].join(' ') + '</p>'; }, 1500);
</script>"""


@needs_chromium
@pytest.mark.parametrize("shell", [SKELETON, EMPTY], ids=["busy-skeleton", "empty-shell"])
def test_a_page_still_drawing_once_its_requests_end_is_read_once_drawn(
    shell: bytes, site: Site, tmp_path: Path
) -> None:
    """Read as soon as its requests ended, a dumi page was read as its loading skeleton on a
    busy machine: it failed as `empty_document` and its sidebar's links were never followed."""
    site.pages["/berths"] = Page(b"<html><body>" + shell + DRAWN_LATE + b"</body></html>")
    spec = CrawlSpec(site.url("/berths"), render="browser")
    report, sink = run(tmp_path, spec, browser_options())
    assert report[site.url("/berths")].state == "ingested"
    assert "Berths are assigned at dawn" in sink.pages[0].body.decode()


@needs_chromium
def test_a_page_that_never_finishes_drawing_is_read_as_it_is_after_the_bound(
    site: Site, tmp_path: Path
) -> None:
    """A skeleton that never clears costs `drawing_s`, not the page: it is read as it is."""
    site.pages["/berths"] = Page(
        b"<html><body><h1>Berths</h1><p>Berths are assigned at dawn.</p>"
        b"<p aria-busy='true'>Loading the tide table</p></body></html>"
    )
    spec = CrawlSpec(site.url("/berths"), render="browser")
    report, sink = run(tmp_path, spec, browser_options(drawing_s=0.5))
    assert report[site.url("/berths")].state == "ingested"
    assert "Loading the tide table" in sink.pages[0].body.decode()


# A web component draws into its shadow root, which the body's text leaves out (Kong's spec
# renderer, RapiDoc): read as an empty shell, each of its pages waited out `drawing_s`, and
# the explorer's every step its longest wait.
COMPONENT = b"""<x-card></x-card><script>customElements.define('x-card', class extends
HTMLElement { connectedCallback() {
  this.attachShadow({mode: 'open'}).innerHTML = '<p>Berths at dawn.</p>'; } });</script>"""


@needs_chromium
@pytest.mark.parametrize(
    ("body", "drawing"),
    [
        (EMPTY, True),
        (SKELETON, True),
        (b"<p aria-busy='true' hidden>Loading</p><p>Berths at dawn.</p>", False),
        (b"<p>Berths at dawn.</p>", False),
        (COMPONENT, False),
    ],
    ids=["empty-shell", "busy-skeleton", "busy-but-hidden", "drawn", "drawn-in-a-shadow-root"],
)
def test_a_page_is_drawing_while_it_says_it_is_busy_or_shows_no_text(
    body: bytes, drawing: bool
) -> None:
    async def read() -> object:
        playwright, browser = await launch_browser(BrowserOptions())
        try:
            page = await browser.new_page()
            await page.set_content((b"<html><body>" + body + b"</body></html>").decode())
            return await page.evaluate(DRAWING)
        finally:
            await close_browser(playwright, browser)

    assert asyncio.run(read()) is drawing


FRAMED = "<p>Dials and their ranges.</p><iframe src='/preview' style='STYLE'></iframe>"
PLACEHOLDER = b"<table aria-hidden='true'><tr><td>propertyName</td></tr></table>"


@needs_chromium
@pytest.mark.parametrize(
    ("preview", "style", "drawing"),
    [
        (b"<head><script src='/slow.js'></script></head><body><p>Drawn.</p></body>", "", True),
        (PLACEHOLDER, "", True),
        (PLACEHOLDER + b"<p>Dials show one number against its range.</p>", "", False),
        (
            b"<head><script src='/slow.js'></script></head><body><p>Drawn.</p></body>",
            "width: 1px",
            False,
        ),
    ],
    ids=["frame-loading", "frame-placeholder", "frame-drawn", "hidden-frame-loading"],
)
def test_a_page_is_drawing_while_a_frame_it_shows_is(
    site: Site, preview: bytes, style: str, drawing: bool
) -> None:
    """Storybook's preview frame was read while its document was still loading (its body not
    yet parsed) or showing a placeholder: the page was stored without its words."""
    site.pages["/framed"] = Page(FRAMED.replace("STYLE", style).encode())
    site.pages["/preview"] = Page(b"<html>" + preview + b"</html>")
    site.pages["/slow.js"] = Page(b"// late", content_type="text/javascript", delay_s=3.0)

    async def read() -> object:
        from playwright.async_api import async_playwright

        # Not lore's browser, which reaches no network of its own: this one loads the site.
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=BrowserOptions().executable_path, args=["--no-sandbox"]
            )
            page = await browser.new_page()
            await page.goto(site.url("/framed"), wait_until="domcontentloaded")
            # The frame's own document, not the empty one it starts with.
            await page.wait_for_function(
                "() => document.querySelector('iframe').contentDocument.URL.endsWith('/preview')"
            )
            drawn = await page.evaluate(DRAWING)
            await browser.close()
            return drawn

    assert asyncio.run(read()) is drawing


@needs_chromium
def test_a_page_that_never_finishes_loading_fails_with_a_reason(site: Site, tmp_path: Path) -> None:
    site.pages["/slow"] = Page(SHELL)
    site.pages["/static/app.js"] = Page(b"// never in time", delay_s=3.0)
    spec = CrawlSpec(site.url("/slow"), render="browser")
    report, sink = run(tmp_path, spec, browser_options(timeout_s=1.0))
    assert sink.pages == []
    entry = report[site.url("/slow")]
    assert entry.state == "failed" and entry.reason.startswith("render_failed")


def test_render_without_chromium_is_refused_with_the_fix(
    make_client: Callable[..., TestClient], site: Site, tmp_path: Path
) -> None:
    client = make_client(browser={"executable_path": str(tmp_path / "no-chromium")})
    site.pages["/app"] = Page(SHELL)
    for render in ("browser", "auto"):
        response = client.post(
            "/knowledge/index-link", json={"url": site.url("/app"), "render": render}
        )
        assert response.status_code == 503, response.text
        body = response.json()
        assert body["error"] == "browser_unavailable"
        assert "apt-get install -y chromium" in body["message"]
    assert site.requests == []


@needs_chromium
def test_rendered_knowledge_is_retrievable(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    spa(site)
    client = make_client()
    response = client.post(
        "/knowledge/index-link", json={"url": site.url("/app"), "render": "browser"}
    )
    assert response.status_code == 202, response.text
    job = wait_for_job(client, response.json()["jobId"])
    assert job["status"] == "completed", job
    answer = client.get(
        "/knowledge/resolve",
        params={"url": site.url("/app"), "query": "how fast are the rocket skates?"},
    ).json()
    assert "sixty miles an hour" in answer["chunks"][0]["text"]
