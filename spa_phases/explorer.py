"""The explorer: find the interactions that reveal a single-page app's hidden knowledge.

Each step scans the page's actionable elements (stable selectors, a pattern per element: tab,
details, expander, dropdown, list item, load more, pagination, cookie banner), lets a policy
choose one, acts, waits for the page to settle (network idle, DOM quiet, at least 0.5 s, at most
5 s), measures what changed on element signatures, and hands a changed DOM to the caller as a
`post_interaction` snapshot. Circuit breakers stop loops: an action repeated under new selectors,
a page that keeps returning to the same state (its own controls stop; the pages its navigation
names are still visited), a streak of steps that changed nothing, scrolling that loads nothing;
a step budget and a time budget bound the rest. What was learned (page type,
key elements, behaviours seen and confirmed) comes back as a `PageUnderstanding`."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urldefrag, urlsplit

from crawl import canonicalize
from crawl.browser import SERIALIZE
from spa_phases.page_scripts import (
    CHANGED_BESIDE,
    CHANGED_REGION,
    DOCUMENT_STATUS,
    MARK_HIDDEN,
    NOT_FOUND_VIEW,
    QUIET_FOR_MS,
    RESET_CHANGES,
    SCAN,
    SHUT_AGAIN,
    SIGNATURES,
    UNMARK_HIDDEN,
    VISIBLE_LINKS,
)
from spa_phases.phases import Change
from spa_phases.scan import page_patterns

if TYPE_CHECKING:
    from playwright.async_api import Page, Request

log = logging.getLogger(__name__)

Effect = Literal[
    "revealed", "replaced", "opened_dialog", "routed", "navigated", "no_change", "failed"
]
# Deterministic priority: what most often hides knowledge first; plain buttons last. In-page
# anchors (`#install`) and links that leave the page are not clicked (the crawler follows
# links); links to client-side routes (`#/plugins`) and navigation links are, once each, and
# so are a landing page's links into its site (`entry`, see `_entries`).
PRIORITY = {
    "cookie_dismiss": 0,
    "option": 0,  # a choice in a listbox just opened: picked before anything closes it
    "tab": 1,
    "details": 2,
    "expander": 3,
    "dropdown": 4,
    "route": 5,
    "nav_link": 6,
    "entry": 6,
    "list_item": 7,
    "load_more": 8,
    "pagination": 9,
    "button": 10,
}
# What is clicked inside a route's view: what reveals more of it (the outer exploration visits
# routes, lists and pages; a view's buttons are mostly copy, share and try-it). What one of
# them shows is the page's, whatever the address says after it, while the page stays on
# screen (see `_act`).
IN_ROUTE = frozenset({"tab", "details", "expander", "dropdown", "option"})
# What in a navigation is a page of the app: a link to another page, or an item that swaps the
# main view in place (a link to a client-side route is one wherever it is).
NAV_PAGES = frozenset({"nav_link", "list_item"})
# Links to pages: what a route's own navigation is followed by (see `_page_in_route`).
PAGE_LINKS = frozenset({"route", "nav_link"})
# What in a tab panel is followed before another tab replaces the panel: its pages.
PANEL_PAGES = PAGE_LINKS | {"entry", "list_item"}
# A route's view is the page itself when it shows again this share of the page's texts and
# lost no more than KEPT_LOST of them (a highlight moved; a page whose short main content was
# replaced beside a long sidebar lost more).
KEPT = 0.9
KEPT_LOST = 3
# What opens a part of the view in place (supersession: see `_act`).
DISCLOSURES = frozenset({"details", "expander"})
# What hides, closes or copies shows nothing new: what it replaces stays true.
HIDING = re.compile(
    r"\b(collapse|hide|close|less|fewer|copy|copied|minimi[sz]e|fold|dismiss|clear)\b", re.I
)


@dataclass(frozen=True)
class Candidate:
    selector: str
    tag: str
    role: str
    label: str
    pattern: str
    visible: bool
    disabled: bool
    destructive: bool
    href: str = ""
    list: str = ""  # list_item: the list's selector
    item: str = ""  # list_item: the item's selector
    siblings: int = 0
    nav: bool = False  # inside navigation (a sidebar, a table of contents, a menu)
    chrome: bool = False  # hides or skips the page's own navigation or chrome
    variant: bool = False  # shows a code sample in another language or HTTP client
    container: str = ""  # the operation, card or section it belongs to
    url: str = ""  # a link's absolute target
    open: bool = False  # a summary whose details are open: a click only folds them
    selected: bool = False  # aria-selected: a tab whose panel is on screen already
    form: bool = False  # inside a form: it fills in a request (an API playground's sections)
    panel: str = ""  # the tab panel it sits in
    controls: str = ""  # tab: the panel it switches
    index: bool = False  # a link leading a row of an index of pages in the page's text
    title: str = ""  # its title, where its label is not (rustdoc's "Summary": "Collapse ...")

    @property
    def hint(self) -> str:
        """Its title where it says what the control does: not a link's, which names where it
        leads (rustdoc's "fn docs::copy")."""
        return "" if self.url else self.title

    @property
    def says(self) -> str:
        """What it says it does: its label and its `hint`."""
        return f"{self.label} {self.hint}".strip()

    @property
    def view_link(self) -> bool:
        """A navigation link to `#name` where no element has that id: not an in-page anchor
        (those are `anchor`) but a view the page's script draws (TiddlyWiki opens the page so
        named)."""
        return self.pattern == "nav_link" and len(self.href) > 1 and self.href.startswith("#")

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What makes two actions 'the same' even when the element was re-rendered: its kind
        and label within its container ("200" in one operation is not "200" in another)."""
        # A count that changes as the control re-renders ("Load 20 more") is the same action;
        # a tab's or an option's number is what it shows ("200" and "404" are two responses),
        # a navigation entry's its number ("Part 2" is not "Part 1", Fumadocs), and an index's
        # entry is where it leads (rustdoc's "part_3" is not "part_2").
        label = self.label.lower()
        if self.index:
            label = f"{label} {self.url}"
        elif self.pattern not in ("tab", "option") and not self.nav:
            label = re.sub(r"\d+", "#", label)
        return (self.tag, self.pattern, label, self.container)

    @property
    def action(self) -> str:
        return f"click({self.selector})"


# What of the scanner's answer a candidate keeps (the agent scan reads the rest).
_CANDIDATE_FIELDS = frozenset(f.name for f in fields(Candidate))


def _candidates(raw: dict[str, Any]) -> list[Candidate]:
    """The scan's controls as the explorer acts on them. A segmented control (a Model | Example
    toggle drawn as plain buttons) is a tab strip; a button styled as a select opens a dropdown;
    a choice in an open listbox or menu is an option, picked as a tab is. The agent scan keeps
    calling them buttons and list items."""
    return [
        Candidate(
            **{k: v for k, v in c.items() if k in _CANDIDATE_FIELDS}
            | ({"pattern": "tab"} if c.get("segment") else {})
            | ({"pattern": "dropdown"} if c.get("picker") else {})
            | ({"pattern": "option"} if c.get("option") else {})
        )
        for c in raw["candidates"]
    ]


def _entries(candidates: list[Candidate], start: str) -> list[Candidate]:
    """A landing page's links into its site (Docus' home: a README and "Get started", no
    sidebar, no menu) as `entry` controls: those in its text to another page under its own
    folder. Clicked once each; the view one routes to is stored as a route's (its sidebar then
    visited), a document one loads is not (the crawler follows links)."""
    here = _route(start)

    def entry(c: Candidate) -> bool:
        return (
            c.pattern == "link" and not c.nav and _in_folder(c.url, start) and _route(c.url) != here
        )

    return [replace(c, pattern="entry") if entry(c) else c for c in candidates]


def _indexes(candidates: list[Candidate], start: str) -> list[Candidate]:
    """The links of an index of pages in the page's text (rustdoc lists a module's pages in a
    table of its items, and its sidebar only the module's siblings) as navigation links:
    those under the page's own folder, the pages below it. A page each, visited and stored
    as the sidebar's are."""

    def below(c: Candidate) -> bool:
        return c.index and c.pattern == "link" and _in_folder(c.url, start)

    return [replace(c, pattern="nav_link") if below(c) else c for c in candidates]


