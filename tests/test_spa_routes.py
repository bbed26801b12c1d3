"""Single-page apps as people build them, in real headless Chromium on 127.0.0.1: a hash-routed
documentation app (a sidebar of routes, a button that hides the navigation, heading anchors,
"Copy" buttons, a table of contents whose links are the route's own anchors `#/install#usage`
and `#/install?id=usage` (the same view but for the sidebar's highlight), no ids) and an API
reference whose operations repeat the same controls ("200", "400"), scrolled to its end at
load, with a "Collapse all" button. Client-side routes become pages of their own, every
operation's panels are opened, collapsing supersedes nothing, and copying is not done."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

import pytest
from fastapi.testclient import TestClient

from crawl import BrowserOptions, browser_missing
from tests.conftest import Page, Site, wait_for_job
from tests.test_spa_capture import capture, model, resolve

pytestmark = pytest.mark.skipif(
    browser_missing(BrowserOptions()) is not None, reason=str(browser_missing(BrowserOptions()))
)


def history_router(prefix: str, action: str, control: str) -> str:
    """The end of a history-routed page: its links under `prefix` push their address and
    `render()` the view; a click on `control` runs `action` (a dialog, a listbox)."""
    return (
        """document.addEventListener('click', (e) => {
  if (e.target.closest('"""
        + control
        + """')) """
        + action
        + """;
  const a = e.target.closest('a[href^=\""""
        + prefix
        + """\"]');
  if (!a) return;
  e.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  render();
});
window.addEventListener('popstate', render);
render();
</script></body></html>"""
    )


DOC_PAGES = {
    "/": ("Widgetry", "Widgetry assembles dashboard widgets from YAML recipes."),
    "/install": ("Install", "The installer unpacks Widgetry into /opt/widgetry by default."),
    "/recipes": ("Recipes", "A recipe lists the panels of a widget and their refresh period."),
    "/plugins": ("Plugins", "Plugins are loaded from the widgetry.d directory at startup."),
    "/themes": ("Themes", "Dark themes lower the contrast of gauges to seventy percent."),
    "/cli": ("Command line", "The wgt command prints every widget with its recipe path."),
    "/faq": ("FAQ", "Widgets stop refreshing when the browser tab sleeps for an hour."),
    "/changelog": ("Changelog", "Version 3 dropped support for XML recipes in favour of YAML."),
}

DOCS = Page(
    (
        """<html><head><title>Widgetry docs</title></head><body>
<header><button class="nav-toggle" aria-label="Hide primary navigation">&#9776;</button>
<span>Widgetry</span></header>
<aside class="sidebar"><ul>"""
        + "".join(
            f'<li><a href="#{path}">{title}</a></li>' for path, (title, _) in DOC_PAGES.items()
        )
        + """</ul></aside>
<main class="content"></main>
<script>
const pages = """
        + str({path: list(page) for path, page in DOC_PAGES.items()}).replace("'", '"')
        + """;
function render() {
  const path = location.hash.replace(/^#/, '').split(/[#?]/)[0] || '/';
  const [title, text] = pages[path] || ['Not found', 'There is no such page.'];
  const slug = 'usage-' + path.replace(/\\W/g, '');
  const main = document.querySelector('main');
  main.innerHTML = `<h1>${title}</h1><p>${text}</p>`
    + `<nav class="toc"><a href="#${path}#${slug}">Usage</a>`
    + `<a href="#${path}?id=${slug}">Usage, by id</a></nav>`
    + `<h2 id="${slug}">Usage <a href="#${slug}">#</a></h2>`
    + `<pre><code>wgt show ${path}</code></pre><button class="copy">Copy</button>`;
  document.querySelectorAll('.sidebar a').forEach((a) => {
    a.className = a.getAttribute('href') === (location.hash || '#/') ? 'active' : '';
  });
  const copy = main.querySelector('.copy');
  copy.addEventListener('click', () => { copy.textContent = 'Copied'; });
}
window.addEventListener('hashchange', render);
render();
document.querySelector('.nav-toggle').addEventListener('click', () => {
  document.querySelector('.sidebar').style.display = 'none';
  fetch('/api/nav-hidden');
});
</script></body></html>"""
    ).encode()
)


def route_url(site: Site, path: str) -> str:
    return site.url("/docs") + ("" if path == "/" else f"#{path}")


def test_a_hash_routed_app_stores_each_route_as_a_page(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    site.pages["/docs"] = DOCS
    client = make_client()
    job = capture(client, site.url("/docs"), maxActions=30)
    assert job["status"] == "completed", job
    routes = [route_url(site, p) for p in DOC_PAGES if p != "/"]
    assert job["counts"]["routes"] == len(routes), job["counts"]
    for path, (_, sentence) in DOC_PAGES.items():
        url = route_url(site, path)
        # The route's own chunks, by its URL: stored as a page of its own.
        own = " ".join(c["text"] for c in resolve(client, url, ""))
        assert sentence in own, (path, own)
        for other_path, (_, other) in DOC_PAGES.items():
            if other_path != path:
                assert other not in own, (path, other_path)
        top = resolve(client, url, sentence, k=3)
        assert any(sentence in c["text"] and c["url"] == url for c in top), (path, top)
    assert "/api/nav-hidden" not in site.requests  # it hides the navigation: not clicked
    assert job["counts"]["superseded"] == 0
    learned = model(client, site)
    assert "Copy" not in [step["label"] for step in learned["steps"]]  # copying shows nothing
    served = " ".join(c["text"] for c in resolve(client, site.url("/docs"), "usage", k=20))
    assert "There is no such page" not in served  # heading anchors were not followed
    understanding = learned["understanding"]
    assert understanding["pageType"] == "routed_app"
    assert sorted(understanding["routes"]) == sorted(routes)


def test_a_route_is_captured_and_crawled_under_its_own_url(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    site.pages["/docs"] = DOCS
    client = make_client()
    plugins = route_url(site, "/plugins")
    job = capture(client, plugins, explore=False)
    assert job["status"] == "completed", job
    own = " ".join(c["text"] for c in resolve(client, plugins, ""))
    assert DOC_PAGES["/plugins"][1] in own and DOC_PAGES["/"][1] not in own
    # A spider that renders follows the routes; one that does not sees one document.
    response = client.post(
        "/knowledge/index-link",
        json={"url": site.url("/docs"), "strategy": "spider", "render": "browser", "maxPages": 20},
    )
    assert response.status_code == 202, response.text
    crawl = wait_for_job(client, response.json()["jobId"], timeout_s=180)
    assert crawl["status"] == "completed", crawl
    listed = client.get("/knowledge/documents", params={"limit": 100}).json()["documents"]
    urls = {d["url"] for d in listed}
    assert {route_url(site, p) for p in DOC_PAGES} <= urls, urls
    assert not any("usage" in url for url in urls), urls  # a route's own anchor is no page
    for path, (_, sentence) in DOC_PAGES.items():
        top = resolve(client, route_url(site, path), sentence, k=3)
        assert any(c["url"] == route_url(site, path) for c in top), (path, top)


GUIDE_PAGES = {
    "": ("Guide", "The guide explains how Gearbox schedules its nightly builds."),
    "install/": ("Install", "Gearbox installs as one static binary under /usr/local/bin."),
    "runners/": ("Runners", "A runner takes at most four builds at once unless told more."),
    "caching/": ("Caching", "Build caches expire after nine days without a hit."),
}
# A history-routed app as static site generators build them: every page is a folder, its
# address ends in a slash (a link without one is redirected there), the shell's script is
# linked relative to that address, and the router knows a page only by its full path.
GUIDE_SHELL = Page(
    (
        """<html><head><title>Gearbox guide</title><script src="app.js" defer></script></head>
<body><nav class="sidebar">"""
        + "".join(f'<a href="/guide/{p}">{t}</a>' for p, (t, _) in GUIDE_PAGES.items())
        + "</nav><main></main></body></html>"
    ).encode()
)
GUIDE_APP = Page(
    (
        "const pages = "
        + str({f"/guide/{p}": list(v) for p, v in GUIDE_PAGES.items()}).replace("'", '"')
        + """;
function render() {
  const [title, text] = pages[location.pathname] || ['Not found', 'No page has this address.'];
  document.querySelector('main').innerHTML = `<h1>${title}</h1><p>${text}</p>`;
}
document.querySelectorAll('.sidebar a').forEach((a) => a.addEventListener('click', (e) => {
  e.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  render();
}));
window.addEventListener('popstate', render);
render();"""
    ).encode(),
    content_type="text/javascript",
)


def test_an_address_that_redirects_is_captured_where_it_ends(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    for path in GUIDE_PAGES:
        folder = f"/guide/{path}"
        site.pages[folder.rstrip("/")] = Page(b"", status=301, headers={"Location": folder})
        site.pages[folder] = GUIDE_SHELL
        site.pages[f"{folder}app.js"] = GUIDE_APP
    client = make_client()
    # Asked without the slash: the browser must load the page where the redirect ends (it
    # failed to render at all), and go back there between routes, not to the address asked.
    job = capture(client, site.url("/guide"), maxActions=10)
    assert job["status"] == "completed", job
    assert job["counts"]["routes"] == len(GUIDE_PAGES) - 1, job["counts"]
    for path, (_, sentence) in GUIDE_PAGES.items():
        url = site.url(f"/guide/{path}")
        own = " ".join(c["text"] for c in resolve(client, url, ""))
        assert sentence in own and "No page has this address" not in own, (path, own)
        others = [s for p, (_, s) in GUIDE_PAGES.items() if p != path]
        assert not any(other in own for other in others), (path, own)
    deep = capture(client, site.url("/guide/runners"), explore=False)
    assert deep["status"] == "completed", deep
    own = " ".join(c["text"] for c in resolve(client, site.url("/guide/runners/"), ""))
    assert GUIDE_PAGES["runners/"][1] in own, own


def test_an_address_asked_with_its_slash_is_loaded_with_it(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    # A host that answers only `/guide/runners/` (no redirect from `/guide/runners`, which is
    # the URL lore stores the page under): the capture loads the address as it was asked for.
    for path in GUIDE_PAGES:
        site.pages[f"/guide/{path}"] = GUIDE_SHELL
        site.pages[f"/guide/{path}app.js"] = GUIDE_APP
    client = make_client()
    job = capture(client, site.url("/guide/runners/"), explore=False)
    assert job["status"] == "completed", job
    assert "/guide/runners" not in site.requests
    own = " ".join(c["text"] for c in resolve(client, site.url("/guide/runners"), ""))
    assert GUIDE_PAGES["runners/"][1] in own and "No page has this address" not in own, own


# A history-routed documentation app as Docus builds one: its home a landing page with no
# navigation (a README whose badges are zoomable images inside links to elsewhere, a link to a
# file no page is made of, "Get started"), the pages beside it with a sidebar; every address
# answers the shell, and a path the router has no page for draws its "Page not found" view.
MANUAL_PAGES = {
    "install": ("Install", "The manual's installer writes a lockfile before touching disks."),
    "backup": ("Backup", "Backups rotate every ninth night unless pinned by a tag."),
    "restore": ("Restore", "A restore replays the journal from the newest intact snapshot."),
    "tuning": ("Tuning", "Cache pressure above eighty percent halves the prefetch window."),
}
MANUAL_HOME = "Quarry keeps a manual of its storage engine for operators on call."
MANUAL = Page(
    (
        """<html><head><title>Quarry manual</title></head><body>
<header><a href="/manual/">Quarry</a></header><aside></aside><main></main>
<dialog id="zoom"><img alt="zoomed"></dialog><script>
const pages = """
        + json.dumps({f"/manual/{slug}": v for slug, v in MANUAL_PAGES.items()})
        + """;
const home = `<h1>Quarry</h1><p><a href="https://registry.invalid/quarry"><img alt="npm"
  type="button" aria-haspopup="dialog" aria-expanded="false" class="zoom" width="80"
  height="20" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></a></p>
  <p>"""
        + MANUAL_HOME
        + """</p><p>See <a href="/manual/CONTRIBUTING">CONTRIBUTING.md</a>.</p>
  <p><a href="/manual/install">Get started</a></p>`;
const render = () => {
  const path = location.pathname;
  const sidebar = '<nav>' + Object.entries(pages)
    .map(([href, [title]]) => `<a href="${href}">${title}</a>`).join('')
    + '<a href="/manual/changelog">Changelog</a></nav>';
  document.querySelector('aside').innerHTML = path === '/manual/' ? '' : sidebar;
  const page = pages[path];
  // the pager: a card for the page before and one for the page after, with its first line
  const order = Object.keys(pages);
  const at = order.indexOf(path);
  const card = (href) => href ? `<a href="${href}"><span>${pages[href][0]}</span>`
    + `<p>${pages[href][1]}</p></a>` : '';
  const pager = `<div class="grid">${card(order[at - 1])}${card(order[at + 1])}</div>`;
  document.querySelector('main').innerHTML = path === '/manual/' ? home : page
    ? `<h1>${page[0]}</h1><p>${page[1]}</p>${pager}`
    : '<p>404</p><h1>Page not found</h1><p>We are sorry but this page could not be found.</p>'
      + '<a href="/manual/">Back to home</a>';
};
"""
        + history_router("/manual/", "document.getElementById('zoom').showModal()", ".zoom")
    ).encode()
)


@pytest.fixture
def manual(site: Site) -> Site:
    missing = ("/manual/CONTRIBUTING", "/manual/changelog")
    for path in ("/manual/", *missing, *(f"/manual/{s}" for s in MANUAL_PAGES)):
        site.pages[path] = MANUAL
    return site


def test_a_landing_page_s_links_into_its_site_lead_to_every_page(
    make_client: Callable[..., TestClient], manual: Site
) -> None:
    """Docus: the home page has no sidebar and no menu, only its text and "Get started". The
    capture stored the home page alone, its actions spent on the README's badges: a zoomable
    image inside a link to npm, taken for an expander, followed the link away each time. A
    landing page's links into its own folder are followed once each, and the pages the view
    they reach names are visited; what sits inside a link is the link."""
    client = make_client()
    job = capture(client, manual.url("/manual/"), maxActions=20)
    assert job["status"] == "completed", job
    steps = model(client, manual)["steps"]
    assert "npm" not in [step["label"] for step in steps], steps
    for slug, (_, sentence) in MANUAL_PAGES.items():
        own = " ".join(c["text"] for c in resolve(client, manual.url(f"/manual/{slug}"), ""))
        assert sentence in own, (slug, own)
    home = " ".join(c["text"] for c in resolve(client, manual.url("/manual/"), ""))
    assert MANUAL_HOME in home, home


def test_a_pager_s_cards_for_the_pages_beside_are_not_a_page_s_text(
    make_client: Callable[..., TestClient], manual: Site
) -> None:
    """Docus and Fumadocs end each page with cards for the pages before and after it in the
    sidebar, each with that page's title and first lines, in plain `div`s: every page's last
    chunk held its neighbours' sentences. The pager's links are the pages beside this one's
    own entry in the navigation, linked a second time: it is not the page's text."""
    client = make_client()
    job = capture(client, manual.url("/manual/install"), maxActions=20)
    assert job["status"] == "completed", job
    for slug, (_, sentence) in MANUAL_PAGES.items():
        own = " ".join(c["text"] for c in resolve(client, manual.url(f"/manual/{slug}"), ""))
        others = [s for other, (_, s) in MANUAL_PAGES.items() if other != slug]
        assert sentence in own and not any(o in own for o in others), (slug, own)


def test_an_app_s_page_not_found_view_is_not_stored_as_a_page(
    make_client: Callable[..., TestClient], manual: Site
) -> None:
    """Docus: a README's link to `LICENSE` routed to the app's "Page not found" view, and the
    capture stored it under that address, as it would a page. The view says the app has no
    such page: nothing is stored, and the exploration goes on."""
    client = make_client()
    job = capture(client, manual.url("/manual/install"), maxActions=20)
    assert job["status"] == "completed", job
    routes = model(client, manual)["understanding"]["routes"]
    assert manual.url("/manual/changelog") not in routes, routes
    others = {manual.url(f"/manual/{slug}") for slug in MANUAL_PAGES if slug != "install"}
    assert others <= set(routes), routes
    missing = resolve(client, manual.url("/manual/changelog"), "")
    assert not missing, missing


OPERATIONS = [
    ("GET /widgets", "Lists widgets", "A page of widget summaries", "The filter was not valid"),
    ("POST /widgets", "Creates a widget", "The widget as stored", "The recipe did not parse"),
    ("GET /widgets/{id}", "Reads one widget", "One widget with its panels", "The id is malformed"),
    ("PUT /widgets/{id}", "Replaces a widget", "The replaced widget", "The panels overlap"),
    ("GET /themes", "Lists themes", "Every theme with its palette", "The palette is unknown"),
    ("DELETE /themes/{id}", "Removes a theme", "Nothing: the theme is gone", "Theme in use"),
]


def _operation(n: int, op: tuple[str, str, str, str]) -> str:
    title, description = op[0], op[1]
    return (
        f'<div class="operation"><h3>{title}</h3><p class="desc">{description} '
        f'(operation {n}).</p><div role="tablist"><button role="tab" data-code="200">200</button>'
        f'<button role="tab" data-code="400">400</button></div><div class="schema"></div>'
        '<div class="sample"><div role="tablist"><button role="tab">Shell Curl</button>'
        '<button role="tab">Python requests</button><button role="tab">Node.js fetch</button>'
        f"</div><pre>curl https://api.test{title.split()[1]}</pre></div>"
        f'<button class="try">{("Test Request", "Try it")[n % 2]}</button>'
        f'<div style="height: 700px"></div></div>'
    )


API = Page(
    (
        "<html><head><title>Widget API</title></head><body><h1>Widget API</h1>"
        '<button class="collapse">Collapse all</button><button class="ai">Ask AI</button>'
        '<button class="find">Search <kbd>⌘K</kbd></button>'
        '<button class="get">Download OpenAPI Document</button><pre>{"version": 2}</pre>'
        '<button class="get">JSON <span>Copy</span></button>'
        '<section id="faq-copy"><button class="faq" aria-expanded="false">How do I get a copy'
        '</button><div></div></section><section id="faq-try"><button class="faq" '
        'aria-expanded="false">Try it yourself</button><div></div></section>'
        + "".join(_operation(n, op) for n, op in enumerate(OPERATIONS))
        + """<script>
const answers = """
        + str([[f"{a[2]} (response 200).", f"{a[3]} (response 400)."] for a in OPERATIONS])
        + """;
document.querySelectorAll('.operation').forEach((op, n) => {
  op.querySelectorAll('[role=tab]').forEach((tab) => tab.addEventListener('click', () => {
    const which = tab.dataset.code === '200' ? 0 : 1;
    op.querySelector('.schema').innerHTML = '<p>Schema description: ' + answers[n][which] + '</p>';
  }));
});
document.querySelectorAll('.sample [role=tab]').forEach((tab) => tab.addEventListener('click',
  () => { tab.closest('.sample').querySelector('pre').textContent = '# ' + tab.textContent; }));
// an API playground: it opens a form for a request and sends it at once
document.querySelectorAll('.try').forEach((b) => b.addEventListener('click', () => {
  const title = b.closest('.operation').querySelector('h3').textContent;
  b.insertAdjacentHTML('afterend', `<div role="dialog"><h2>Request builder: ${title}</h2>`
    + '<label>Server <input></label><label>Headers <input></label></div>');
  fetch('/sent' + title.split(' ')[1]);
}));
document.querySelectorAll('.get').forEach((b) => b.addEventListener('click', () => {
  b.insertAdjacentHTML('afterend', '<span>Downloaded widgets.json</span>');
}));
const faq = ['Ask the widget desk for an export of your account.',
  'Create a sandbox widget first: it is deleted after an hour.'];
document.querySelectorAll('.faq').forEach((b, n) => b.addEventListener('click', () => {
  b.setAttribute('aria-expanded', 'true');
  b.nextElementSibling.textContent = faq[n];
}));
document.querySelector('.ai').addEventListener('click', () => {
  document.body.insertAdjacentHTML('afterbegin', '<div><h2>How can I help?</h2></div>');
});
document.querySelector('.find').addEventListener('click', () => {
  document.body.insertAdjacentHTML('beforeend', '<div role="dialog"><input type="search">'
    + '<ul><li>Operation: every widget</li><li>Operation: one widget</li></ul></div>');
});
document.querySelector('.collapse').addEventListener('click', () => {
  document.querySelectorAll('.operation .desc').forEach((d) => { d.textContent = 'operation'; });
});
window.addEventListener('load', () => window.scrollTo(0, document.body.scrollHeight));
</script></body></html>"""
    ).encode()
)


def test_equal_controls_in_each_operation_are_opened_and_collapsing_supersedes_nothing(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    site.pages["/api"] = API
    client = make_client()
    url = site.url("/api")
    job = capture(client, url, maxActions=40)
    assert job["status"] == "completed", job
    for n, (title, description, ok, bad) in enumerate(OPERATIONS):
        for answer in (f"{ok} (response 200).", f"{bad} (response 400)."):
            found = " ".join(c["text"] for c in resolve(client, url, f"{title} {answer}", k=8))
            assert answer in found, (title, answer)
        # "Collapse all" replaced each description with less: it still answers.
        found = " ".join(c["text"] for c in resolve(client, url, f"{title} {description}", k=8))
        assert f"{description} (operation {n})." in found, title
    learned = model(client, site)
    # neither collapsing nor the operations' equal controls supersede anything (a question
    # opened further may supersede its own less open state)
    steps = [s for s in learned["steps"] if s["label"] in {"200", "400", "Collapse all"}]
    assert steps and not [s for s in steps if s.get("superseded", 0)], steps
    labels = [s["label"] for s in learned["steps"]]
    assert labels.count("200") == len(OPERATIONS) and labels.count("400") == len(OPERATIONS)
    assert "Collapse all" in labels
    assert not [b for b in learned["breakers"] if "repeated_action" in b and "200" in b]
    # the same request in another language, an assistant's chat and the site's search (an
    # index of what the page holds) are not clicked
    assert not {"Shell Curl", "Python requests", "Node.js fetch", "Ask AI", "Search ⌘K"} & set(
        labels
    )
    listed = resolve(client, url, "Operation: every widget", k=8)
    assert not any("every widget" in c["text"] for c in listed), listed
    # nor an API playground's launcher: it sends requests to the API, and its form of fields
    # to fill in is no documentation (Scalar's "Test Request" took eight of forty-four actions
    # and pushed an operation's description out of the top 8 for its name)
    assert not {"Test Request", "Try it"} & set(labels), labels
    # downloading or copying shows nothing either; disclosures so named are opened
    assert not {"Download OpenAPI Document", "JSON Copy"} & set(labels), labels
    for question, answer in (
        ("How do I get a copy", "widget desk"),
        ("Try it yourself", "sandbox"),
    ):
        found = resolve(client, url, question, k=8)
        assert any(answer in c["text"] for c in found), (question, found)
    assert not [path for path in site.requests if path.startswith("/sent")], site.requests
    built = resolve(client, url, "Request builder", k=8)
    assert not any("Request builder" in c["text"] for c in built), built


GUIDES = [
    ("Create a gadget", "Gadgets are created from a blueprint and a serial number."),
    ("Pair a gadget", "Pairing binds a gadget to one account for its whole life."),
    ("Retire a gadget", "A retired gadget keeps its logs for ninety days."),
]

# A sidebar of entries without links (role=link) that show one guide at a time in the same
# place, under a transparent layer that takes a person's clicks (as a sticky header over a
# folded list does). Each guide shows its schema, a Model | Example toggle drawn as two plain
# buttons (one marked active), and a Refresh button that replaces the schema with a new one.
NAV_VIEWS = Page(
    (
        "<html><head><title>Gadget guides</title></head><body>"
        '<nav class="sidebar" style="width: 300px"><div class="section">GUIDES</div>'
        + "".join(
            f'<div role="link" tabindex="0" class="entry" data-n="{n}">{title}</div>'
            for n, (title, _) in enumerate(GUIDES)
        )
        + '</nav><div class="layer" style="position: fixed; left: 0; top: 0; width: 300px; '
        'height: 100%"></div><main id="view"><p>Pick a guide.</p></main><script>\nconst guides = '
        + str([list(g) for g in GUIDES]).replace("'", '"')
        + """;
document.querySelectorAll('.entry').forEach((entry) => entry.addEventListener('click', () => {
  const n = entry.dataset.n;
  const [title, text] = guides[n];
  const view = document.querySelector('#view');
  view.innerHTML = `<h2>${title}</h2><p>${text}</p>`
    + '<div class="switch"><button class="tab-btn active">Model</button>'
    + '<button class="tab-btn">Example</button></div>'
    + `<pre>Gadget ${n} schema, version one</pre><button class="refresh">Refresh</button>`;
  const [model, example] = view.querySelectorAll('.tab-btn');
  const show = (on, off, body) => {
    on.classList.add('active'); off.classList.remove('active');
    view.querySelector('pre').textContent = body;
  };
  model.addEventListener('click', () => show(model, example, `Gadget ${n} schema, version one`));
  example.addEventListener('click', () => show(example, model, `Gadget ${n} sample: {"id": 7}`));
  view.querySelector('.refresh').addEventListener('click', () =>
    show(model, example, `Gadget ${n} schema, version two`));
}));
</script></body></html>"""
    ).encode()
)


def test_sidebar_entries_under_a_layer_are_opened_and_no_view_supersedes_another(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    site.pages["/guides"] = NAV_VIEWS
    client = make_client()
    url = site.url("/guides")
    job = capture(client, url, maxActions=20)
    assert job["status"] == "completed", job
    steps = {s["label"]: s for s in model(client, site)["steps"] if s["effect"] != "failed"}
    assert {title for title, _ in GUIDES} <= set(steps), steps  # clicked through the layer
    # The toggle is a tab strip: its other view supersedes nothing.
    assert steps["Example"]["pattern"] == "tab", steps["Example"]
    assert steps["Example"]["superseded"] == 0, steps["Example"]
    assert steps["Refresh"]["superseded"] >= 1, steps["Refresh"]
    # Refresh replaced the schema on screen (the last guide's); the guides shown before it in
    # the same place keep theirs, and every guide and example is still served.
    last = len(GUIDES) - 1
    for n, (title, text) in enumerate(GUIDES):
        found = " ".join(c["text"] for c in resolve(client, url, f"{title} {text}", k=8))
        assert text in found, (title, found)
        schema = " ".join(c["text"] for c in resolve(client, url, f"Gadget {n} schema", k=8))
        assert f"Gadget {n} schema, version {'two' if n == last else 'one'}" in schema, schema
        if n == last:
            assert f"Gadget {n} schema, version one" not in schema, schema  # superseded
    examples = " ".join(c["text"] for c in resolve(client, url, "Gadget sample", k=8))
    assert 'sample: {"id": 7}' in examples, examples


SHADOW = Page(
    b"""<html><head><title>Gadget reference</title></head><body><h1>Gadget reference</h1>
<gadget-doc></gadget-doc>
<script>
customElements.define('gadget-doc', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({mode: 'open'});
    root.innerHTML = '<section><h2>Limits</h2><p>The gadget API answers 30 requests a minute.'
      + '</p><button class="more" aria-expanded="false">Quota details</button>'
      + '<div class="details"></div></section>';
    root.querySelector('.more').addEventListener('click', (e) => {
      e.target.setAttribute('aria-expanded', 'true');
      root.querySelector('.details').innerHTML = '<p>The quota resets at midnight UTC.</p>';
    });
  }
});
</script></body></html>"""
)


def test_a_web_component_s_shadow_dom_is_read_and_explored(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    site.pages["/gadgets"] = SHADOW
    client = make_client()
    url = site.url("/gadgets")
    job = capture(client, url)
    assert job["status"] == "completed", job
    assert "30 requests a minute" in resolve(client, url, "how many requests a minute?")[0]["text"]
    answer = resolve(client, url, "when does the quota reset?")[0]
    assert "midnight UTC" in answer["text"]
    assert answer["phase"] == "post_interaction"


GROUPED = Page(
    b"""<html><head><title>Pet API</title><style>.group { cursor: pointer; }</style></head>
<body><nav class="toc"><div><a href="#/">Overview</a></div>
<div class="group" title="pets">pets <svg width="8" height="8"></svg></div>
<div><a href="#/schemas/Pet">Pet</a></div><div><a href="#/schemas/Error">Error</a></div>
<div class="group" data-to="/schemas/Owner">Owner <small>Provides the general information about
an owner and the list of pets that the owner keeps at home.</small></div></nav>
<main></main><script>
const texts = {
  '/': 'The pet API keeps a register of pets.',
  '/operations/listPets': 'Lists every pet, twenty to a page, oldest first.',
  '/operations/createPets': 'Creates a pet from a name and a tag.',
  '/operations/showPetById': 'Shows one pet with its vaccination dates.',
  '/schemas/Pet': 'A pet has an id, a name and an optional tag.',
  '/schemas/Error': 'An error carries a code and a message.',
  '/schemas/Owner': 'An owner has a name and keeps one pet or more.',
};
const ops = [['listPets', 'List all pets'], ['createPets', 'Create a pet'],
             ['showPetById', 'Info for a specific pet']];
// The group opens on a click handler (nothing in the markup says it is a control) and puts
// its operations in the list, after itself: the schemas below move down.
const group = document.querySelector('.group');
// An entry that routes on a click handler, with a summary line under its name.
document.querySelector('[data-to]').addEventListener('click', (e) => {
  location.hash = e.currentTarget.dataset.to;
});
group.addEventListener('click', () => {
  if (group.classList.toggle('open')) {
    group.insertAdjacentHTML('afterend', ops.map(([id, name]) =>
      `<div class="op"><a href="#/operations/${id}">${name}</a></div>`).join(''));
  } else {
    document.querySelectorAll('.op').forEach((op) => op.remove());
  }
});
const render = () => {
  document.querySelector('main').innerHTML = '<p>' + texts[location.hash.slice(1) || '/'] + '</p>';
};
window.addEventListener('hashchange', render);
render();
</script></body></html>"""
)


def test_a_group_that_opens_by_script_is_opened_and_each_route_visited_once(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """The explorer finds a control by its pointer cursor alone, and a route that moved into a
    position an earlier click used ("Pet" was where "List all pets" is once the group is open)
    is still visited: what was clicked is known by selector and label. An entry that says more
    than its name (a summary line under it, as OpenAPI UI's sidebar) is a control too."""
    site.pages["/pets"] = GROUPED
    client = make_client()
    job = capture(client, site.url("/pets"), maxActions=20)
    assert job["status"] == "completed", job
    understanding = model(client, site)["understanding"]
    visited = {route.rsplit("#", 1)[1] for route in understanding["routes"]}
    assert visited == {
        "/operations/listPets",
        "/operations/createPets",
        "/operations/showPetById",
        "/schemas/Pet",
        "/schemas/Error",
        "/schemas/Owner",
    }, understanding["routes"]
    shown = resolve(client, site.url("/pets#/operations/showPetById"), "")
    own = " ".join(c["text"] for c in shown)
    assert "vaccination dates" in own, own


ROUTED_OPS = {
    "listParcels": ("List parcels", "Parcels of the account, newest first.", "Not signed in."),
    "trackParcel": ("Track a parcel", "The parcel with its scans.", "No parcel has that number."),
    # a link to a route only shows it, whatever its label says
    "deleteParcel": ("Delete a parcel", "The parcel was deleted.", "It was posted already."),
}

# An operation's view, in the API references below: its title (and what the app draws under
# it, `lead`) and one response code's description at a time; the other code's is drawn only
# when its tab is clicked.
SHOW_OPERATION = """
function showOperation(main, [title, ok, bad, lead = ''], tablist) {
  main.innerHTML = `<h1>${title}</h1>${lead}<h2>Responses</h2><div ${tablist}>
    <button role="tab" aria-selected="true" data-code="200">200</button>
    <button role="tab" aria-selected="false" data-code="404">404</button></div>
    <div role="tabpanel"><p>${ok}</p></div>`;
  main.querySelectorAll('[role=tab]').forEach((tab) => tab.addEventListener('click', () => {
    main.querySelectorAll('[role=tab]').forEach((t) => t.setAttribute('aria-selected', t === tab));
    main.querySelector('[role=tabpanel]').innerHTML =
      '<p>' + (tab.dataset.code === '200' ? ok : bad) + '</p>';
  }));
}
"""


def routed_tabs(ops: dict[str, tuple[str, ...]], show: str = SHOW_OPERATION) -> Page:
    """Like Stoplight Elements: each operation (title, 200's text, 404's, what is drawn under
    the title) is a route, its view drawn by `show`'s showOperation."""
    return Page(
        (
            """<html><head><title>Parcel API</title></head><body>
<nav class="toc"><a href="#/">Overview</a>"""
            + "".join(f'<a href="#/operations/{op}">{v[0]}</a>' for op, v in ops.items())
            + """</nav><main></main><script>
const ops = """
            + str({op: list(v) for op, v in ops.items()}).replace("'", '"')
            + ";"
            + show
            + """
function render() {
  const op = location.hash.replace(/^#\\/operations\\//, '');
  const main = document.querySelector('main');
  if (!ops[op]) {
    main.innerHTML = '<h1>Parcel API</h1><p>Parcels posted and tracked.</p>';
    return;
  }
  showOperation(main, ops[op], 'role="tablist"');
}
window.addEventListener('hashchange', render);
render();
</script></body></html>"""
        ).encode()
    )


ROUTED_TABS = routed_tabs(ROUTED_OPS)


def test_the_tabs_inside_each_route_s_view_are_opened_and_stored_under_the_route(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """An operation's other response codes show only on a click inside its route's view: the
    explorer acts inside each route it stores (not on the navigation it shares) and stores
    what it reveals under the route's URL."""
    site.pages["/parcels"] = ROUTED_TABS
    client = make_client()
    job = capture(client, site.url("/parcels"), maxActions=30)
    assert job["status"] == "completed", job
    assert job["counts"]["routes"] == len(ROUTED_OPS), job["counts"]
    for op, (title, ok, bad) in ROUTED_OPS.items():
        url = site.url(f"/parcels#/operations/{op}")
        own = resolve(client, url, "", k=20)  # the route's own chunks, by its URL
        texts = " ".join(c["text"] for c in own)
        assert ok in texts and bad in texts, (op, texts)
        assert any(bad in c["text"] and c["phase"] == "post_interaction" for c in own), own
        for other, (_, other_ok, other_bad) in ROUTED_OPS.items():
            if other != op:
                assert other_ok not in texts and other_bad not in texts, (op, other)
        top = resolve(client, url, f"{title} 404 {bad}", k=3)
        assert any(bad in c["text"] and c["url"] == url for c in top), top
    assert job["counts"]["superseded"] == 0  # a tab shows another view: it replaces nothing


# Fumadocs' OpenAPI pages: an operation's view opens with a playground, a form whose sections
# (the server, the path and query parameters) are disclosures drawing input fields, then its
# responses, an accordion drawing a code's description only once it is opened.
SHOW_PLAYGROUND = """
function showOperation(main, [title, ok, bad]) {
  main.innerHTML = `<h1>${title}</h1><form onsubmit="return false">`
    + ['Server URL', 'Path', 'Query'].map((part) =>
      `<div><button type="button" aria-expanded="false">${part}</button><div></div></div>`).join('')
    + '<button type="submit">Send</button></form><h2>Responses</h2>'
    + ['200', '404'].map((code) => `<h3><button type="button" aria-expanded="false"
      data-code="${code}">${code}</button></h3><div></div>`).join('');
  main.querySelectorAll('[aria-expanded]').forEach((b) => b.addEventListener('click', () => {
    b.setAttribute('aria-expanded', 'true');
    const code = b.dataset.code;
    (code ? b.parentElement : b).nextElementSibling.innerHTML = code
      ? `<p>${code === '200' ? ok : bad}</p>` : `<label>${b.textContent} <input></label>`;
  }));
}
"""


def test_a_route_s_responses_are_opened_before_the_sections_of_its_playground(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """A route's view gets four actions of its own: the disclosures of a form (fields of a
    request to send) come after the operation's own, so both responses are opened and stored
    under the route, the form's sections with what is left."""
    site.pages["/parcels"] = routed_tabs(ROUTED_OPS, SHOW_PLAYGROUND)
    client = make_client()
    job = capture(client, site.url("/parcels"), maxActions=40)
    assert job["status"] == "completed", job
    assert job["counts"]["routes"] == len(ROUTED_OPS), job["counts"]
    for op, (_, ok, bad) in ROUTED_OPS.items():
        url = site.url(f"/parcels#/operations/{op}")
        texts = " ".join(c["text"] for c in resolve(client, url, "", k=20))
        assert ok in texts and bad in texts, (op, texts)
    labels = [step["label"] for step in model(client, site)["steps"]]
    # each route's two responses, then two of its form's three sections
    assert labels.count("200") == labels.count("404") == len(ROUTED_OPS), labels
    assert labels.count("Server URL") == labels.count("Path") == len(ROUTED_OPS), labels
    assert "Query" not in labels and "Send" not in labels, labels


PAGED_OPS = {
    "listParcels": ("GET /parcels", "Parcels of the account, newest first.", "Not signed in."),
    "trackParcel": ("GET /parcels/{id}", "The parcel with its scans.", "No parcel has it."),
    "deleteParcel": ("DELETE /parcels/{id}", "The parcel was withdrawn.", "Posted already."),
}
# A site generator's API reference (vitepress-openapi): each operation a page of its own,
# routed by pushState, its sidebar entry named by method and path (the method also a badge);
# the page sits in a layout wrapper named `has-sidebar`; an operation's response codes are tabs
# in a focus group (`role=tablist tabindex=0`), the other code's text drawn only on a click;
# theme switches (one a picker named by its choice, "Change theme" its title); a pager to the
# next operation.
PAGED_SHELL = Page(
    (
        """<html><head><title>Parcel API</title></head><body><div class="layout has-sidebar">
<header><a href="/api/">Parcel API</a><button>Switch to dark theme</button>
<button>Switch between dark and light mode (currently light mode)</button>
<button>Toggle theme</button>
<button class="theme" title="Change theme" aria-haspopup="listbox">System</button></header>
<aside class="sidebar"><nav><h2>Default</h2>"""
        + "".join(
            f'<a href="/api/operations/{op}"><span>{v[0].split()[0]}</span> {v[0]}</a>'
            for op, v in PAGED_OPS.items()
        )
        + """</nav></aside><main></main><nav class="pager"></nav></div><script>
const ops = """
        + str({op: list(v) for op, v in PAGED_OPS.items()}).replace("'", '"')
        + ";"
        + SHOW_OPERATION
        + """
const order = Object.keys(ops);
function render() {
  const op = location.pathname.replace(/^\\/api\\/operations\\//, '');
  const main = document.querySelector('main');
  const pager = document.querySelector('.pager');
  if (!ops[op]) {
    main.innerHTML = '<h1>Parcel API</h1><p>Parcels posted, tracked and withdrawn.</p>';
    pager.innerHTML = '';
    return;
  }
  showOperation(main, ops[op], 'role="tablist" tabindex="0"');
  const next = order[(order.indexOf(op) + 1) % order.length];
  pager.innerHTML = `<a href="/api/operations/${next}">Next page ${ops[next][0]}</a>`;
}
"""
        + history_router(
            "/api/",
            """document.body.insertAdjacentHTML('beforeend',
    '<ul role="listbox"><li role="option">Light</li><li role="option">Dark</li></ul>')""",
            ".theme",
        )
    ).encode()
)


def test_an_api_reference_with_a_page_per_operation_is_read_route_by_route(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Every operation's page is visited (a link named "DELETE /parcels/{id}" shows the
    operation; it deletes nothing), its tabs are opened there (the layout named `has-sidebar`
    around the page is not navigation, nor is the tab list's focus group a control), and each
    route stores its own content, not the sidebar and pager it shares with the page it was
    reached from, which hold the navigation once."""
    site.pages["/api/"] = PAGED_SHELL
    for op in PAGED_OPS:
        site.pages[f"/api/operations/{op}"] = PAGED_SHELL
    client = make_client()
    job = capture(client, site.url("/api/"), maxActions=40)
    assert job["status"] == "completed", job
    assert job["counts"]["routes"] == len(PAGED_OPS), job["counts"]
    labels = [step["label"] for step in model(client, site)["steps"]]
    chrome = {"Switch to dark theme", "Toggle theme", "System", "Light", "Dark", "200 404"}
    assert not chrome & set(labels) and not any("currently" in x for x in labels), labels
    for op, (_, ok, bad) in PAGED_OPS.items():
        url = site.url(f"/api/operations/{op}")
        texts = " ".join(c["text"] for c in resolve(client, url, "", k=20))
        assert ok in texts and bad in texts, (op, texts)
        others = [v[0] for o, v in PAGED_OPS.items() if o != op]
        assert not any(other in texts for other in others), (op, texts)
    home = " ".join(c["text"] for c in resolve(client, site.url("/api/"), "", k=20))
    assert all(v[0] in home for v in PAGED_OPS.values()), home


ACCOUNT = Page(
    b"""<html><head><title>Account</title></head><body><h1>Account</h1>
<p>Your account and the parcels it has posted.</p><nav class="menu">
<a href="/account/delete" style="text-transform: uppercase">Delete account</a>
<a href="javascript:void(0)" onclick="fetch('/api/delete-all')">DELETE</a>
<a href="/api/operations/deleteParcel"><span class="badge">delete</span> Withdraws a parcel</a>
</nav></body></html>"""
)


def test_only_a_link_to_an_operation_s_documentation_is_exempt_from_destructive_labels(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """A link named by a method badge beside the operation's name is opened (it shows the
    documentation); a "Delete account" link drawn in capitals and a "DELETE" link that runs a
    script are what their labels say, and never clicked."""
    site.pages["/account"] = ACCOUNT
    site.pages["/api/operations/deleteParcel"] = Page(
        b"<html><body><h1>Withdraw a parcel</h1><p>Withdraws a parcel not yet posted.</p>"
        b"</body></html>"
    )
    client = make_client()
    job = capture(client, site.url("/account"), maxActions=10)
    assert job["status"] == "completed", job
    assert "/api/operations/deleteParcel" in site.requests
    assert "/account/delete" not in site.requests and "/api/delete-all" not in site.requests


DEEP_OPS = {
    "listParcels": ("GET /parcels", "Lists the parcels of the account, the newest first."),
    "postParcel": ("POST /parcels", "Posts a parcel to the address printed on its label."),
    "trackParcel": ("GET /parcels/{id}/track", "Tracks a parcel from the depot to the door."),
}
DEEP_INTRO = "The Parcel API posts, tracks and withdraws parcels on behalf of one account."
DEEP_SCHEMA = "Parcel: a box with a label, a weight in grams and a tracking number."

# Swagger UI's deep links: opening an operation writes its route (`#/parcels/listParcels`) into
# the address with pushState (and the document's title) and leaves the rest of the page, and the
# operations opened before, as they were; going back changes nothing on screen.
DEEP_LINKED = Page(
    (
        "<html><head><title>Parcel API</title></head><body><h1>Parcel API</h1>"
        f'<p class="intro">{DEEP_INTRO}</p>'
        + "".join(
            f'<div class="opblock" data-op="{op}"><button class="summary" aria-expanded="false">'
            f'{title}</button><div class="body"></div></div>'
            for op, (title, _) in DEEP_OPS.items()
        )
        + f'<section class="models"><h2>Schemas</h2><p>{DEEP_SCHEMA}</p></section>'
        + "<script>\nconst ops = "
        + str({op: text for op, (_, text) in DEEP_OPS.items()}).replace("'", '"')
        + """;
document.querySelectorAll('.opblock').forEach((block) => {
  const summary = block.querySelector('.summary');
  summary.addEventListener('click', () => {
    const op = block.dataset.op;
    summary.setAttribute('aria-expanded', 'true');
    block.querySelector('.body').innerHTML = `<h3>${summary.textContent}</h3><p>${ops[op]}</p>`
      + `<h4>Parameters</h4><p>account_${op} (header, required): the account it acts for.</p>`;
    history.pushState(null, '', '#/parcels/' + op);
    document.title = 'Parcel API: ' + op;  // a change beside the operation that counts not
  });
});
</script></body></html>"""
    ).encode()
)


def test_a_deep_linked_section_s_route_holds_only_what_it_opened(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Each operation's route stores what opening it showed, not again the page around it nor
    the operations opened before it, whose copies under every route crowded the answers."""
    site.pages["/parcels"] = DEEP_LINKED
    client = make_client()
    url = site.url("/parcels")
    job = capture(client, url, maxActions=10)
    assert job["status"] == "completed", job
    assert job["counts"]["routes"] == len(DEEP_OPS), job["counts"]
    for op, (title, text) in DEEP_OPS.items():
        route = f"{url}#/parcels/{op}"
        held = " ".join(c["text"] for c in resolve(client, route, "", k=20))
        assert text in held and f"account_{op}" in held, (op, held)
        others = [t for o, (_, t) in DEEP_OPS.items() if o != op]
        assert not any(t in held for t in [*others, DEEP_INTRO, DEEP_SCHEMA]), (op, held)
        top = resolve(client, route, f"{title} {text}", k=3)
        assert any(text in c["text"] for c in top), (op, top)
    page = " ".join(c["text"] for c in resolve(client, url, "", k=20))
    assert DEEP_INTRO in page and DEEP_SCHEMA in page, page


LED_OPS = {
    "getParcel": ("get /parcels/{id}", "The parcel, with its weight and its label."),
    "getParcelScans": ("get /parcels/{id}/scans", "The scans, the newest first."),
    "getParcelLabel": ("GET /parcels/{id}/label", "The label, ready to print."),
    "about": (None, "Parcels travel by van from the depot."),
    "install": (None, "The client posts parcels from a script."),
}
# Like Stoplight Elements: an operation's route opens with its name and, in a line of its own,
# its method and path; like Docusaurus' OpenAPI plugin (getParcelLabel), that line drawn as a
# block of code. Its responses, drawn apart, name only the operation. Other routes open with a
# sentence, or a command in a block of code: not labels.
LEADS = {
    "getParcel": "<div><span>get</span> <span>/parcels/{id}</span></div>",
    "getParcelScans": "<div><span>get</span> <span>/parcels/{id}/scans</span></div>",
    "getParcelLabel": "<pre><code>GET /parcels/{id}/label</code></pre>",
    "about": "<p>About the parcels.</p>",
    "install": "<pre><code>npm install parcel-client</code></pre>",
}
LED = routed_tabs(
    {op: (op, ok, "No parcel has that number.", LEADS[op]) for op, (_, ok) in LED_OPS.items()}
)


def test_a_route_s_opening_label_is_the_context_of_its_other_blocks(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """A query naming an operation's method and path found its responses under other
    operations' (Elements' getRepository response ranked 12th behind its neighbours' one-line
    "get /2.0/repositories/{username}/{slug}/pullrequests"; Docusaurus' OpenAPI plugin's, its
    method and path drawn as code, 16th): the route's opening line heads its other blocks,
    those its clicks reveal too, and nothing is stored twice for it. A sentence or a command
    that opens a route is not a label."""
    site.pages["/parcels"] = LED
    client = make_client()
    job = capture(client, site.url("/parcels"), maxActions=24)
    assert job["status"] == "completed", job
    for op, (label, ok) in LED_OPS.items():
        own = resolve(client, site.url(f"/parcels#/operations/{op}"), "", k=20)
        led = [op] if label is None else [label, op]
        # each response under its code: the tab its panel stands for, selected
        (response,) = [c for c in own if ok in c["text"]]
        assert response["headingPath"] == [*led, "Responses", "200"], response
        if label is not None:
            (missing,) = [c for c in own if "No parcel has that number" in c["text"]]
            assert missing["phase"] == "post_interaction", missing
            assert missing["headingPath"] == [*led, "Responses", "404"], missing
            path = label.split()[1]
            (line,) = [c for c in own if path in c["text"]]  # the label keeps its own path
            assert line["headingPath"] == [op], line


FEED = Page(
    b"""<html><head><title>Harbour feed</title></head><body><h1>Harbour feed</h1>
<div id="feed"></div><script>
let n = 0;
function more() {
  const feed = document.getElementById('feed');
  for (let i = 0; i < 3; i++) {
    n++;
    feed.insertAdjacentHTML('beforeend', `<article style="height: 700px"><h2>Post ${n}</h2>`
      + `<p>Post number ${n} of the feed tells of the harbour's pier ${n}.</p></article>`);
  }
}
more();
window.addEventListener('scroll', () => {
  if (n < 9 && window.innerHeight + window.scrollY >= document.body.scrollHeight - 10) more();
});
</script></body></html>"""
)


def test_what_scrolling_loads_is_stored(make_client: Callable[..., TestClient], site: Site) -> None:
    """An infinite list's next items, loaded by scrolling to its end, are stored with the page
    even where no click follows to store them."""
    site.pages["/feed"] = FEED
    client = make_client()
    url = site.url("/feed")
    job = capture(client, url, maxActions=5)
    assert job["status"] == "completed", job
    held = " ".join(c["text"] for c in resolve(client, url, "", k=50))
    for n in range(1, 10):
        assert f"Post number {n} of the feed" in held, (n, held)


# What a page that follows the scroll in its address does after a click in its operation `n`
# (Kong's spec renderer): scrolls there, draws the operations up to the second after it and
# writes the operation into the address.
SPY = """    section.scrollIntoView();
    for (let m = document.querySelectorAll('#ops section').length; m < n + 3; m++) {
      document.getElementById('ops').insertAdjacentHTML('beforeend', operation(m));
      wire(document.getElementById('op-' + m));
    }
    history.pushState(null, '', '#/operations/op-' + n);
"""


def _spied_operation(n: int) -> str:
    return (
        f'<section id="op-{n}"><h2>Operation {n}</h2><p>Operation {n} moves crates between '
        'depots.</p><button aria-expanded="false">Show child parameters</button>'
        '<div class="child"></div><div style="height: 900px"></div></section>'
    )


SPIED = Page(
    (
        '<html><head><title>Depot API</title></head><body><h1>Depot API</h1><div id="ops">'
        + "".join(_spied_operation(n) for n in range(2))
        + """</div><script>
// As Kong's spec renderer: the operation scrolled to is written into the address, and the
// next operations are rendered as the page scrolls to them.
const rendered = () => document.querySelectorAll('#ops section').length;
const operation = (n) => `"""
        + _spied_operation(999).replace("999", "${n}")
        + """`;
const wire = (section) => {
  const n = Number(section.id.slice(3));
  const button = section.querySelector('button');
  button.addEventListener('click', () => {
    button.setAttribute('aria-expanded', 'true');
    button.nextElementSibling.innerHTML = `<p>Crate weight of operation ${n} in kilograms.</p>`;
"""
        + SPY
        + """  });
};
document.querySelectorAll('#ops section').forEach(wire);
</script></body></html>"""
    ).encode()
)


def test_what_a_disclosure_opens_stays_the_page_s_when_a_scroll_spy_changes_the_address(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """A page that writes the operation scrolled to into its address (`#/operations/op-2`) and
    renders the next operations as it scrolls: a disclosure's click there reached no route.
    What it showed, its own and the next operation, is stored under the page, not under the
    address of the operation before."""
    site.pages["/depot"] = SPIED
    client = make_client()
    url = site.url("/depot")
    job = capture(client, url, maxActions=5)
    assert job["status"] == "completed", job
    held = " ".join(c["text"] for c in resolve(client, url, "", k=80))
    for n in range(7):  # five opened, each rendering up to the second after it
        assert f"Operation {n} moves crates between depots." in held, (n, held)
    for n in range(5):
        assert f"Crate weight of operation {n} in kilograms." in held, (n, held)
        assert resolve(client, f"{url}#/operations/op-{n}", "", k=50) == [], n
    assert model(client, site)["routes"] == []


def _coded_operation(n: int) -> str:
    return (
        f'<section id="op-{n}"><h2>Operation {n}</h2><p>Operation {n} weighs crates at a '
        'depot.</p><div role="tablist"><button role="tab" aria-selected="true">200</button>'
        '<button role="tab" aria-selected="false">404</button></div><div role="tabpanel">'
        f'<p>The crates of operation {n} were weighed.</p></div><div style="height: 900px">'
        "</div></section>"
    )


CODED = Page(
    (
        '<html><head><title>Scale API</title></head><body><h1>Scale API</h1><div id="ops">'
        + "".join(_coded_operation(n) for n in range(2))
        + """</div><script>
// As Kong's spec renderer's response code picker: a code picked scrolls the page to its
// operation, which is written into the address, and renders the next operations.
const operation = (n) => `"""
        + _coded_operation(999).replace("999", "${n}")
        + """`;
const wire = (section) => {
  const n = Number(section.id.slice(3));
  section.querySelectorAll('[role=tab]').forEach((tab) => tab.addEventListener('click', () => {
    section.querySelectorAll('[role=tab]').forEach(
      (t) => t.setAttribute('aria-selected', String(t === tab)));
    section.querySelector('[role=tabpanel]').innerHTML = tab.textContent === '404'
      ? `<p>No depot holds the crates of operation ${n}.</p>`
      : `<p>The crates of operation ${n} were weighed.</p>`;
"""
        + SPY
        + """  }));
};
document.querySelectorAll('#ops section').forEach(wire);
</script></body></html>"""
    ).encode()
)


def test_what_a_tab_shows_stays_the_page_s_when_a_scroll_spy_changes_the_address(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Kong's response code picker scrolls to its operation, and the address follows the
    scroll: the 404 response a tab showed was stored under the operation's address as a route
    of its own (or nowhere, where that address was reached before). It is the page's, as what
    a disclosure opens there is."""
    site.pages["/scale"] = CODED
    client = make_client()
    url = site.url("/scale")
    job = capture(client, url, maxActions=6)
    assert job["status"] == "completed", job
    held = " ".join(c["text"] for c in resolve(client, url, "", k=80))
    for n in range(3):  # each operation's "200" (shown already) and "404" clicked
        assert f"No depot holds the crates of operation {n}." in held, (n, held)
        assert resolve(client, f"{url}#/operations/op-{n}", "", k=50) == [], n
    assert model(client, site)["routes"] == []


CONSOLE = Page(
    b"""<html><head><title>Console</title></head><body><h1>Console</h1>
<div role="tablist"><button role="tab" aria-selected="true" data-view="overview">Overview</button>
<button role="tab" aria-selected="false" data-view="billing">Billing</button></div>
<main><p>The overview lists the projects of this account and their owners.</p></main>
<script>
const views = {
  overview: '<p>The overview lists the projects of this account and their owners.</p>',
  billing: '<h2>Billing</h2><p>Invoices are sent on the first working day of each month.</p>'
    + '<p>Cards are charged in euros; a failed charge is tried again after three days.</p>'
    + '<p>Receipts are kept for seven years and can be downloaded as PDF files.</p>',
};
document.querySelectorAll('[role=tab]').forEach((tab) => tab.addEventListener('click', () => {
  document.querySelectorAll('[role=tab]').forEach(
    (t) => t.setAttribute('aria-selected', String(t === tab)));
  document.querySelector('main').innerHTML = views[tab.dataset.view];
  history.pushState(null, '', '#/' + tab.dataset.view);
}));
</script></body></html>"""
)


def test_a_tab_that_routes_to_a_view_of_its_own_is_a_route(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """A tab drawn as a button that routes to a view replacing the page's (a console's
    "Billing"): not a scroll spy. Its view is stored under its own address, as a route."""
    site.pages["/console"] = CONSOLE
    client = make_client()
    url = site.url("/console")
    job = capture(client, url, maxActions=4)
    assert job["status"] == "completed", job
    billing = " ".join(c["text"] for c in resolve(client, f"{url}#/billing", "", k=20))
    assert "Invoices are sent on the first working day of each month." in billing, billing
    page = " ".join(c["text"] for c in resolve(client, url, "", k=20))
    assert "Invoices are sent" not in page, page
    assert f"{url}#/billing" in model(client, site)["routes"]


# The spied page with a table of contents of links to each operation's address, which renders
# the operations up to the one after it and scrolls there, on a click or when the page is
# opened at it.
SPIED_TOC = Page(
    SPIED.body.replace(
        b'<div id="ops">',
        b'<nav class="toc">'
        + b"".join(
            b'<a href="#/operations/op-%d">%s crates</a> ' % (n, verb)
            for n, verb in enumerate((b"Load", b"Weigh", b"Stack", b"Ship", b"Count", b"Store"))
        )
        + b'</nav><div id="ops">',
    )
    .replace(b"m < n + 3", b"m < Math.min(n + 3, 4)")  # the last two by the contents only
    .replace(
        b"document.querySelectorAll('#ops section').forEach(wire);",
        b"""document.querySelectorAll('#ops section').forEach(wire);
const goTo = (n) => {
  for (let m = rendered(); m <= n + 1; m++) {
    document.getElementById('ops').insertAdjacentHTML('beforeend', operation(m));
    wire(document.getElementById('op-' + m));
  }
  document.getElementById('op-' + n).scrollIntoView();
};
document.querySelectorAll('.toc a').forEach((a) => a.addEventListener('click', (event) => {
  event.preventDefault();
  goTo(Number(a.getAttribute('href').split('-').pop()));
  history.pushState(null, '', a.getAttribute('href'));
}));
const draw = () => {  // as its router does at each address: drawn anew from the top
  document.getElementById('ops').innerHTML = operation(0) + operation(1);
  document.querySelectorAll('#ops section').forEach(wire);
  if (location.hash) goTo(Number(location.hash.split('-').pop()));
};
window.addEventListener('popstate', draw);
if (location.hash) goTo(Number(location.hash.split('-').pop()));""",
    )
)


def test_a_view_that_is_the_page_it_came_from_is_not_explored_again(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Kong's renderer: a table of contents writes each operation into the address, and its
    view is the page itself, scrolled. What the page's exploration did there (a disclosure
    opened) is not done again inside each operation's view: Kong spent 20 of 56 actions on
    the same "Show Child Parameters", after each of five routes."""
    site.pages["/depot"] = SPIED_TOC
    client = make_client()
    url = site.url("/depot")
    job = capture(client, url, maxActions=40)
    assert job["status"] == "completed", job
    found = model(client, site)
    done = [(s["action"], s["label"]) for s in found["steps"]]
    assert len(done) == len(set(done)), done
    assert found["stoppedBy"] == "exhausted", found["stoppedBy"]
    # what each disclosure opened is stored once, under the page or an operation's address
    held = [c["text"] for u in (url, *found["routes"]) for c in resolve(client, u, "", k=80)]
    for n in range(6):
        said = [t for t in held if f"Crate weight of operation {n} in kilograms." in t]
        assert len(said) == 1, (n, said, found["steps"])


SECTIONS = {"Guides": ("install", "upgrade", "backup"), "Reference": ("cli", "config", "api")}


def ledger_router(before: str = "") -> str:
    """The end of a Ledger page: a script that draws each route's page in `main` (after
    `before`, run on every route too) as its address changes."""
    return (
        """const render = () => {
"""
        + before
        + """  const slug = location.hash.replace(/^#\\/?/, '') || 'home';
  document.querySelector('main').innerHTML =
    `<h1>${slug}</h1><p>The ${slug} page of Ledger says how ledgers handle ${slug}.</p>`;
};
window.addEventListener('hashchange', render);
render();
</script></body></html>"""
    )


COLLAPSED = Page(
    (
        """<html><head><title>Ledger docs</title><style>
.toggle { display: none; }
.section > nav { display: grid; visibility: collapse; height: 0; overflow: hidden; }
.toggle:checked ~ nav { visibility: visible; height: auto; }
label { cursor: pointer; }
</style></head><body><nav class="sidebar"><ul><li><a href="#/">Home</a></li>"""
        + "".join(
            f'<li class="section"><input class="toggle" type="checkbox" id="s{n}">'
            f'<label for="s{n}" tabindex="0">{name}</label><nav><ul>'
            + "".join(f'<li><a href="#/{slug}">{slug.title()}</a></li>' for slug in slugs)
            + "</ul></nav></li>"
            for n, (name, slugs) in enumerate(SECTIONS.items())
        )
        + """</ul></nav><main></main><script>
"""
        # Each page drawn anew, its sections shut, as Material's pages are documents of their own.
        + ledger_router(
            "  document.querySelectorAll('.toggle')"
            ".forEach((toggle) => { toggle.checked = false; });\n"
        )
    ).encode()
)


def every_section_s_pages_reached(
    client: TestClient, site: Site, sections: dict[str, tuple[str, ...]] = SECTIONS
) -> None:
    """A capture of /ledger visits every page of every section."""
    job = capture(client, site.url("/ledger"), maxActions=20)
    assert job["status"] == "completed", job
    understanding = model(client, site)["understanding"]
    visited = {route.rsplit("#", 1)[1] for route in understanding["routes"]}
    assert visited == {f"/{slug}" for slugs in sections.values() for slug in slugs}, visited


def test_links_in_a_section_collapsed_by_visibility_are_reached_by_opening_it(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Material for MkDocs closes a sidebar section with `visibility: collapse`, laid out all
    the same: its links are no more clickable than hidden ones. Taken for shown, each click
    failed and five failures in a row stopped the exploration; the section's label opens it.
    Each page draws its sections shut: back from one, the explorer opens its section again."""
    site.pages["/ledger"] = COLLAPSED
    client = make_client()
    every_section_s_pages_reached(client, site)
    own = " ".join(c["text"] for c in resolve(client, site.url("/ledger#/backup"), ""))
    assert "how ledgers handle backup" in own, own


# The same sidebar drawn by a web component, in its shadow root.
SHADOW_COLLAPSED = Page(
    COLLAPSED.body.replace(b'<nav class="sidebar">', b'<template id="nav"><nav class="sidebar">')
    .replace(b"</ul></nav><main>", b"</ul></nav></template><ledger-nav></ledger-nav><main>")
    .replace(b"<style>", b'<style id="css">')
    .replace(
        b"const render = () => {",
        b"""customElements.define('ledger-nav', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({mode: 'open'});
    root.append(document.getElementById('css').cloneNode(true));
    root.append(document.getElementById('nav').content.cloneNode(true));
  }
});
const shadow = document.querySelector('ledger-nav').shadowRoot;
const render = () => {""",
    )
    .replace(b"document.querySelectorAll('.toggle')", b"shadow.querySelectorAll('.toggle')")
)


# The same sidebar with each section's label marked open by a class of its own (VuePress's
# arrow): opening a section changes the label too, seen as "replaced", not only "revealed".
FLIPPED = Page(
    COLLAPSED.body.replace(
        b"window.addEventListener('hashchange', render);",
        b"""document.querySelectorAll('label').forEach((label) => label.addEventListener('click',
  () => { label.className = label.className === 'open' ? 'shut' : 'open'; }));
window.addEventListener('hashchange', () => {
  document.querySelectorAll('label').forEach((label) => { label.className = 'shut'; });
});
window.addEventListener('hashchange', render);""",
    )
)


@pytest.mark.parametrize("page", [SHADOW_COLLAPSED, FLIPPED], ids=["shadow-root", "label-flips"])
def test_a_section_shut_again_is_opened_again_wherever_and_however_it_opens(
    page: Page, make_client: Callable[..., TestClient], site: Site
) -> None:
    """As above with the sidebar in a web component's shadow root (RapiDoc, Shoelace): the
    section's label is found across the root; and with a label whose class flips as it opens
    (VuePress's arrow), which reads as "replaced" rather than "revealed"."""
    site.pages["/ledger"] = page
    every_section_s_pages_reached(make_client(), site)


# A sidebar drawn as Vocs draws it: each section shut by a class, headed by a `role=button`
# with no `aria-expanded`, its links drawn only while it is open and kept open from page to
# page. Open, a section holds two `div`s, so its header's positional selector changes.
SHUT_BY_CLASS = {**SECTIONS, "Operations": ("restore", "monitor")}
RENDERED_ON_OPEN = Page(
    (
        """<html><head><title>Ledger docs</title></head><body><aside><nav><div>"""
        + "".join(
            f'<section class="level levelCollapsed" data-slugs="{" ".join(slugs)}">'
            f'<div role="button" tabindex="0"><div>{name}</div>'
            '<div role="button" tabindex="0" aria-label="toggle section">&gt;</div></div>'
            "</section>"
            for name, slugs in SHUT_BY_CLASS.items()
        )
        + """</div></nav></aside><main></main><script>
document.querySelectorAll('section > div').forEach((head) => head.addEventListener('click', () => {
  const section = head.parentElement;
  if (section.classList.toggle('levelCollapsed')) section.querySelector('.items').remove();
  else section.insertAdjacentHTML('beforeend', '<div class="items">' + section.dataset.slugs
    .split(' ').map((slug) => `<a href="#/${slug}">${slug}</a>`).join('') + '</div>');
}));
"""
        + ledger_router()
    ).encode()
)


# The same, each page drawing every section shut anew (its links gone with it).
RENDERED_SHUT_ANEW = Page(
    RENDERED_ON_OPEN.body.replace(
        b"window.addEventListener('hashchange', render);",
        b"""window.addEventListener('hashchange', () => document.querySelectorAll('section')
  .forEach((section) => {
    section.classList.add('levelCollapsed');
    section.querySelector('.items')?.remove();
  }));
window.addEventListener('hashchange', render);""",
    )
)


@pytest.mark.parametrize(
    "page", [RENDERED_ON_OPEN, RENDERED_SHUT_ANEW], ids=["kept-open", "drawn-shut-anew"]
)
def test_a_section_opened_is_not_clicked_shut_when_its_header_moves(
    page: Page, make_client: Callable[..., TestClient], site: Site
) -> None:
    """Vocs: once a section is open its header comes back under another selector, and was
    clicked again as a new control. That shut the section, the page went back to a state it
    had been in, and the third time the explorer stopped: the last section was never
    opened. A navigation group the explorer opened is known by its label and container, and
    opened again when its class says it was drawn shut (its links are then not drawn at all,
    so none can be seen hidden). The chevron inside a header is part of it, not a control
    that shuts the section once more."""
    site.pages["/ledger"] = page
    client = make_client()
    every_section_s_pages_reached(client, site, SHUT_BY_CLASS)
    clicked = [step["label"] for step in model(client, site)["steps"]]
    assert len(clicked) == len(set(clicked)), clicked  # no section shut by a second click


# A sidebar drawn as Fumadocs draws one: its parts are plain `div`s in one navigation with an
# id, each opened by a button (Radix's collapsible) whose label differs from the others' only
# in its number.
NUMBERED = {
    f"Part {n}": slugs
    for n, slugs in enumerate((("install", "upgrade"), ("cli", "config"), ("restore", "api")), 1)
}
NUMBERED_PARTS = Page(
    (
        """<html><head><title>Ledger docs</title></head><body><aside id="sidebar"><nav>"""
        + "".join(
            f'<div><button aria-expanded="false">{name}</button><div hidden>'
            + "".join(f'<a href="#/{slug}">{slug}</a>' for slug in slugs)
            + "</div></div>"
            for name, slugs in NUMBERED.items()
        )
        + """</nav></aside><main></main><script>
document.querySelectorAll('button').forEach((button) => button.addEventListener('click', () => {
  const open = button.getAttribute('aria-expanded') !== 'true';
  button.setAttribute('aria-expanded', String(open));
  button.nextElementSibling.hidden = !open;
}));
"""
        + ledger_router()
    ).encode()
)


def test_parts_of_a_navigation_told_apart_by_their_number_are_each_opened(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Fumadocs: "Part 1" was opened and its pages visited, then the exploration ended
    ("exhausted" after six clicks): a control's number was read as a count that changes as
    it re-renders ("Load 20 more"), so "Part 2" and "Part 3" were the group already opened.
    In a navigation, a number names what an entry leads to."""
    site.pages["/ledger"] = NUMBERED_PARTS
    every_section_s_pages_reached(make_client(), site, NUMBERED)


# A site in parts, as dumi draws one: the top bar names each part, and a part's pages are
# listed only in its own sidebar, drawn on the part's pages (the home page has none).
IN_PARTS = Page(
    (
        """<html><head><title>Ledger docs</title></head><body><header><nav>"""
        + "".join(f'<a href="#/{name.lower()}">{name}</a>' for name in SECTIONS)
        + """</nav></header><aside></aside><main></main><script>
const parts = """
        + str({name.lower(): list(slugs) for name, slugs in SECTIONS.items()}).replace("'", '"')
        + """;
"""
        + ledger_router(
            """  const at = location.hash.replace(/^#\\/?/, '');
  const part = Object.keys(parts).find((p) => p === at || parts[p].includes(at));
  document.querySelector('aside').innerHTML = part ? '<nav><ul>' + parts[part]
    .map((s) => `<li><a href="#/${s}">${s}</a></li>`).join('') + '</ul></nav>' : '';
"""
        )
    ).encode()
)


def test_the_pages_a_route_s_own_navigation_lists_are_visited(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """dumi: the top bar's parts were visited and the exploration ended there ("exhausted"
    after three clicks), since in a route's view only its own tabs and disclosures were
    acted on. A part's pages are named only in the part's sidebar: links a route's view
    draws to pages not seen are visited as the start page's are, once each."""
    site.pages["/ledger"] = IN_PARTS
    client = make_client()
    job = capture(client, site.url("/ledger"), maxActions=20)
    assert job["status"] == "completed", job
    understanding = model(client, site)["understanding"]
    visited = [route.rsplit("#", 1)[1] for route in understanding["routes"]]
    parts = [f"/{name.lower()}" for name in SECTIONS]
    pages = [f"/{slug}" for slugs in SECTIONS.values() for slug in slugs]
    assert sorted(visited) == sorted(parts + pages), visited
    own = " ".join(c["text"] for c in resolve(client, site.url("/ledger#/config"), ""))
    assert "how ledgers handle config" in own, own


# A multi-page documentation site (Starlight, Sphinx, Hugo): every page a document of its own
# with the same header and sidebar, its sections `details` shut but for the current page's.
HARBOR = {"Guides": ("install", "upgrade", "backup"), "Reference": ("cli", "config", "missing")}
# The pages the navigation names that answer (missing answers 404).
HARBOR_PAGES = tuple(s for slugs in HARBOR.values() for s in slugs if s != "missing")


def harbor_page(slug: str, toc: str = "", crumbs: str = "") -> Page:
    sections = "".join(
        f"<li><details{' open' if slug in slugs else ''}><summary>{name}</summary><ul>"
        + "".join(f'<li><a href="/harbor/{s}">{s.title()}</a></li>' for s in slugs)
        + "</ul></details></li>"
        for name, slugs in HARBOR.items()
    )
    return Page(
        f"""<html><head><title>Harbor: {slug}</title></head><body>
<header><p>Harbor 4 ships with a new berth scheduler, announced on every page.</p></header>
<nav class="sidebar" aria-label="Main"><ul><li><a href="/harbor/">Home</a>{toc}</li>{sections}</ul>
</nav><main>{crumbs}<h1>{slug.title()}</h1>
<p>The {slug} page of Harbor explains how moorings handle {slug}.</p>
<h2 id="usage">Usage</h2><p>Moor first.</p><h2 id="faq">FAQ</h2><p>Ask the harbour master.</p>
<p>See also <a href="/harbor/elsewhere">a page linked from the text</a>.</p></main>
</body></html>""".encode()
    )


def harbor_explored(
    client: TestClient, site: Site, pages: Iterable[str], max_actions: int
) -> tuple[dict, list[tuple[str, str]]]:
    """Capture the site's home page `/harbor/`, exploring: what it learned and its steps (label,
    effect), once its routes are checked to be the `pages` (slugs: a path's last slash is
    dropped in the canonical URL)."""
    job = capture(client, site.url("/harbor/"), maxActions=max_actions)
    assert job["status"] == "completed", job
    learned = model(client, site)
    steps = [(step["label"], step["effect"]) for step in learned["steps"]]
    assert sorted(learned["understanding"]["routes"]) == sorted(
        site.url(f"/harbor/{s}") for s in pages
    ), steps
    return learned, steps


def test_the_links_a_multi_page_site_s_page_adds_are_not_followed_from_it(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Sphinx's themes: each page's breadcrumbs link the home page as `index.html` and the
    page's source (`_sources/<page>.md.txt`), links the home page does not draw. Followed from
    each page's view as a client-side route's own navigation is (dumi's parts), they stored
    the home page a second time, whose copy outranked it, and every page's source. The pages
    of a multi-page site are its start page's navigation's, and the crawler's."""
    site.pages["/harbor/"] = harbor_page("home")
    site.pages["/harbor/index.html"] = harbor_page("home")
    for slug in HARBOR_PAGES:
        crumbs = (
            '<div role="navigation" aria-label="Page navigation"><a href="/harbor/index.html">'
            f'Docs</a> / {slug} <a href="/harbor/_sources/{slug}.md.txt">View page source</a></div>'
        )
        site.pages[f"/harbor/{slug}"] = harbor_page(slug, crumbs=crumbs)
        site.pages[f"/harbor/_sources/{slug}.md.txt"] = Page(
            f"# {slug}\n\nThe source of the {slug} page.".encode(), content_type="text/plain"
        )
    harbor_explored(make_client(), site, HARBOR_PAGES, max_actions=30)


@pytest.mark.parametrize("moved", ["", "/"], ids=["as_linked", "redirected"])
def test_a_multi_page_site_s_navigation_is_visited_page_by_page(
    make_client: Callable[..., TestClient], site: Site, moved: str
) -> None:
    """Starlight: a sidebar link loads a new document. The explorer went back after the first
    and clicked no other navigation link, so a capture of the home page held the home page
    alone (1 of 16 pages). Each page its navigation loads is stored under its own URL as a
    route's view is, without the header and sidebar it shares with the page it came from; a
    link that answers with an error, and links in the text, are not pages of it. Many static
    hosts redirect a link without its slash to the folder (`/harbor/install` to
    `/harbor/install/`): the click goes on to where the redirect ends, as in a browser; it
    read as no change, and the site as its home page alone."""
    site.pages["/harbor/"] = harbor_page("home")
    for slugs in HARBOR.values():
        for slug in slugs:
            if slug != "missing":  # answered 404
                site.pages[f"/harbor/{slug}{moved}"] = harbor_page(slug)
            if moved:
                site.pages[f"/harbor/{slug}"] = Page(
                    b"", status=301, headers={"Location": f"/harbor/{slug}/"}
                )
    client = make_client()
    pages = HARBOR_PAGES
    learned, _ = harbor_explored(client, site, pages, max_actions=20)
    assert learned["understanding"]["pageType"] != "routed_app"  # no client-side router
    for slug in pages:
        own = " ".join(c["text"] for c in resolve(client, site.url(f"/harbor/{slug}{moved}"), ""))
        assert f"how moorings handle {slug}." in own, (slug, own)
        assert "berth scheduler" not in own  # the header the home page holds already
    assert resolve(client, site.url(f"/harbor/missing{moved}"), "") == []
    assert f"/harbor/missing{moved}" in site.requests  # clicked, and its 404 page not stored
    assert "/harbor/elsewhere" not in site.requests  # the crawler follows links in text


# MkDocs' default theme (Bootstrap): the site's parts are drop-down menus in a top bar named
# `navbar`, not a `nav`; the toggle is a link to `#` beside its menu in one `li`, and any click
# elsewhere closes an open menu, so one is open at a time.
PARTS = {"Part 1": ("install", "upgrade"), "Part 2": ("backup", "cli"), "Part 3": ("config",)}


def navbar_page(slug: str) -> Page:
    menus = "".join(
        f'<li class="nav-item dropdown"><a href="#" class="nav-link dropdown-toggle" '
        f'role="button" aria-expanded="false">{name}</a><ul class="dropdown-menu">'
        + "".join(f'<li><a href="/harbor/{s}/" class="dropdown-item">{s}</a></li>' for s in slugs)
        + "</ul></li>"
        for name, slugs in PARTS.items()
    )
    return Page(
        f"""<html><head><title>Harbor: {slug}</title><style>
.dropdown-menu {{ display: none; }} .dropdown-menu.show {{ display: block; }}</style></head>
<body><div class="navbar fixed-top"><a class="navbar-brand" href="/harbor/">Harbor</a>
<ul class="nav navbar-nav"><li class="nav-item"><a href="/harbor/" class="nav-link">Home</a></li>
{menus}</ul></div>
<div class="container"><h1>{slug.title()}</h1>
<p>The {slug} page of Harbor explains how moorings handle {slug}.</p></div>
<script>
document.addEventListener('click', (e) => {{
  const toggle = e.target.closest('.dropdown-toggle');
  for (const menu of document.querySelectorAll('.dropdown-menu.show'))
    if (!toggle || menu.previousElementSibling !== toggle) menu.classList.remove('show');
  if (!toggle) return;
  e.preventDefault();
  const open = toggle.nextElementSibling.classList.toggle('show');
  toggle.setAttribute('aria-expanded', String(open));
}});
</script></body></html>""".encode()
    )


def every_page_explored(
    client: TestClient, site: Site, page: Callable[[str], Page], pages: list[str], slash: str = ""
) -> list[tuple[str, str]]:
    """Serve `page(slug)` at `/harbor/<slug><slash>` for the home page and each of `pages`,
    capture the home page exploring, and check each page's own sentence is stored under its
    URL: the steps (label, effect)."""
    site.pages["/harbor/"] = page("home")
    for slug in pages:
        site.pages[f"/harbor/{slug}{slash}"] = page(slug)
    _, steps = harbor_explored(client, site, pages, max_actions=20)
    for slug in pages:
        own = " ".join(c["text"] for c in resolve(client, site.url(f"/harbor/{slug}{slash}"), ""))
        assert f"how moorings handle {slug}." in own, (slug, own)
    return steps


def test_a_top_bar_s_drop_down_menus_are_walked_one_at_a_time(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """MkDocs' default theme: the explorer opened Part 1, 2 and 3 in turn (each closing the one
    before) and visited one page of the last (2 of 16 pages): a top bar named `navbar` read as
    no navigation, so the menus were not reopened on coming back, and a group reopened only
    when none of its links showed, its own toggle (a link to `#`) counted. Now each menu is
    reopened on coming back while it names pages not visited yet, and left shut once all
    were, so that the menu after it stays open."""
    pages = [s for slugs in PARTS.values() for s in slugs]
    steps = every_page_explored(make_client(), site, navbar_page, pages, "/")
    assert len(steps) == len(PARTS) + len(pages), steps  # each menu opened once by a step


# Doxygen's tree: a sidebar of `div`s named `side-nav` and `nav-tree` (no `nav`, no `aside`),
# each part a row of an arrow (a link to `javascript:void(0)`, "►" shut, "▼" open) and its
# label; a part's rows drawn only when it opens, the row shown `id="selected"`; the tree is a
# pane scrolled right, as Doxygen scrolls it to show a long title, the arrows out of it.
TREE = {"Mooring": ("install", "upgrade"), "Berths": ("backup", "cli", "config")}


def tree_page(slug: str) -> Page:
    parts = json.dumps(TREE)
    return Page(
        f"""<html><head><title>Harbor: {slug}</title><style>
#side-nav {{ position: fixed; left: 0; top: 0; bottom: 0; width: 180px; }}
#nav-tree {{ height: 100%; overflow: auto; white-space: nowrap; }}
#doc-content {{ margin-left: 200px; }} ul {{ list-style: none; padding-left: 12px; }}
</style></head><body>
<div id="side-nav"><div id="nav-tree"><ul id="rows"><li><div class="item"><span class="label">
<a href="/harbor/">Harbor: a handbook of moorings, berths and all a harbour master does</a>
</span></div></li></ul></div></div>
<div id="doc-content"><h1>{slug.title()}</h1>
<p>The {slug} page of Harbor explains how moorings handle {slug}.</p>
<p>Read next: <a href="/harbor/upgrade">upgrading</a>, <a href="/harbor/cli">the command line</a>.
</p></div>
<script>
const parts = {parts};
const here = location.pathname.split('/').filter(Boolean).pop();
const row = (label, href, arrow) => '<li><div class="item"' + (href.endsWith('/' + here)
  ? ' id="selected"' : '') + '>' + (arrow ? '<a class="arrow" href="javascript:void(0)">►</a>'
  : '') + '<span class="label"><a href="' + href + '">' + label + '</a></span></div></li>';
const rows = document.getElementById('rows');
for (const name of Object.keys(parts)) rows.insertAdjacentHTML('beforeend',
  row(name, '/harbor/' + name.toLowerCase(), true));
const toggle = (arrow) => {{
  const li = arrow.closest('li');
  const open = li.querySelector('ul');
  if (open) {{ open.remove(); arrow.textContent = '►'; return; }}
  const name = li.querySelector('.label a').textContent;
  li.insertAdjacentHTML('beforeend', '<ul>' + parts[name].map(
    (s) => row(s, '/harbor/' + s, false)).join('') + '</ul>');
  arrow.textContent = '▼';
}};
for (const arrow of document.querySelectorAll('.arrow')) {{
  arrow.addEventListener('click', (e) => {{ e.preventDefault(); toggle(arrow); }});
  const name = arrow.closest('li').querySelector('.label a').textContent;
  if (name.toLowerCase() === here || parts[name].includes(here)) toggle(arrow);
}}
document.getElementById('nav-tree').scrollLeft = 120;
</script></body></html>""".encode()
    )


def test_a_tree_whose_parts_draw_their_pages_when_opened_is_walked(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """Doxygen: the capture stored its home page alone (1 of 16 pages), then 4. Its tree is
    named by id (`nav-tree`), which read as no navigation; then its arrows, scrolled out of the
    tree's pane to the left, read as hidden, though a click scrolls them into view as it does
    what is above the window; then each part, drawn shut again on coming back with none of its
    rows, was reopened never, so only its first page was visited. A part is reopened while the
    links it showed when it was opened do not show in the tree (the page's text links two of
    the same pages)."""
    pages = [*(name.lower() for name in TREE), *(s for slugs in TREE.values() for s in slugs)]
    steps = every_page_explored(make_client(), site, tree_page, pages)
    assert ("▼", "replaced") not in steps and ("▼", "revealed") not in steps, steps  # no folding


# rustdoc: the sidebar names no page below the one shown (the crate's lists only "All Items";
# a module's, its siblings, from a data file); a module's pages are listed in its text, a table
# of rows each led by a link (`div`s in rustdoc 1.63, a `dl` since), numbered alike. Beside the
# title, a button that copies the item's path and a glyph, "[−]", titled for what it does. Not
# an index: links inside sentences, in a table's second column, in the footer's list.
MODULES = {"part_1": ("install", "upgrade"), "part_2": ("backup", "cli"), "part_3": ("config",)}
ASIDE = ("tides", "crew", "legal")  # pages the text links, not in an index


def module_page(slug: str) -> Page:
    below = MODULES.get(slug, MODULES if slug == "home" else ())
    rows = "".join(
        f'<div class="item-row"><div class="item-left"><a class="mod" href="/harbor/{s}/">'
        f'{s}</a></div><div class="item-right">The {s} part of Harbor.</div></div>'
        if slug == "home"
        else f'<dt><a class="mod" href="/harbor/{slug}/{s}/">{s}</a></dt><dd>How to {s}.</dd>'
        for s in below
    )
    tag = "div" if slug == "home" else "dl"
    return Page(
        f"""<html><head><title>Harbor: {slug}</title></head><body>
<nav class="sidebar"><a href="/harbor/">Harbor</a><ul><li><a href="/harbor/all/">All Items</a>
</li></ul></nav><main><h1>{slug} <button id="copy-path">Copy item path to clipboard</button>
<a id="toggle-all-docs" href="javascript:void(0)" title="collapse all docs">[&#x2212;]</a></h1>
<details open class="top-doc"><summary>Expand description</summary>
<p>The {slug} page of Harbor explains how moorings handle {slug}.</p></details>
<{tag} class="item-table">{rows}</{tag}>
<p>Read <a href="/harbor/tides/">the tides</a> first.</p>
<p>Ask <a href="/harbor/crew/">crew</a>.</p>
<table><tr><td>Owner</td><td><a href="/harbor/crew/">crew</a></td></tr>
<tr><td>Tides</td><td><a href="/harbor/tides/">tides</a></td></tr></table></main>
<footer><ul><li><a href="/harbor/legal/">Legal</a></li></ul></footer>
<script>
document.getElementById('copy-path').addEventListener('click', (e) => {{
  e.target.textContent = '✓'; }});
document.getElementById('toggle-all-docs').addEventListener('click', (e) => {{
  for (const d of document.querySelectorAll('details')) d.open = false; }});
</script></body></html>""".encode()
    )


def test_an_index_of_pages_in_the_text_is_walked_down(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """rustdoc: the capture stored the crate's page alone (1 of 16 pages): its sidebar names
    none of the modules, which its text lists in a table, and each module its pages. A page
    index in the text (rows side by side, each opening with a link to a page below) is followed
    as navigation is, down from each page it loads, and no other link of the text is; its
    entries, numbered alike, are told apart by where they lead, not blocked as one repeated
    action; copying is not clicked, and "[−]" is named by its title, a collapse."""
    for slug in ASIDE:
        site.pages[f"/harbor/{slug}/"] = module_page(slug)
    pages = ["all", *MODULES, *(f"{m}/{s}" for m, slugs in MODULES.items() for s in slugs)]
    steps = every_page_explored(make_client(), site, module_page, pages, "/")
    labels = [label for label, _ in steps]
    assert not [x for x in labels if "copy" in x.lower() or x == "✓"], steps
    assert "collapse all docs" in labels and "[−]" not in labels, steps


# Read the Docs' theme (MkDocs' and Sphinx's) marks the page's table of contents expanded or
# not: the list, and each item once its anchor is clicked, which flips the item's class.
RTD_TOC = """<ul class="toc" aria-expanded="false">
<li><a href="#usage">Usage</a></li><li><a href="#faq">FAQ</a></li></ul>
<script>for (const a of document.querySelectorAll('.toc a')) a.addEventListener('click', () => {
  const li = a.parentElement; li.classList.toggle('current');
  li.setAttribute('aria-expanded', String(li.classList.contains('current'))); });</script>"""


def test_a_table_of_contents_marked_expanded_is_no_control(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """MkDocs' Read the Docs theme: the explorer took the table of contents' list and its
    items (`aria-expanded`, set by the theme's script) for expanders, clicked anchor after
    anchor, each flipping a class, until the state-loop breaker ended the capture before any
    page of the site (1 of 16 pages). An element marked expanded or not that is no control
    itself and holds controls is a group: its links are what is clicked, and links to anchors
    of the page are not."""
    site.pages["/harbor/"] = harbor_page("home", RTD_TOC)
    pages = ("install", "upgrade", "backup", "cli", "config")
    for slug in pages:
        site.pages[f"/harbor/{slug}"] = harbor_page(slug)
    _, steps = harbor_explored(make_client(), site, pages, max_actions=12)
    assert not [label for label, _ in steps if "Usage" in label or "FAQ" in label], steps


# Four controls in the page's text that each show or hide the same panel (and say they are
# shut whatever it shows): clicked in turn, the page comes back to the state it was in, and a
# third time trips the state-loop breaker.
FLIP_FLOP = b"""<div id="more" hidden><p>Moorings are inspected every spring.</p></div>
<button class="more" aria-expanded="false">Details</button>
<button class="more" aria-expanded="false">Inspection</button>
<button class="more" aria-expanded="false">Schedule</button>
<button class="more" aria-expanded="false">Season</button>
<script>for (const b of document.querySelectorAll('.more')) b.addEventListener('click', () => {
  const more = document.getElementById('more'); more.hidden = !more.hidden; });</script></main>"""


def test_a_state_loop_ends_the_page_s_own_controls_not_the_visit_of_its_pages(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """MkDocs' Read the Docs theme: clicks on controls that bring the page back to a state it
    was in tripped the state-loop breaker, which ended the whole exploration with every page
    of the site's navigation still unvisited. Now the breaker ends the page's own controls:
    the pages its navigation names are visited all the same."""
    site.pages["/harbor/"] = Page(harbor_page("home").body.replace(b"</main>", FLIP_FLOP))
    pages = HARBOR_PAGES
    for slug in pages:
        site.pages[f"/harbor/{slug}"] = harbor_page(slug)
    learned, steps = harbor_explored(make_client(), site, pages, max_actions=20)
    flips = ["Details", "Inspection", "Schedule", "Season"]
    assert [label for label, _ in steps if label in flips] == flips, steps
    assert any(b.startswith("state_loop") for b in learned["breakers"]), learned["breakers"]
    assert learned["stoppedBy"] == "breaker:state_loop"


BOOK_PAGES = {
    "intro": ("Introduction", "Dials are widgets that show one number against its range."),
    "sizes": ("Sizes", "A dial comes in three sizes, the smallest forty pixels wide."),
    "themes": ("Themes", "Each theme sets the colours of the needle and of the scale."),
    "events": ("Events", "A dial fires a change event once its needle comes to rest."),
}
# As Storybook draws its documentation: the manager's sidebar routes by its query
# (`?page=<id>`) and tells a same-origin frame beside it which page to draw; the frame shows a
# placeholder table, hidden from screen readers, until it has drawn the page, and keeps a
# "No Preview" view it does not display.
BOOK = Page(
    (
        """<html><head><title>Dials</title></head><body>
<nav class="sidebar"><ul>"""
        + "".join(f'<li><a href="/book?page={p}">{t}</a></li>' for p, (t, _) in BOOK_PAGES.items())
        + """</ul></nav>
<main><iframe id="preview" src="/book/preview.html" style="width: 900px; height: 700px"></iframe>
</main><script>
const frame = document.getElementById('preview');
const tell = () => frame.contentWindow.postMessage(
  new URLSearchParams(location.search).get('page') || 'intro', '*');
frame.addEventListener('load', () => setTimeout(tell, 300));
document.querySelector('.sidebar').addEventListener('click', (e) => {
  const a = e.target.closest('a');
  if (!a) return;
  e.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  tell();
});
</script></body></html>"""
    ).encode()
)
BOOK_PREVIEW = Page(
    (
        """<html><head><style>.nopreview { display: none; }</style></head><body>
<div class="nopreview"><h1>No Preview</h1><p>Sorry, but no page is selected somehow.</p></div>
<div id="docs"><table aria-hidden="true"><tr><td>propertyName</td>
<td>This is a short description</td></tr></table></div>
<script>
const pages = """
        + json.dumps({p: list(v) for p, v in BOOK_PAGES.items()})
        + """;
window.addEventListener('message', (e) => setTimeout(() => {
  const [title, text] = pages[e.data];
  document.getElementById('docs').innerHTML = `<h1>${title}</h1><p>${text}</p>`;
}, 200));
</script></body></html>"""
    ).encode()
)


@pytest.mark.parametrize("method", ["capture", "spider"])
def test_what_a_same_origin_frame_shows_is_its_page_s_text(
    make_client: Callable[..., TestClient], site: Site, method: str
) -> None:
    """Storybook draws each documentation page in a frame beside its sidebar: lore left frames
    out, and stored none of sixteen pages' words, captured or crawled. Now a same-origin frame's
    document is read in its place, as the person sees it: each route's words under the route,
    not the frame's hidden views, not its placeholder (a crawl waits for the frame to draw)."""
    site.pages["/book/preview.html"] = BOOK_PREVIEW
    for path in ("/book", *(f"/book?page={p}" for p in BOOK_PAGES)):
        site.pages[path] = BOOK
    client = make_client()
    if method == "capture":
        job = capture(client, site.url("/book?page=intro"), maxActions=20)
    else:
        response = client.post(
            "/knowledge/index-link",
            json={
                "url": site.url("/book?page=intro"),
                "strategy": "spider",
                "render": "browser",
                "include": ["/book*"],
            },
        )
        assert response.status_code == 202, response.text
        job = wait_for_job(client, response.json()["jobId"], timeout_s=180)
    assert job["status"] == "completed", job
    for page, (_, sentence) in BOOK_PAGES.items():
        url = site.url(f"/book?page={page}")
        own = " ".join(c["text"] for c in resolve(client, url, ""))
        assert sentence in own, (page, own)
        assert "No Preview" not in own and "short description" not in own, own
        top = resolve(client, url, sentence, k=3)
        assert any(sentence in c["text"] for c in top), (page, top)


WIKI_PAGES = {
    "Gauges": "A gauge redraws its arc each time the sampled value changes.",
    "Sparklines": "A sparkline keeps the last ninety samples of a metric in memory.",
    "Heatmaps": "A heatmap buckets its samples into squares of five minutes each.",
    "Alerts": "An alert fires once a metric stays above its threshold for a minute.",
}
# As TiddlyWiki draws itself: a sidebar whose tab set (role=tablist) holds its buttons and the
# shown panel alike; the Contents panel lists the pages as links to `#<title>`, which name no
# element: the wiki's script opens the page so titled above the others, the address unchanged.
# The other tabs replace the panel (Recent lists pages again). Each page opened has its menus
# of commands ("more", titled "More actions"; "export page").
WIKI = Page(
    (
        """<html><head><title>Dashboard wiki</title></head><body>
<main class="story"><section><h2>Welcome</h2><p>This wiki documents dashboard widgets.</p>
</section></main>
<div class="wiki-sidebar"><div class="tab-set" role="tablist"><div class="tab-buttons">
<button role="tab" aria-selected="true" data-tab="contents">Contents</button>
<button role="tab" aria-selected="false" data-tab="recent">Recent</button>
<button role="tab" aria-selected="false" data-tab="tools">Tools</button></div>
<div class="tab-content" role="tabpanel"></div></div></div>
<script>
const pages = """
        + json.dumps(WIKI_PAGES)
        + """;
const links = (titles) => '<ul>' + titles.map((t) => `<li><a href="#${t}">${t}</a></li>`)
  .join('') + '</ul>';
const panels = {
  contents: links(Object.keys(pages)),
  recent: '<p>Recently changed: nothing this week.</p>' + links(Object.keys(pages).slice(1)),
  tools: '<p>Tools: import, export and the control panel.</p>',
};
const panel = document.querySelector('[role=tabpanel]');
const show = (tab) => {
  panel.innerHTML = panels[tab];
  document.querySelectorAll('[role=tab]').forEach((b) =>
    b.setAttribute('aria-selected', String(b.dataset.tab === tab)));
};
show('contents');
document.addEventListener('click', (e) => {
  const tab = e.target.closest('[role=tab]');
  if (tab) return show(tab.dataset.tab);
  const a = e.target.closest('a[href^="#"]');
  if (!a) return;
  e.preventDefault();
  const title = decodeURIComponent(a.getAttribute('href').slice(1));
  document.querySelector('.story').insertAdjacentHTML('afterbegin',
    `<section><h2>${title}</h2><button aria-expanded="false" title="More actions">more</button>`
    + `<button aria-expanded="false">export page</button><p>${pages[title]}</p></section>`);
});
document.addEventListener('click', (e) => {
  const menu = e.target.closest('[aria-expanded]');
  if (menu) menu.insertAdjacentHTML('afterend', '<ul><li>Rename</li><li>Permalink</li></ul>');
});
</script></body></html>"""
    ).encode()
)


def test_a_tab_panel_s_links_to_views_by_name_are_each_followed(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    """TiddlyWiki: of sixteen pages listed in its sidebar's Contents tab, lore stored one. The
    links, inside the tab set's element, were taken for tabs; the sidebar's other tabs, clicked
    first, hid them; and a link to `#<title>` was the page itself, already seen. Now what is in
    a tab's panel is no tab, a panel's pages are followed before another tab replaces it, and a
    link to a name no element has is a view to open. The menus of commands on each page
    opened (TiddlyWiki's "more" and "export tiddler") took three of every four actions, and
    showed nothing of it: not opened. A page is opened once, whichever list names it."""
    site.pages["/wiki"] = WIKI
    client = make_client()
    job = capture(client, site.url("/wiki"), maxActions=12)
    assert job["status"] == "completed", job
    own = " ".join(c["text"] for c in resolve(client, site.url("/wiki"), "", k=50))
    for title, sentence in WIKI_PAGES.items():
        assert sentence in own, (title, own)
    assert "Recently changed" in own and "control panel" in own, own
    labels = [step["label"] for step in model(client, site)["steps"]]
    assert not {"more", "export page"} & set(labels), labels
    assert [labels.count(title) for title in WIKI_PAGES] == [1] * len(WIKI_PAGES), labels