def _in_folder(url: str, start: str) -> bool:
    """Whether `url` is of `start`'s origin, in the folder of `start`'s page or below it."""
    to, at = urlsplit(url), urlsplit(start)
    return to[:2] == at[:2] and to.path.startswith(at.path.rsplit("/", 1)[0] + "/")


def _own_in_route(c: Candidate, shared: set[tuple[str, str]]) -> bool:
    """Whether a control in a route's view is acted on there: its own tabs and disclosures,
    not the navigation or chrome it shares with the page it was reached from (`shared`)."""
    return not c.nav and c.pattern in IN_ROUTE and (c.selector, c.label) not in shared


def _page_in_route(c: Candidate, shared: set[tuple[str, str]], document: bool = False) -> bool:
    """Whether a control in a route's view is a page its own navigation names: a link the
    page it was reached from did not draw (dumi lists a part's pages only in the part's
    sidebar, drawn on the part's pages). In a `document` of a multi-page site, the index of
    pages in its text only (see `_indexes`): its navigation is the site's, the start page's
    (followed from each page, Sphinx's breadcrumbs stored the home page again as
    `index.html`)."""
    if document:
        return c.index and c.pattern == "nav_link"
    return c.nav and c.pattern in PAGE_LINKS and (c.selector, c.label) not in shared


@dataclass(frozen=True)
class ScanSummary:
    total: int  # actionable elements in the DOM
    shown: int  # of them visible
    by_type: dict[str, int]


@dataclass(frozen=True)
class Scan:
    summary: ScanSummary
    candidates: list[Candidate]
    search_inputs: list[str]


@dataclass
class Step:
    n: int
    action: str
    label: str
    pattern: str
    effect: Effect
    similarity: float  # of the visible element signatures before and after
    region: str | None  # where the content changed
    stored: int = 0  # chunks the snapshot added
    superseded: int = 0
    seconds: float = 0.0
    settled: bool = True  # False: the page was still busy after the longest wait
    title: str = ""  # the control's title, where its label is not (not a link's)


@dataclass(frozen=True)
class RouteView:
    """A route's view stored, to act inside later (see `Explorer._explore_route`)."""

    url: str
    kept: bool  # the view is the page it was reached from, scrolled (see `_keeps`)
    own: bool  # it has tabs or disclosures of its own
    links: frozenset[str]  # routes its own navigation names, not seen when it was stored
    document: bool = False  # a page of a multi-page site its navigation loaded


@dataclass
class Behaviour:
    pattern: str
    effect: str
    region: str | None
    example: str  # one action that did it, e.g. click(#tab-2) (Settings)
    seen: int = 1

    @property
    def confirmed(self) -> bool:
        return self.seen >= 2


@dataclass
class KeyElement:
    kind: str  # list_item, details_panel, pagination, search_input, filter_button, tab, ...
    selector: str
    label: str = ""


@dataclass
class PageUnderstanding:
    url: str
    page_type: str
    summary: ScanSummary
    key_elements: list[KeyElement] = field(default_factory=list)
    behaviours: list[Behaviour] = field(default_factory=list)
    bindings: dict[str, str] = field(default_factory=dict)  # list-detail pages
    recipe: list[dict[str, Any]] = field(default_factory=list)
    # Pages reached by clicks and stored under their own URLs (client-side routes, a
    # multi-page site's pages its navigation loads).
    routes: list[str] = field(default_factory=list)
    # The page's patterns as `POST /agent/scan` reads them (the same scanner and rules).
    patterns: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for behaviour, raw in zip(self.behaviours, data["behaviours"], strict=True):
            raw["confirmed"] = behaviour.confirmed
        return data


@dataclass(frozen=True)
class ExploreOptions:
    max_actions: int = 20
    max_seconds: float = 120.0
    min_wait_ms: int = 500
    max_wait_ms: int = 5000
    quiet_ms: int = 300  # DOM without mutations this long
    idle_ms: int = 500  # no request in flight this long
    max_repeats: int = 2  # the same action (label, kind) at most this often
    no_change_limit: int = 5  # steps in a row that changed nothing
    state_repeats: int = 3  # the same visible state seen this often
    items_per_list: int = 2  # list items opened while exploring (the recipe does the rest)
    max_scrolls: int = 3
    # Actions inside a client-side route's view once it is stored (its tabs, expanders: an
    # operation's other response codes), within the whole budget; 0 stores the view only.
    actions_per_route: int = 4


class Policy(Protocol):
    async def choose(self, candidates: list[Candidate], steps: list[Step]) -> Candidate | None:
        """The next element to act on, from eligible candidates only; None to stop."""


class DeterministicPolicy:
    """Pattern priority, then document order; each element once. What is inside a form comes
    after everything outside one (but a choice in a listbox just opened and a cookie banner's
    button, first wherever they are): its disclosures show the fields of a request to send (an
    API playground's server picker and parameter sections), and in a route's view of four
    actions they took the places of the operation's responses (Fumadocs' OpenAPI pages)."""

    async def choose(self, candidates: list[Candidate], steps: list[Step]) -> Candidate | None:
        # A tab panel's links to pages are followed before another tab hides them (TiddlyWiki's
        # sidebar tabs: Contents, Open, Recent, ...).
        busy = {c.panel for c in candidates if c.panel and c.pattern in PANEL_PAGES}

        def rank(pair: tuple[int, Candidate]) -> tuple[bool, int, int]:
            n, c = pair
            priority = PRIORITY.get(c.pattern, 9)
            if c.pattern == "tab" and c.controls in busy:
                priority = PRIORITY["list_item"] + 1  # after the panel's pages, whatever kind
            return (priority > 0 and c.form, priority, n)

        ranked = sorted(enumerate(candidates), key=rank)
        return ranked[0][1] if ranked else None


# Actions that switch the view in place: what they hide is still true, so nothing they replace
# is superseded (a Refresh or Approve button's change is), nor by any control in a navigation.
# A disclosure opens a panel further: it supersedes only the panel's earlier states that it
# says again (`Change`).
VIEW_SWITCHES = frozenset({"tab", "list_item", "pagination", "dropdown", "option", "load_more"})

SnapshotSink = Callable[
    [str, str | None, Change, str | None, str | None], Awaitable[tuple[int, int]]
]
"""(dom, trigger action or None for the initial phase, what the action did, the client-side
route's URL or None for the page's own, the DOM just before the action or None) -> (chunks
stored, superseded)."""


class _Network:
    """Requests in flight, and since when the page has had none."""

    def __init__(self, page: Page) -> None:
        self.inflight = 0
        self.changed = time.monotonic()
        page.on("request", self._start)
        page.on("requestfinished", self._end)
        page.on("requestfailed", self._end)

    def _start(self, _: Request) -> None:
        self.inflight += 1
        self.changed = time.monotonic()

    def _end(self, _: Request) -> None:
        self.inflight = max(0, self.inflight - 1)
        self.changed = time.monotonic()

    def idle_ms(self) -> float:
        return 0.0 if self.inflight else (time.monotonic() - self.changed) * 1000


class Explorer:
    def __init__(
        self,
        page: Page,
        sink: SnapshotSink,
        options: ExploreOptions = ExploreOptions(),
        policy: Policy | None = None,
        network: _Network | None = None,
    ) -> None:
        self.page = page
        self.sink = sink
        self.options = options
        self.policy = policy or DeterministicPolicy()
        self.network = network or _Network(page)
        self.steps: list[Step] = []
        self.breakers: list[str] = []
        self.stopped_by = ""
        # What was clicked, by selector and label: a positional selector names another element
        # once the page shifts (a sidebar group that opened above it).
        self._tried: set[tuple[str, str]] = set()
        self._keys: Counter[tuple[str, str, str, str]] = Counter()
        self._blocked: set[tuple[str, str, str, str]] = set()
        # Pages reached and stored under their own URLs: client-side routes, and the documents
        # a multi-page site's navigation links load (`_loaded`, shared with inner explorers).
        self.routes: list[str] = []
        self._routes_seen: set[str] = set()
        self._stored: set[str] = set()  # of them, those stored (the page's own address too)
        self._loaded: set[str] = set()
        self._states: Counter[str] = Counter()
        self._opened: Counter[str] = Counter()  # list items opened per list
        # Navigation groups a click opened: the selector each was opened under, by key. Opened
        # again there on coming back to the page should it draw them shut (Material for MkDocs:
        # each page a document of its own); not clicked while open, whatever selector the
        # label comes back under once its links are drawn beside it (Vocs): that only folds it.
        self._unfolded: dict[tuple[str, str, str, str], str] = {}
        # The links each opened (by selector): a group whose rows are drawn only when it opens
        # (Doxygen's tree) shows no links to tell it is shut by, after coming back.
        self._revealed: dict[str, list[str]] = {}
        # The dropdown just opened, and the choices each dropdown has shown (its label when
        # opened, the options picked): opened again, it offers only the others.
        self._picker: Candidate | None = None
        self._choices: dict[str, set[str]] = {}
        self._first_scan: Scan | None = None
        # The page explored (`run`), and whether it is a landing page: no navigation, its way
        # into the site the links in its text (see `_entries`).
        self._start = ""
        self._landing: bool | None = None
        self._last_scan: Scan | None = None
        self._raw: dict[str, Any] | None = None  # the first scan as the scanner returned it
        self._deadline = 0.0
        # Inside a route's view (see `_explore_route`): the controls of the page it was reached
        # from (the navigation and chrome they share), which are not clicked again there.
        self._shared: set[tuple[str, str]] | None = None
        # Routes stored, to act inside once the page has nothing left (see `_explore_route`)
        self._route_views: list[RouteView] = []
        self._document = False  # inside a document of a multi-page site (see `_page_in_route`)
        # The state-loop breaker tripped: the page's own controls keep bringing it back to
        # where it was, and only the pages its navigation names are visited from then on.
        self._looping = False

    # observing ---------------------------------------------------------------------------------

    async def settle(self) -> bool:
        """Wait until the network is idle and the DOM quiet (within the bounds); True if it
        settled, False if it was still busy at the longest wait."""
        o = self.options
        start = time.monotonic()
        while True:
            await asyncio.sleep(0.1)
            elapsed = (time.monotonic() - start) * 1000
            if elapsed < o.min_wait_ms:
                continue
            try:
                quiet = float(await self.page.evaluate(QUIET_FOR_MS))
            except Exception:  # navigating: the old document is gone
                quiet = 0.0
            if quiet >= o.quiet_ms and self.network.idle_ms() >= o.idle_ms:
                return True
            if elapsed >= o.max_wait_ms:
                return False

    async def scan(self) -> Scan:
        raw = await self.page.evaluate(SCAN)
        self._raw = self._raw or raw  # the page as loaded: its patterns
        candidates = _candidates(raw)
        if self._start and self._shared is None:
            if self._landing is None:  # the page as loaded names no page of the site
                self._landing = not any(
                    c.pattern in PAGE_LINKS or (c.nav and c.pattern in NAV_PAGES)
                    for c in candidates
                )
            if self._landing:
                candidates = _entries(candidates, self._start)
        if self._start:
            candidates = _indexes(candidates, self._start)
        scan = Scan(
            ScanSummary(raw["total"], raw["shown"], dict(raw["byType"])),
            candidates,
            list(raw["searchInputs"]),
        )
        self._first_scan = self._first_scan or scan
        self._last_scan = scan
        return scan

    async def _state(self) -> dict[str, Any]:
        state: dict[str, Any] = await self.page.evaluate(SIGNATURES)
        return state

    async def snapshot(
        self,
        trigger: str | None,
        change: Change = "replaced",
        route: str | None = None,
        before: str | None = None,
    ) -> tuple[int, int]:
        return await self.sink(await self._dom(), trigger, change, route, before)

    async def _dom(self) -> str:
        try:
            await self.page.evaluate(MARK_HIDDEN)
            dom = await self.page.evaluate(SERIALIZE) or await self.page.content()
        finally:
            # Left on, the marks would read as hidden to the next scan.
            with contextlib.suppress(Exception):  # a page that navigated has none
                await self.page.evaluate(UNMARK_HIDDEN)
        return str(dom)

    # acting --------------------------------------------------------------------------------------

    def _eligible(self, scan: Scan) -> list[Candidate]:
        out = []
        # in a route's view: its own tabs and disclosures, `actions_per_route` of them
        own_left = sum(s.pattern in IN_ROUTE for s in self.steps) < self.options.actions_per_route
        for c in scan.candidates:
            # A code sample in one language more says nothing new and, stored once per
            # language and operation, crowds the descriptions out of the answers.
            if not c.visible or c.disabled or c.destructive or c.chrome or c.variant or c.open:
                continue
            if c.pattern == "tab" and c.selected:
                # Its panel is on screen, stored with the view: a click shows nothing new (and
                # a route's view has four actions). Done, also once another tab is picked.
                self._tried.add((c.selector, c.label))
                continue
            if (
                c.pattern not in PRIORITY
                or (c.selector, c.label) in self._tried
                or c.key in self._blocked
            ):
                continue
            if c.pattern in ("route", "nav_link", "entry") and _seen_as(c) in self._routes_seen:
                continue
            if c.pattern == "option" and self._picker and c.label in self._shown(self._picker):
                continue
            if self._shared is not None and not (
                (own_left and _own_in_route(c, self._shared))
                or _page_in_route(c, self._shared, self._document)
            ):
                continue
            if self._looping and not (c.pattern == "route" or (c.nav and c.pattern in NAV_PAGES)):
                continue
            if c.nav and (
                c.key in self._unfolded
                # its arrow flipped ("▼", Doxygen's): open, and a click only folds it
                or (c.selector in self._revealed and not re.search(r"\w", c.label))
            ):
                continue
            # A navigation list swaps the main view: every item is a view of its own.
            many = self.options.items_per_list
            if c.pattern == "list_item" and not c.nav and self._opened[c.list] >= many:
                continue
            out.append(c)
        return out

    async def run(self, url: str) -> PageUnderstanding:
        """Explore the page already loaded at `url` (its initial snapshot taken by the caller)."""
        o = self.options
        deadline = self._deadline = time.monotonic() + o.max_seconds
        self._start = url
        no_change = 0
        scrolls = 0
        scrolled_up = False
        self._routes_seen.add(_route(url))
        self._stored.add(_route(url))
        state = await self._state()
        self._states[_state_hash(state)] += 1
        while True:
            if len(self.steps) >= o.max_actions:
                self.stopped_by = "budget"
                break
            if time.monotonic() > deadline:
                self.stopped_by = "time"
                break
            scan = await self.scan()
            choice = await self.policy.choose(self._eligible(scan), self.steps)
            if choice is None:
                if scrolls < o.max_scrolls and await self._scroll(state):
                    scrolls += 1
                    # what it loaded (an infinite list's next items), stored as it may route away
                    await self.snapshot("scroll(end)", change="switched")
                    state = await self._state()
                    continue
                if not scrolled_up and await self._scroll_up():
                    scrolled_up = True  # what renders only near the top is scanned again
                    state = await self._state()
                    continue
                # Every route seen: now what is inside their views, those it has left only
                # (an inner explorer hands the views it stores to this one's queue: explored
                # in turn, not one inside another).
                if self._route_views and self._shared is None:
                    view = self._route_views.pop(0)
                    if view.own or view.links - self._routes_seen:
                        await self._explore_route(view, url)
                        state = await self._state()
                    continue
                if scrolls >= o.max_scrolls:
                    self.stopped_by = "breaker:scroll_loop"
                break
            step, state, back = await self._act(choice, state, url)
            self.steps.append(step)
            if step.effect in ("no_change", "failed"):
                no_change += 1
                if no_change >= o.no_change_limit:
                    self._trip("no_change_streak", f"{no_change} steps changed nothing")
                    break
                continue
            no_change = 0
            if step.effect == "routed" or step.pattern == "option" or back:
                # Another page was stored (or loaded) and the explorer went back, or it went
                # back to the page's address after a click the address followed, or a dropdown
                # closed on the choice picked in it: not a cycle.
                continue
            # Back in a state the page was in before, after changing: a cycle.
            seen = self._states[_state_hash(state)] = self._states[_state_hash(state)] + 1
            if seen >= o.state_repeats:
                self._trip("state_loop", f"the page returned to the same state {seen} times")
                if self._looping:
                    break
                self._looping = True
        self.stopped_by = self.stopped_by or "exhausted"
        return self.understanding(url)

    def _trip(self, name: str, why: str) -> None:
        self.breakers.append(f"{name}: {why}")
        self.stopped_by = f"breaker:{name}"
        log.info("explorer: breaker %s: %s", name, why)

    async def _scroll(self, before: dict[str, Any]) -> bool:
        """Scroll to the bottom; True when that loaded something (infinite lists)."""
        if before["height"] <= 950:
            return False
        await self.page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        await self.settle()
        after = await self._state()
        return bool(after["height"] > before["height"])

    async def _scroll_up(self) -> bool:
        """Scroll back to the top (a click may have scrolled the page to its end); True when the
        page was not there."""
        if not await self.page.evaluate("() => window.scrollY > 0"):
            return False
        await self.page.evaluate("() => window.scrollTo(0, 0)")
        await self.settle()
        return True

    async def _act(
        self, choice: Candidate, before: dict[str, Any], url: str
    ) -> tuple[Step, dict[str, Any], bool]:
        """Do `choice`: its step, the state after it, and whether the explorer went back to
        the page's address after a click the address followed or a link loaded another document
        (the state it returned to is no cycle)."""
        self._tried.add((choice.selector, choice.label))
        if choice.view_link:  # opened once, from whichever list names it
            self._routes_seen.add(_seen_as(choice))
        self._keys[choice.key] += 1
        if self._keys[choice.key] >= self.options.max_repeats:
            # The same action under new selectors (a control that re-renders itself): once
            # more now, then never again; exploring goes on with the others.
            self._blocked.add(choice.key)
            self.breakers.append(
                f"repeated_action: {choice.label or choice.selector!r} done "
                f"{self._keys[choice.key]} times; blocked"
            )
        if choice.pattern == "list_item":
            self._opened[choice.list] += 1
        if choice.pattern == "option" and self._picker:
            self._shown(self._picker).add(choice.label)
        self._picker = choice if choice.pattern == "dropdown" else None
        if self._picker:
            self._shown(self._picker).add(choice.label)
        started = time.monotonic()
        # A control in a navigation (a sidebar entry that shows an operation in place) switches
        # the view too.
        change: Change = (
            "hid"
            if HIDING.search(choice.says)
            else "switched"
            if choice.nav or choice.pattern in VIEW_SWITCHES
            else "opened"
            if choice.pattern in DISCLOSURES
            else "replaced"
        )
        # What may be superseded is what the action replaced: what was on screen before it,
        # not the other views stored earlier under the same region; and what a route's view
        # showed before the click is not the route's own.
        shown = await self._dom()
        await self.page.evaluate(RESET_CHANGES)
        try:
            await self._click(choice.selector)
        except Exception as exc:
            log.info("explorer: %s failed: %s", choice.action, str(exc).splitlines()[0])
            step = Step(
                len(self.steps) + 1,
                choice.action,
                choice.label,
                choice.pattern,
                "failed",
                1.0,
                None,
                seconds=time.monotonic() - started,
            )
            return step, before, False
        settled = await self.settle()
        after = await self._state()
        similarity = _similarity(before["signatures"], after["signatures"])
        effect = _effect(before, after)
        spied = (
            effect == "routed"
            and choice.pattern in IN_ROUTE
            and not choice.nav
            and (
                await self._changed_beside(choice)
                if choice.pattern in DISCLOSURES
                else not choice.url and _keeps(before, after, most_lost=None)
            )
        )
        if spied:
            # A disclosure that changed more than its own operation, or a tab or picker that
            # is no link and left the page on screen, changed the address: the app wrote the
            # section scrolled to into it (Kong's renderer, which renders the next operation
            # as the page scrolls, and scrolls to an operation whose response code is
            # picked). What it showed is this page's, not a route's (a Swagger UI operation's
            # deep link shows that operation alone; a tab that routes to a view of its own
            # replaces the page's).
            effect = _effect(before, after | {"url": before["url"]})
        region: str | None = None
        stored = superseded = 0
        if effect == "navigated":
            if choice.pattern == "nav_link" and await self._page_of_site(url):
                # A multi-page site: the page its navigation loaded is a page of its own,
                # stored under its URL as a client-side route's view is, with only what it
                # adds to the page it was reached from (not the navigation they share).
                self._loaded.add(_route(after["url"]))
                stored, superseded = await self._store_route(before, after, shown)
            if choice.pattern in ("nav_link", "entry") and choice.url:
                # Not visited again, whatever selector it comes back under: nor when it was
                # answered with an error, or redirected (`/guide` to `/guide/`).
                self._routes_seen.add(_route(choice.url))
            await self._back(url)
            after = await self._state()
        elif effect == "routed":
            opened = choice.action if choice.pattern in DISCLOSURES and not choice.url else None
            stored, superseded = await self._store_route(before, after, shown, opened)
            await self._back(url)
            after = await self._state()
        elif effect != "no_change":
            if choice.nav and effect in ("revealed", "replaced"):
                # A navigation group opened (its arrow's class flipped, VuePress: "replaced").
                self._unfolded.setdefault(choice.key, choice.selector)
                scan = self._last_scan  # the one it was chosen from
                seen = {c.url for c in scan.candidates if c.visible and c.nav} if scan else set()
                with contextlib.suppress(Exception):
                    shown = await self.page.evaluate(VISIBLE_LINKS, choice.selector)
                    self._revealed[choice.selector] = sorted(set(shown) - seen)
            try:
                region = await self.page.evaluate(CHANGED_REGION)
            except Exception:
                region = None
            stored, superseded = await self.snapshot(
                choice.action,
                change=change,
                before=shown if change in ("replaced", "opened") else None,
            )
            if effect == "opened_dialog":  # its content is stored; close it to go on
                await self._close_dialog()
                after = await self._state()
            elif spied:  # back at the page's address, as after a route (the app's router too)
                await self._back(url)
                after = await self._state()
        step = Step(
            len(self.steps) + 1,
            choice.action,
            choice.label,
            choice.pattern,
            effect,
            round(similarity, 4),
            region,
            stored,
            superseded,
            round(time.monotonic() - started, 2),
            settled,
            choice.hint,
        )
        log.info(
            "explorer: %s (%s) -> %s, %d new chunks", choice.action, choice.label, effect, stored
        )
        return step, after, spied or effect == "navigated"

    async def _store_route(
        self, before: dict[str, Any], after: dict[str, Any], shown: str, opened: str | None = None
    ) -> tuple[int, int]:
        """Store the view on screen, reached from `before` (whose DOM was `shown`), under its
        own URL, once; and what a disclosure `opened` (its action) adds to it, where it opened
        in place and the address followed (Kong's renderer writes the operation whose panel
        opens into the address, a route reached before): (chunks stored, superseded)."""
        route = _route(after["url"])
        if not _new_text(before["signatures"], after["signatures"]):
            # The address changed and the view shows nothing new: a link to a heading
            # written as a route (docsify's `#/?id=usage`), not a page of its own.
            self._routes_seen.add(route)
            return 0, 0
        first = route not in self._routes_seen
        if not first and not (opened and route in self._stored):
            return 0, 0
        self._routes_seen.add(route)
        if first and await self.page.evaluate(NOT_FOUND_VIEW):
            # The app's "page not found" view (a README's link to a file no page is made
            # of): nothing of the site, not a page of it.
            log.info("explorer: %s is the app's page-not-found view: not stored", route)
            return 0, 0
        stored, superseded = await self.snapshot(
            None if first else opened,  # the route's own view, or what opened in it
            change="replaced" if first else "opened",
            route=route,
            before=shown,
        )
        if stored and first:
            self.routes.append(route)
            self._stored.add(route)
            # A document of a multi-page site: its pages are the start page's navigation's,
            # and those the index in its text lists below it (see `_page_in_route`).
            document = route in self._loaded
            own, links = await self._inside_view(after["url"] if document else None)
            if own or links:
                self._route_views.append(
                    RouteView(after["url"], _keeps(before, after), own, links, document)
                )
        return stored, superseded

    async def _page_of_site(self, url: str) -> bool:
        """Whether the document on screen is a page of `url`'s site: the same origin, and
        answered with success (not an error page, nor the browser's own when it failed)."""
        if urlsplit(self.page.url)[:2] != urlsplit(url)[:2]:
            return False
        try:
            status = int(await self.page.evaluate(DOCUMENT_STATUS))
        except Exception:  # the document went away again
            return False
        return status == 0 or 200 <= status < 400  # 0: the browser does not say

    def _shown(self, picker: Candidate) -> set[str]:
        # By its container: its own selector is positional and shifts as its listbox comes
        # and goes beside it.
        return self._choices.setdefault(picker.container or picker.selector, set())

    async def _click(self, selector: str) -> None:
        """Click as a person would. When another element takes the click (a sticky section
        header over a collapsed list, a transparent overlay), the element's own `click()`, as
        its page's scripts would: its handler runs all the same."""
        try:
            await self.page.click(selector, timeout=3000)
        except Exception as exc:
            if "intercepts pointer events" not in str(exc):
                raise
            log.info("explorer: %s is covered: clicked by script", selector)
            await self.page.locator(selector).first.evaluate("el => el.click()", timeout=1000)

    async def _changed_beside(self, choice: Candidate) -> bool:
        try:
            return bool(await self.page.evaluate(CHANGED_BESIDE, choice.selector))
        except Exception:  # the page went away: as if not
            return False

    async def _inside_view(self, document: str | None) -> tuple[bool, frozenset[str]]:
        """What the view on screen has to act on later that the page it was reached from has
        not: whether tabs or disclosures of its own, and the routes its own navigation names
        that were not seen yet (in a `document` of a multi-page site, at that URL, the pages
        the index in its text lists)."""
        if self._last_scan is None:
            return False, frozenset()
        shared = _controls(self._last_scan)
        here = [c for c in _candidates(await self.page.evaluate(SCAN)) if c.visible]
        if document:
            here = _indexes(here, document)
        own = bool(self.options.actions_per_route) and any(_own_in_route(c, shared) for c in here)
        links = {_route(c.url) for c in here if c.url and _page_in_route(c, shared, bool(document))}
        return own, frozenset(links - self._routes_seen)

    async def _explore_route(self, view: RouteView, back_to: str) -> None:
        """Act inside a route's view, stored earlier, as on the page it is: its tabs and
        disclosures (an operation's other response codes) are stored under the route's URL,
        `actions_per_route` of them at most; the pages its own navigation names and no route
        seen yet (a part's sidebar) are visited, each stored under its own. Not the
        navigation or chrome it shares with the page it came from; in a view that keeps the
        page (`kept`: the page scrolled, its address naming the part in view), not what was
        done on the page or in another such view. Done once the outer exploration has nothing
        left, so that it never costs a route its visit; within the budget."""
        o = self.options
        left = o.max_actions - len(self.steps)
        seconds = self._deadline - time.monotonic()
        if left <= 0 or seconds <= 1 or self._last_scan is None:
            return
        url = view.url
        route = _route(url)
        shared = _controls(self._last_scan)
        try:
            await self.page.goto(url, wait_until="load", timeout=20_000)
        except Exception as exc:
            log.info("explorer: cannot open %s again: %s", url, str(exc).splitlines()[0])
            return
        await self.settle()

        async def sink(
            dom: str, trigger: str | None, change: Change, to: str | None, before: str | None
        ) -> tuple[int, int]:
            # under this route, or the route a click inside it reached
            return await self.sink(dom, trigger, change, to or route, before)

        inner = Explorer(
            self.page,
            sink,
            replace(o, max_actions=left, max_seconds=seconds, max_scrolls=1),
            self.policy,
            self.network,
        )
        inner._shared = shared
        inner._document = view.document
        if view.kept:  # the same controls of the same document: done once in all
            inner._tried = self._tried
        inner._routes_seen = self._routes_seen  # one set: a route stored once in all
        inner._stored = self._stored
        inner._loaded = self._loaded
        try:
            await inner.run(url)
        finally:
            for step in inner.steps:
                step.n = len(self.steps) + 1
                self.steps.append(step)
            self.routes += inner.routes
            self._route_views += inner._route_views
            self.breakers += [f"in {route}: {b}" for b in inner.breakers]
            await self._back(back_to)

    async def _close_dialog(self) -> None:
        await self.page.keyboard.press("Escape")
        await self.settle()
        if not (await self._state())["dialogs"]:
            return
        close = self.page.locator(
            "dialog[open] button, [role=dialog] button, [aria-modal=true] button"
        ).filter(has_text=re.compile(r"^\s*(close|cancel|dismiss|ok|×|x)\s*$", re.I))
        with contextlib.suppress(Exception):
            await close.first.click(timeout=2000)
            await self.settle()

    async def _back(self, url: str) -> None:
        with contextlib.suppress(Exception):  # no history: loaded again below
            await self.page.go_back(wait_until="load", timeout=10_000)
        if _route(self.page.url) != _route(url):
            await self.page.goto(url, wait_until="load", timeout=20_000)
        await self.settle()
        for selector in self._unfolded.values():
            with contextlib.suppress(Exception):  # gone from the page: nothing to open
                links = await self.page.evaluate(
                    SHUT_AGAIN, [selector, self._revealed.get(selector, [])]
                )
                if links is not None and (not links or self._pending(links, url)):
                    await self._click(selector)
                    await self.settle()

    def _pending(self, links: list[str], url: str) -> bool:
        """Whether a navigation group's links name a page of the site not visited yet. One
        whose pages were all visited stays shut: in a menu bar that opens one menu at a time
        (Bootstrap's drop-downs), opening it would close the menu whose pages are next."""
        origin = urlsplit(url)[:2]
        return any(
            urlsplit(link)[:2] == origin and _route(link) not in self._routes_seen for link in links
        )

    # what was learned ----------------------------------------------------------------------------

    def understanding(self, url: str) -> PageUnderstanding:
        scan = self._first_scan
        summary = scan.summary if scan else ScanSummary(0, 0, {})
        behaviours: dict[tuple[str, str, str | None], Behaviour] = {}
        for step in self.steps:
            if step.effect == "failed":
                continue
            key = (step.pattern, step.effect, step.region)
            if key in behaviours:
                behaviours[key].seen += 1
            else:
                example = f"{step.action} ({step.label})" if step.label else step.action
                behaviours[key] = Behaviour(step.pattern, step.effect, step.region, example)
        keys: list[KeyElement] = []
        latest = self._last_scan or scan
        candidates = latest.candidates if latest else []
        for kind in ("tab", "pagination", "load_more", "dropdown", "cookie_dismiss"):
            for c in candidates:
                if c.pattern == kind and c.visible:
                    keys.append(KeyElement(kind, c.selector, c.label))
                    break
        for c in candidates:
            if c.visible and re.search(r"\bfilter", c.label, re.I):
                keys.append(KeyElement("filter_button", c.selector, c.label))
                break
        for selector in (self._last_scan.search_inputs if self._last_scan else [])[:1]:
            keys.append(KeyElement("search_input", selector))
        bindings = self._bindings(candidates)
        if bindings:
            keys.insert(0, KeyElement("list_item", bindings["LIST_ITEM"]))
            keys.insert(1, KeyElement("details_panel", bindings["DETAILS_PANEL"]))
        return PageUnderstanding(
            url=url,
            # Pages its navigation loads make no routed app: each is a document of its own.
            page_type="routed_app"
            if set(self.routes) - self._loaded
            else _page_type(summary, bindings),
            summary=summary,
            key_elements=keys,
            behaviours=list(behaviours.values()),
            bindings=bindings,
            recipe=recipe(bindings) if bindings else [],
            routes=list(self.routes),
            patterns=[
                {"type": p.type, "count": p.count, "selector": p.selector, "evidence": p.evidence}
                for p in page_patterns(self._raw)
            ]
            if self._raw
            else [],
        )

    def _bindings(self, candidates: list[Candidate]) -> dict[str, str]:
        """LIST_ITEM, DETAILS_PANEL, CLICK_BEHAVIOR (and NEXT_PAGE_BUTTON) when opening list
        items changed one region in place."""
        by_action = {c.action: c for c in (self._first_scan.candidates if self._first_scan else [])}
        for step in self.steps:
            if step.pattern != "list_item" or step.effect in ("failed", "no_change"):
                continue
            item = by_action.get(step.action)
            if item is None or not item.list:
                continue
            tag = item.item.rsplit(" > ", 1)[-1].split(":", 1)[0]
            target = ""
            if item.selector != item.item and item.selector.startswith(item.item + " > "):
                target = item.selector[len(item.item) + 3 :]
            if step.effect == "navigated":
                binding = {"CLICK_BEHAVIOR": "navigates"}
            elif step.region and not step.region.startswith(item.list):
                binding = {"CLICK_BEHAVIOR": "in_place", "DETAILS_PANEL": step.region}
            else:
                continue
            binding["LIST_ITEM"] = f"{item.list} > {tag}"
            binding["ITEM_TARGET"] = target
            first = self._first_scan.candidates if self._first_scan else candidates
            nxt = next((c for c in first if c.pattern == "pagination" and c.visible), None)
            if nxt is not None:
                binding["NEXT_PAGE_BUTTON"] = nxt.selector
            if "DETAILS_PANEL" in binding:
                return binding
        return {}


def recipe(bindings: dict[str, str]) -> list[dict[str, Any]]:
    """Commands that ingest every list item's details (run by `spa_phases.recipes.run_recipe`)."""
    steps: list[dict[str, Any]] = [
        {"op": "WAIT_FOR", "selector": bindings["LIST_ITEM"]},
        {
            "op": "FOR_EACH_ITEM_IN_LIST",
            "selector": bindings["LIST_ITEM"],
            "do": [
                {"op": "SCROLL", "target": "item"},
                {"op": "CLICK", "target": bindings.get("ITEM_TARGET") or "item"},
                {"op": "WAIT_FOR", "selector": bindings["DETAILS_PANEL"]},
                {"op": "EXTRACT_DETAILS", "selector": bindings["DETAILS_PANEL"]},
                {"op": "SAVE"},
                {"op": "MARK_DONE"},
            ],
        },
    ]
    if "NEXT_PAGE_BUTTON" in bindings:
        steps.append(
            {"op": "CLICK_IF_EXISTS", "selector": bindings["NEXT_PAGE_BUTTON"], "then": "REPEAT"}
        )
    steps.append({"op": "END"})
    return steps


def _page_type(summary: ScanSummary, bindings: dict[str, str]) -> str:
    kinds = summary.by_type
    if bindings:
        return "list_detail"
    if kinds.get("tab", 0) >= 2:
        return "tabbed"
    if kinds.get("details", 0) + kinds.get("expander", 0) >= 3:
        return "accordion"
    if kinds.get("link", 0) > 3 * max(1, summary.total - kinds.get("link", 0)):
        return "article"
    return "app"


def _controls(scan: Scan) -> set[tuple[str, str]]:
    """A scan's controls by selector and label (how the explorer tells them apart)."""
    return {(c.selector, c.label) for c in scan.candidates}


def _keeps(
    before: dict[str, Any], after: dict[str, Any], most_lost: int | None = KEPT_LOST
) -> bool:
    """Whether the view `after` still shows what `before` did, text for text (`KEPT`, and
    `most_lost` lost at most): the page itself, scrolled, more of it drawn (Kong's renderer
    writes the operation in view into the address), not a view that replaced the page's.
    `most_lost` None for a tab or a picker, which replaces its own panel's texts."""
    texts = [sig for sig in before["signatures"] if sig.split("|", 1)[-1]]
    kept = sum((Counter(texts) & Counter(after["signatures"])).values())
    lost = len(texts) - kept
    return bool(texts) and kept >= KEPT * len(texts) and (most_lost is None or lost <= most_lost)


def _new_text(before: list[str], after: list[str]) -> bool:
    """Whether the view `after` shows text that `before` did not (a sidebar entry's highlight
    or the scroll position are no new text)."""
    shown = {sig.split("|", 1)[-1] for sig in before}
    return any(text not in shown for text in (sig.split("|", 1)[-1] for sig in after) if text)


def _similarity(before: list[str], after: list[str]) -> float:
    a, b = Counter(before), Counter(after)
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 1.0


def _seen_as(c: Candidate) -> str:
    """What a link leads to: its page (the page itself for an in-page anchor); for a link to a
    view by name, its address with the name (the page's canonical URL drops it)."""
    return c.url if c.view_link else _route(c.url)


def _route(url: str) -> str:
    """The page a URL stands for: canonical, with a client-side route's fragment kept."""
    try:
        return canonicalize(url)
    except ValueError:
        return urldefrag(url)[0]


def _effect(before: dict[str, Any], after: dict[str, Any]) -> Effect:
    if _route(after["url"]) != _route(before["url"]):
        # The same document at another address: the app routed on the client side.
        same = bool(before.get("doc")) and after.get("doc") == before.get("doc")
        return "routed" if same else "navigated"
    if after["dialogs"] > before["dialogs"]:
        return "opened_dialog"
    a, b = Counter(before["signatures"]), Counter(after["signatures"])
    added, removed = b - a, a - b
    if not added and not removed:
        return "no_change"
    return "revealed" if not removed else "replaced"


def _state_hash(state: dict[str, Any]) -> str:
    text = "\n".join(sorted(state["signatures"]))
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()
