"""The agent's view of its own page: the explorer's scanner run on a DOM the agent sends, read into
elements, page patterns (listings, search, pagination, filters, sort, login, cart, dialogs,
consent banners, tabs, accordions, list-detail, forms) and suggested next actions, and ranked
for the agent's goal.

The scan itself is `page_scripts.SCAN`, the explorer's own, run in headless Chromium with
scripts and network off; `page_patterns` is shared with the explorer's page understanding."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import re
import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from crawl import BrowserOptions, close_browser, launch_browser
from spa_phases.errors import SnapshotError, SpaError
from spa_phases.page_scripts import SCAN

Vector = Sequence[float]
FloatArray = npt.NDArray[np.float32]


class InvalidDomError(SnapshotError):
    """A DOM that is not HTML, or has no element an agent could act on."""


class ScanError(SpaError):
    """Chromium could not read a DOM (it timed out, or its page crashed)."""


# Not frozen (a frozen dataclass sets each field through object.__setattr__: the 2,204 of a
# 5,000-element listing took 9 ms to make, 2 ms now), but read-only all the same: the scans
# `read_scanned` keeps share them, and a changed copy is `_with`.
@dataclass(slots=True)
class Element:
    id: int  # position in document order: stable for one DOM, what the agent refers to
    type: str  # link, button, tab, text, search, password, checkbox, select, ...
    role: str  # what it does on this page: pagination, cookie_dismiss, list_item, field, ...
    label: str
    selector: str
    region: str  # the landmark or named section it sits in
    visible: bool
    disabled: bool = False
    top: int = 0  # its distance from the top of the document, in CSS pixels
    context: str = ""  # the repeated item around it (a product's name and price)
    href: str = ""
    options: tuple[str, ...] = ()  # a select's options
    score: float = 0.0
    dialog: bool = False  # inside a dialog


@dataclass(frozen=True)
class Pattern:
    type: str
    count: int  # items, fields or controls it covers
    selector: str  # where it is ('' when it spans the page)
    evidence: str  # why it was recognised, in words
    elements: tuple[int, ...] = ()  # its key elements, most useful first


@dataclass(frozen=True)
class Suggestion:
    name: str
    reason: str
    parameters: dict[str, Any] = field(default_factory=dict)
    elements: tuple[int, ...] = ()


@dataclass
class PageScan:
    url: str
    title: str
    elements: list[Element]
    patterns: list[Pattern]
    suggestions: list[Suggestion]


# The scanner's control patterns an agent reads as a role; the rest are plain links or buttons.
_PRICE = re.compile(r"[$€£¥₹]\s?\d|\d[\d.,]*\s?(€|EUR|USD|GBP)\b")
_CART = re.compile(
    r"\b(add to (cart|basket|bag)|(shopping )?(cart|basket|bag))\b"
    r"|^(proceed to |go to )?checkout\b",
    re.I,
)
_ADD = re.compile(r"\badd to (cart|basket|bag)\b", re.I)
_LOGIN = re.compile(r"^(log ?in|sign ?in|login|sign in to .{0,30}|my account|account)$", re.I)
_SORT_CONTROL = re.compile(r"^(sort|order)( by)?\b", re.I)
_SORT = re.compile(r"\bsort\b|\border by\b", re.I)
_SORT_OPTION = re.compile(
    r"\b(price|relevance|newest|rating|popular|best ?sell|a-z|low to high)\b", re.I
)
_FILTER = re.compile(r"\bfilters?\b|\brefine\b|\bfacets?\b", re.I)
_SUBMIT = re.compile(r"^(search|go|find|submit|log ?in|sign ?in|continue|next|send)\b", re.I)
_TEXT_FIELDS = {
    "text",
    "search",
    "email",
    "tel",
    "url",
    "number",
    "textbox",
    "searchbox",
    "combobox",
}
_PROSE = ("section", "p", "dl", "dd", "dt", "pre", "blockquote")  # text, not listed things


def elements_of(raw: dict[str, Any]) -> list[Element]:
    """The scan's controls and fields as one list in document order."""
    contexts: list[str] = raw.get("contexts", [])
    rows = [(c["order"], True, c) for c in raw["candidates"]]
    rows += [(f["order"], False, f) for f in raw["fields"]]
    rows.sort(key=lambda row: row[0])
    out: list[Element] = []
    for _, control, c in rows:
        if control and c["pattern"] == "anchor" and not c["visible"]:
            continue
        # Each element is made once, with its id (a frozen dataclass copied with a new id
        # cost a third of reading a long listing).
        element = _control(c, contexts, len(out)) if control else _field(c, contexts, len(out))
        out.append(element)
    return out


def _control(c: dict[str, Any], contexts: list[str], index: int) -> Element:
    context = contexts[c["context"]] if c.get("context", -1) >= 0 else ""
    if c["text"] and c["text"] != c["label"] and not context:
        context = c["text"]  # the text beside its aria-label: what the control says it does
    return Element(
        id=index,
        type=_control_type(c),
        role=c["pattern"],
        label=c["label"],
        selector=c["selector"],
        region=c["region"],
        visible=bool(c["visible"]),
        disabled=bool(c["disabled"]),
        dialog=bool(c["dialog"]),
        top=int(c["top"]),
        context=context if context != c["label"] else "",
        href=c.get("url") or c["href"],
    )


def _field(f: dict[str, Any], contexts: list[str], index: int) -> Element:
    context = contexts[f["context"]] if f.get("context", -1) >= 0 else ""
    kind = "search" if f["search"] and f["type"] in _TEXT_FIELDS else f["type"]
    role = (
        "search_box"
        if kind == "search"
        else "filter"
        if f["facet"]
        else "sort"
        if kind == "select" and (_SORT.search(f["label"] + " " + f["name"]))
        else "field"
    )
    return Element(
        id=index,
        type=kind,
        role=role,
        label=f["label"],
        selector=f["selector"],
        region=f["region"],
        visible=bool(f["visible"]),
        disabled=bool(f["disabled"]),
        dialog=bool(f["dialog"]),
        top=int(f["top"]),
        context=context,
        options=tuple(f.get("options", ())),
    )


def _control_type(c: dict[str, Any]) -> str:
    role = c["role"]
    if role in ("tab", "menuitem", "option", "link", "checkbox", "switch"):
        return str(role)
    if c["tag"] == "a":
        return "link"
    if c["tag"] == "summary":
        return "summary"
    return "button"


def _with(e: Element, **changes: Any) -> Element:
    return replace(e, **changes)


def page_patterns(raw: dict[str, Any], elements: list[Element] | None = None) -> list[Pattern]:
    """What kind of page this is, pattern by pattern, from one scan (the explorer's or an
    agent's): each with the elements that act on it."""
    els = elements if elements is not None else elements_of(raw)
    by_selector = {e.selector: e for e in els}
    shown = [e for e in els if e.visible and not e.disabled]
    out: list[Pattern] = []

    def ids(items: Sequence[Element], n: int = 10) -> tuple[int, ...]:
        return tuple(e.id for e in items[:n])

    # Blockers first: a consent banner or a dialog covers the page until it is answered.
    banners = raw.get("banners", [])
    cookie_dialogs = [d for d in raw.get("dialogs", []) if d["cookie"]]
    accept = [e for e in shown if e.role == "cookie_dismiss"]
    if banners or cookie_dialogs or accept:
        where = (banners or cookie_dialogs or [{"selector": ""}])[0]["selector"]
        out.append(Pattern("cookie_banner", 1, where, "a cookie consent banner", ids(accept)))
    for d in raw.get("dialogs", []):
        if d["cookie"]:
            continue
        inside = [e for e in shown if e.dialog]
        close = [
            e
            for e in inside
            if re.search(r"\b(close|cancel|dismiss|no thanks|×)\b|^×$|^x$", e.label, re.I)
        ]
        out.append(
            Pattern("modal", 1, d["selector"], f"an open dialog: {d['label']}", ids(close + inside))
        )
        break
    searches = [e for e in shown if e.role == "search_box"]
    if searches:
        box = searches[0]
        submit = _submit_of(box, shown)
        out.append(
            Pattern("search", len(searches), box.selector, "a search box", ids([box, *submit]))
        )
    passwords = [e for e in shown if e.type == "password"]
    login_links = [e for e in shown if e.type in ("link", "button") and _LOGIN.match(e.label)]
    if passwords:
        form = [
            e
            for e in shown
            if e.region == passwords[0].region and e.type in _TEXT_FIELDS | {"password"}
        ]
        submit = _submit_of(passwords[0], shown)
        out.append(
            Pattern(
                "login",
                len(form),
                passwords[0].region,
                "a sign-in form with a password field",
                ids([*form, *submit]),
            )
        )
    elif login_links:
        out.append(Pattern("login", 1, "", f"a '{login_links[0].label}' control", ids(login_links)))
    listings = [g for g in raw.get("lists", []) if g["items"] >= 3 and g["visible"] >= 2]
    for g in sorted(listings, key=lambda g: -g["items"]):
        members = [
            e
            for e in els
            if e.selector.startswith(g["selector"] + " > ")
            and e.type == "link"
            and e.role not in ("nav_link", "anchor")
        ]
        if not members or re.match(r"^(nav|header|footer)\b", g["region"]):
            continue
        priced = g["prices"] >= max(3, g["items"] // 2)
        plain = g["rich"] < max(3, g["items"] // 2) or g["length"] > 600 or g["tag"] in _PROSE
        if not priced and plain:
            continue  # a plain list of links (a table of contents, "see also") is no listing
        firsts = _first_per_item(members, g["selector"])
        if len(firsts) < max(3, g["items"] // 2):
            continue  # most items link somewhere, or it is no list of things to open
        kind = "product_listing" if priced else "result_listing"
        what = f"{g['items']} items with prices" if priced else f"{g['items']} linked items"
        out.append(Pattern(kind, g["items"], g["selector"], what, ids(firsts)))
        break
    nexts = [e for e in shown if e.role == "pagination"]
    pager = raw.get("pagers", [])
    if nexts or pager:
        pages = [e for e in shown if pager and e.selector.startswith(pager[0]["selector"])]
        where = pager[0]["selector"] if pager else nexts[0].selector
        out.append(
            Pattern(
                "pagination",
                len(pages) or len(nexts),
                where,
                "a next-page control" if nexts else "page links",
                ids(nexts + pages),
            )
        )
    more = [e for e in shown if e.role == "load_more"]
    if more:
        out.append(
            Pattern("load_more", len(more), more[0].selector, f"'{more[0].label}'", ids(more))
        )
    facets = [e for e in shown if e.role == "filter"]
    filter_buttons = [
        e
        for e in shown
        if e.type in ("button", "link") and _FILTER.search(e.label) and len(e.label) < 40
    ]
    if len(facets) >= 2 or filter_buttons:
        region = facets[0].region if facets else filter_buttons[0].region
        what = (
            f"{len(facets)} filter options" if len(facets) >= 2 else f"'{filter_buttons[0].label}'"
        )
        out.append(Pattern("filters", len(facets) or 1, region, what, ids(filter_buttons + facets)))
    sorts = [
        e
        for e in shown
        if e.role == "sort"
        or (e.type == "select" and sum(bool(_SORT_OPTION.search(o)) for o in e.options) >= 2)
    ]
    sorts += [e for e in shown if e.type in ("button", "link") and _SORT_CONTROL.match(e.label)]
    if sorts:
        out.append(
            Pattern(
                "sort", len(sorts), sorts[0].selector, f"'{sorts[0].label or 'sort'}'", ids(sorts)
            )
        )
    cart = [e for e in shown if _CART.search(e.label)]
    if cart:
        adds = sum(bool(_ADD.search(e.label)) for e in cart)
        what = f"{adds} add-to-cart buttons" if adds else f"'{cart[0].label}'"
        out.append(Pattern("cart", len(cart), cart[0].selector, what, ids(cart)))
    tabs = [e for e in shown if e.role == "tab"]
    if len(tabs) >= 2:
        out.append(Pattern("tabs", len(tabs), tabs[0].selector, f"{len(tabs)} tabs", ids(tabs)))
    folds = [e for e in shown if e.role in ("details", "expander")]
    if len(folds) >= 2:
        out.append(
            Pattern(
                "accordion",
                len(folds),
                folds[0].selector,
                f"{len(folds)} collapsed sections",
                ids(folds),
            )
        )
    rows = Counter(
        c["list"] for c in raw["candidates"] if c["pattern"] == "list_item" and c["visible"]
    )
    if rows and rows.most_common(1)[0][1] >= 3:
        where, n = rows.most_common(1)[0]
        items = [
            by_selector[c["selector"]]
            for c in raw["candidates"]
            if c["list"] == where and c["selector"] in by_selector
        ]
        out.append(
            Pattern("list_detail", n, where, f"{n} list items that open details", ids(items))
        )
    known = {e.id for p in out if p.type in ("search", "login") for e in els if e.id in p.elements}
    forms: dict[str, list[Element]] = {}
    for e in shown:
        if e.role == "field" and e.id not in known and e.type != "hidden":
            forms.setdefault(e.region, []).append(e)
    for region, fields in forms.items():
        if len(fields) >= 2:
            submit = _submit_of(fields[-1], shown)
            out.append(
                Pattern(
                    "form",
                    len(fields),
                    region,
                    f"a form with {len(fields)} fields",
                    ids([*fields, *submit], 20),
                )
            )
            break
    return out


def _submit_of(field_: Element, shown: list[Element]) -> list[Element]:
    """The button that sends the field's form: the first submit-like one after it in its region."""
    after = [
        e for e in shown if e.id > field_.id and e.region == field_.region and e.type == "button"
    ]
    named = [e for e in after if _SUBMIT.match(e.label)]
    return (named or after)[:1]


def _first_per_item(members: list[Element], list_selector: str) -> list[Element]:
    seen: set[str] = set()
    out = []
    for e in members:
        item = e.selector[len(list_selector) + 3 :].split(" > ", 1)[0]
        if item not in seen:
            seen.add(item)
            out.append(e)
    return out


def suggestions(patterns: list[Pattern], elements: list[Element]) -> list[Suggestion]:
    """Next actions the page offers, with their reason: blockers (a consent banner, a dialog)
    first, then in the order of `patterns`."""
    by_id = {e.id: e for e in elements}
    out: list[Suggestion] = []
    for p in patterns:
        first = by_id.get(p.elements[0]) if p.elements else None
        if p.type == "cookie_banner":
            out.append(
                Suggestion("accept_cookies", "a consent banner blocks the page", {}, p.elements[:1])
            )
        elif p.type == "modal":
            out.append(Suggestion("close_dialog", p.evidence, {}, p.elements[:1]))
        elif p.type == "search":
            out.append(
                Suggestion("search", "a search box", {"query": "<what to find>"}, p.elements)
            )
        elif p.type == "product_listing":
            out.append(
                Suggestion(
                    "extract_products",
                    f"{p.count} product links with prices",
                    {"list": p.selector, "items": p.count},
                    p.elements,
                )
            )
        elif p.type == "result_listing":
            out.append(
                Suggestion(
                    "open_result",
                    f"a list of {p.count} linked items",
                    {"list": p.selector, "items": p.count},
                    p.elements,
                )
            )
        elif p.type == "pagination":
            out.append(Suggestion("next_page", f"pagination: {p.evidence}", {}, p.elements[:3]))
        elif p.type == "load_more":
            out.append(
                Suggestion("load_more", f"more items behind {p.evidence}", {}, p.elements[:1])
            )
        elif p.type == "filters":
            options = [by_id[i].label for i in p.elements if i in by_id][:12]
            out.append(Suggestion("filter", p.evidence, {"options": options}, p.elements))
        elif p.type == "sort":
            opts = list(first.options) if first and first.options else []
            out.append(
                Suggestion(
                    "sort", f"a sort control {p.evidence}", {"options": opts}, p.elements[:1]
                )
            )
        elif p.type == "login":
            out.append(
                Suggestion(
                    "log_in",
                    p.evidence,
                    {"username": "<user>", "password": "<password>"},
                    p.elements,
                )
            )
        elif p.type == "cart":
            adds = any(_ADD.search(by_id[i].label) for i in p.elements if i in by_id)
            out.append(
                Suggestion(
                    "add_to_cart" if adds else "open_cart",
                    f"cart: {p.evidence}",
                    {},
                    p.elements[:5],
                )
            )
        elif p.type == "tabs":
            out.append(
                Suggestion(
                    "open_tab",
                    p.evidence,
                    {"tabs": [by_id[i].label for i in p.elements if i in by_id]},
                    p.elements,
                )
            )
        elif p.type == "accordion":
            out.append(Suggestion("expand_sections", p.evidence, {}, p.elements))
        elif p.type == "list_detail":
            out.append(Suggestion("open_item", p.evidence, {"list": p.selector}, p.elements[:5]))
        elif p.type == "form":
            fields = [by_id[i].label for i in p.elements if i in by_id and by_id[i].role == "field"]
            out.append(Suggestion("fill_form", p.evidence, {"fields": fields}, p.elements))
    return out


# Goal ranking ------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "for",
        "on",
        "in",
        "at",
        "by",
        "and",
        "or",
        "my",
        "me",
        "i",
        "this",
        "that",
        "it",
        "is",
        "be",
        "with",
        "from",
        "page",
    ]
)
# What each suggestion helps with, in a user's words: a goal near one lifts its elements.
_INTENTS = {
    "accept_cookies": "accept cookies, agree to the cookie consent banner",
    "close_dialog": "close the popup dialog",
    "search": "search for something, find an item by name",
    "extract_products": "find a product, compare prices, open a product",
    "open_result": "open a result from the list",
    "next_page": "go to the next page of results, see more",
    "load_more": "load more results, show more items",
    "filter": "filter the results by brand, size, colour, category or price",
    "sort": "sort the results by price or rating, order by",
    "log_in": "log in, sign in to my account with username and password",
    "add_to_cart": "add to cart, buy, purchase, checkout",
    "open_cart": "view the shopping cart or basket, checkout",
    "open_tab": "switch to another tab",
    "expand_sections": "expand a section, show details, read the answer",
    "open_item": "open an item to see its details",
    "fill_form": "fill in the form and submit it",
}


# Words that name an intent outright: the model reads short goals loosely ("search for trail
# shoes" sat nearer to "view the cart" than to "search"), so a cue counts as a strong match.
_CUES = {
    "accept_cookies": re.compile(r"\b(cookies?|consent|gdpr)\b", re.I),
    "close_dialog": re.compile(r"\b(close|dismiss)\b.{0,20}\b(dialog|popup|pop-up|modal)\b", re.I),
    "search": re.compile(r"\b(search|look up|look for|find)\b", re.I),
    "next_page": re.compile(r"\bnext( page)?\b|\bpage \d+\b|\bmore results\b", re.I),
    "load_more": re.compile(r"\b(load|show|see) more\b", re.I),
    "filter": re.compile(r"\b(filter|only|narrow|refine)\b", re.I),
    "sort": re.compile(r"\b(sort|order by|cheapest|most expensive|lowest price|highest)\b", re.I),
    "log_in": re.compile(r"\b(log ?in|sign ?in|login|my account)\b", re.I),
    "add_to_cart": re.compile(r"\b(add .{0,40}\b(cart|basket|bag)|buy|purchase)\b", re.I),
    "open_cart": re.compile(r"\b(cart|basket|checkout)\b", re.I),
    "open_tab": re.compile(r"\btab\b", re.I),
    "expand_sections": re.compile(r"\b(expand|faq)\b", re.I),
    "fill_form": re.compile(r"\b(fill|form|submit|enter|sign ?up|register|contact)\b", re.I),
}
_NEVER = re.compile(r"(?!)")
CUE = 0.8  # what a cue counts as, against the model's cosine similarity


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "s", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@functools.lru_cache(maxsize=50_000)
def _terms(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


def _cosines(goal: npt.ArrayLike, vectors: Sequence[npt.ArrayLike]) -> list[float]:
    """Cosine similarity of `goal` with each vector, at once (a page has thousands)."""
    if not vectors:
        return []
    matrix = np.asarray(vectors, dtype=np.float32)
    g = np.asarray(goal, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(g)) or 1.0)
    return [float(x) for x in (matrix @ g) / np.where(norms == 0, 1.0, norms)]


_WHAT = {
    "search_box": "search box",
    "pagination": "next page",
    "cookie_dismiss": "accept cookies",
    "filter": "filter",
    "sort": "sort by",
    "load_more": "load more",
    "tab": "tab",
}


def describe(e: Element) -> str:
    """An element in words, as the embedding model reads it against a goal."""
    what = _WHAT.get(e.role, e.type)
    parts = [f"{what}: {e.label}" if e.label else what]
    if e.context:
        parts.append(e.context[:120])
    if e.options:
        parts.append("options " + ", ".join(e.options[:8]))
    if e.region:
        parts.append(f"in {e.region}")
    return " | ".join(parts)


class GoalRanker:
    """Orders elements for a goal: the embedding model on an element's label and context, the
    goal's words, and the page's patterns. Embeddings of element texts are cached (pages repeat
    their chrome); at most `embed_limit` new texts are embedded per scan, chosen by word overlap
    and pattern first among the first `embed_window` distinct texts in that order, so a page of
    thousands of elements stays fast."""

    def __init__(
        self,
        embed: Callable[[Sequence[str]], Sequence[Vector]],
        # 16 new texts a scan: over the eval's 87 cases recall@20 0.989 and MRR 0.856, as with
        # 32 and 64 (0.989; 0.855 and 0.849), recall@10 0.977 against 0.989 (8: 0.931), for
        # half the goal's embedding time (docs/measured.md#agent-scan).
        embed_limit: int = 16,
        # An agent's next step on the same page, with another goal: when the first 64 texts in
        # the goal's order are embedded already, nothing further down is (before, 16 texts from
        # the rest of a 2,204-element listing were, at each step: 60 of a rank's 75 ms).
        embed_window: int = 64,
        cache_size: int = 20_000,
    ) -> None:
        self._embed = embed
        self._limit = embed_limit
        self._window = embed_window
        self._cache: OrderedDict[str, FloatArray] = OrderedDict()
        self._size = cache_size
        self._intents: dict[str, FloatArray] = {}
        self._lock = threading.Lock()  # rankings run in several threads at once

    def _vectors(self, texts: Sequence[str]) -> dict[str, FloatArray]:
        out: dict[str, FloatArray] = {}
        with self._lock:
            for t in dict.fromkeys(texts):
                if (vector := self._cache.get(t)) is not None:
                    self._cache.move_to_end(t)
                    out[t] = vector
        missing = [t for t in dict.fromkeys(texts) if t not in out]
        if missing:  # embedded outside the lock; kept as arrays (a rank reads hundreds)
            vectors = self._embed(missing)
            out.update(
                (t, np.asarray(v, dtype=np.float32)) for t, v in zip(missing, vectors, strict=True)
            )
            with self._lock:
                for t in missing:
                    self._cache[t] = out[t]
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return out

    def rank(
        self, elements: list[Element], goal: str, hints: list[Suggestion]
    ) -> tuple[list[tuple[float, Element]], list[Suggestion]]:
        """Elements best first for `goal`, each beside its score (`answer` makes copies with
        their scores of those it shows: 2,204 copies took 15 ms); suggestions reordered by how
        well they serve the goal (blockers stay first)."""
        if not self._intents:
            intents = self._embed(list(_INTENTS.values()))
            self._intents = {
                name: np.asarray(v, dtype=np.float32)
                for name, v in zip(_INTENTS, intents, strict=True)
            }
        goal_terms = _terms(goal)
        texts = {e.id: describe(e) for e in elements}
        lexical = {}
        for e in elements:
            label, around = _terms(e.label), _terms(texts[e.id])
            hit = sum(1.0 if t in label else 0.5 if t in around else 0.0 for t in goal_terms)
            lexical[e.id] = hit / max(1, len(goal_terms))
        members: dict[int, list[str]] = {}
        for s in hints:
            for i in s.elements:
                members.setdefault(i, []).append(s.name)
        # Which texts to embed: what shares the goal's words and what the patterns name, then
        # the rest in document order, visible first.
        order = sorted(
            elements,
            key=lambda e: (-lexical[e.id], e.id not in members, not e.visible, e.id),
        )
        chosen: list[str] = []
        seen: set[str] = set()
        new = 0
        with self._lock:
            cached = set(self._cache)
        for e in order:
            t = texts[e.id]
            if t in seen:
                continue
            if t not in cached:
                if new >= self._limit or len(seen) >= self._window:
                    continue
                new += 1
            seen.add(t)
            chosen.append(t)
        vectors = self._vectors([goal, *chosen])
        g = vectors[goal]
        cues = {name: CUE if _CUES.get(name, _NEVER).search(goal) else 0.0 for name in _INTENTS}
        near = _cosines(g, list(self._intents.values()))
        intent = {name: max(cos, cues[name]) for name, cos in zip(self._intents, near, strict=True)}
        similarity = dict(zip(chosen, _cosines(g, [vectors[t] for t in chosen]), strict=True))
        scored = []
        for e in elements:
            t = texts[e.id]
            semantic = similarity.get(t, 0.0)
            affinity = max([intent.get(name, 0.0) - 0.2 for name in members.get(e.id, ())] or [0])
            affinity = max(0.0, affinity)
            score = 0.6 * semantic + 0.3 * lexical[e.id] + 0.6 * affinity
            score += 0.05 if e.visible else -0.25
            if not _WORD.search(e.label.lower()):
                score -= 0.2  # "¶", "#": a permalink or an icon with no name
            scored.append((round(score, 4), e))
        scored.sort(key=lambda pair: (-pair[0], pair[1].id))
        blockers = [s for s in hints if s.name in ("accept_cookies", "close_dialog")]
        rest = sorted(
            (s for s in hints if s not in blockers), key=lambda s: -intent.get(s.name, 0.0)
        )
        return scored, blockers + rest


# Reading a DOM in Chromium ---------------------------------------------------------------------


RECENT_SCANS = 16


class DomScanner:
    """Runs `SCAN` on a DOM an agent sent: the DOM is the page's own document at its URL (so
    links resolve and same-origin checks hold), served to a navigation or, in a page already
    on that site, written in place; in a Chromium with scripts off and every other request
    refused. Started on first use, and again after its Chromium went away; `pages` scans run
    at once, the others wait for a free page."""

    def __init__(self, options: BrowserOptions, pages: int = 2, timeout_s: float = 10.0) -> None:
        self._options = options
        self._timeout_ms = timeout_s * 1000
        self._lock = asyncio.Lock()
        # Free pages, the one used last at the end (see `_take`). Giving a page back never
        # waits (a scan cancelled while giving one back would lose it), and each scan waiting
        # for a page has a future of its own, as `asyncio.Queue`'s getters do.
        self._free: list[Any] = []
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._browsers = 0  # the browsers started: a page of an earlier one is not given back
        self._born: dict[Any, int] = {}  # page -> the browser it belongs to
        self._pages = max(1, pages)
        self._started = False
        self._playwright: Any = None
        self._browser: Any = None
        self._docs: dict[Any, tuple[str, str]] = {}
        self._sites: dict[Any, str] = {}  # page -> the origin of the DOM it holds
        # The latest scans by URL and DOM: an agent paging through elements (`offset`) or
        # asking with another goal sends the same DOM again.
        self._recent: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._context: Any = None

    async def _start(self) -> None:
        async with self._lock:
            if self._started:
                return
            await self._close_browser()  # a browser that died under an earlier scan
            # Images are not fetched: each refused request is a trip through Playwright's
            # route handler (a listing of 550 products took 1.1 s to scan, 0.5 s without).
            # No optimizing compiler: the only script here is the scanner, and V8's TurboFan
            # compiled its body again about every other scan (a new document's objects undo
            # what it assumed): 58 ms of CPU a scan of a 5,000-element listing on worker
            # threads, taken from the server on two cores. With its quick compiler (Maglev)
            # alone the scan is faster (docs/measured.md#agent-scan).
            self._playwright, self._browser = await launch_browser(
                self._options, "--blink-settings=imagesEnabled=false", "--js-flags=--no-turbofan"
            )
            self._browsers += 1
            # A Chromium that dies between scans is noticed at once: the next scan starts
            # another instead of failing on a page of the dead one.
            born = self._browsers
            self._browser.on("disconnected", lambda _: self._lost(born))
            try:
                self._context = await self._browser.new_context(java_script_enabled=False)
                for _ in range(self._pages):
                    self._give(await self._new_page())
            except Exception as exc:
                await self._close_browser()
                raise ScanError(f"Chromium started but gave no page: {exc!r}") from exc
            self._started = True

    def _lost(self, browser: int) -> None:
        """The Chromium numbered `browser` went away: its pages are dropped and the scans
        waiting for one start another."""
        if browser == self._browsers and self._started:
            self._started = False
            self._free.clear()
            self._wake(everyone=True)

    async def _new_page(self) -> Any:
        page = await self._context.new_page()
        await page.route("**/*", self._serve(page))
        self._born[page] = self._browsers
        return page

    async def _take(self, origin: str) -> Any:
        """A free page: of those holding a DOM of `origin` (the next is written in place, see
        `scan`), the one used last; else one holding no DOM; else the one used longest ago.
        None when the browser went away while waiting. While scans of one site come one at a
        time, one renderer stays warm (its caches, the compiled scanner): a 5,000-element
        listing scanned in p50 126.5 and 131.0 ms in two runs against 136.1 and 137.6 ms
        taking pages in turn. Agents on two sites taking turns keep a page each."""
        while not self._free and self._started:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except BaseException:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
                if self._free and not waiter.cancelled():
                    self._wake()  # woken, then cancelled: the next one takes the page
                raise
        if not self._free:
            return None
        sites = [self._sites.get(page) for page in self._free]
        for index in range(len(sites) - 1, -1, -1):
            if origin and sites[index] == origin:
                return self._free.pop(index)
        return self._free.pop(sites.index(None) if None in sites else 0)

    def _give(self, page: Any) -> None:
        if self._born.get(page) != self._browsers:  # of a browser closed since
            self._born.pop(page, None)
            return
        self._free.append(page)
        self._wake()

    def _wake(self, everyone: bool = False, error: BaseException | None = None) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if waiter.done():
                continue
            if error is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(None)
            if not everyone:
                return

    async def _replace(self, page: Any, browser: int | None) -> None:
        """Close a page that failed and give the pool a new one in its place; where none can
        be made, the browser is gone, and the next scan starts another. A page of a browser
        replaced since changes nothing."""
        with contextlib.suppress(Exception):
            await page.close()
        if browser != self._browsers or not self._started:
            return
        try:
            self._give(await self._new_page())
        except Exception:
            self._lost(browser)

    def _serve(self, page: Any) -> Callable[[Any], Any]:
        async def serve(route: Any) -> None:
            request = route.request
            if not (request.is_navigation_request() and request.frame == page.main_frame):
                await route.abort()
                return
            # The DOM answers its own URL once; a refresh or a redirect it asks for later gets
            # "204 No Content", which leaves the document where it is.
            url, dom = self._docs.pop(page, ("", ""))
            if url:
                await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=dom)
            else:
                await route.fulfill(status=204)

        return serve

    async def scan(self, url: str, dom: str) -> str:
        """The scanner's answer for `dom` as the page at `url` (http or https), as JSON text
        (`parse_scan` reads it); ScanError when Chromium cannot read it in time."""
        key = (url, hashlib.sha256(dom.encode("utf-8", "replace")).hexdigest())
        if (seen := self._recent.get(key)) is not None:
            self._recent.move_to_end(key)
            return seen
        # In a thread: a DOM of 5 MB takes about 75 ms of regular expressions, which on the
        # event loop every other request would wait for.
        dom, policy = await asyncio.to_thread(_prepared, dom)
        origin = _origin(url)
        page = None
        while page is None:  # None: the browser went away while this scan waited for a page
            if not self._started:
                await self._start()
            page = await self._take(origin)
        # A page that holds a DOM of this site takes the next one in place, with the URL set
        # first (load and scan take a third less time than after a navigation); a DOM that set
        # a Content-Security-Policy leaves it in force for the document, so its page navigates.
        in_place = bool(origin) and self._sites.pop(page, None) == origin
        try:
            async with asyncio.timeout(self._timeout_ms / 1000):
                text = await page.evaluate(_WRITE_AND_SCAN, [url, dom]) if in_place else None
                if text is None:
                    self._docs[page] = (url, dom)
                    await page.goto(url, wait_until="domcontentloaded")
                    text = str(await page.evaluate(_SCAN_NOW))
            if origin and not policy:
                self._sites[page] = origin
        except Exception as exc:
            # A page that timed out or crashed is not used again: another takes its place,
            # made whatever becomes of this scan (shielded from its cancellation).
            self._docs.pop(page, None)
            self._sites.pop(page, None)
            browser = self._born.pop(page, None)
            await asyncio.shield(self._replace(page, browser))
            raise ScanError(f"Chromium could not read the dom: {exc!r}"[:500]) from exc
        finally:
            self._docs.pop(page, None)
            self._give(page)  # a failed page is no longer born of any browser: dropped
        self._recent[key] = text
        while len(self._recent) > RECENT_SCANS:
            self._recent.popitem(last=False)
        return text

    async def aclose(self) -> None:
        """Close the browser (the server is stopping): scans waiting for a page fail with
        ScanError; a later scan would start another."""
        self._wake(everyone=True, error=ScanError("the scanner was closed: the server is stopping"))
        await self._close_browser()

    async def _close_browser(self) -> None:
        self._started = False
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        self._free.clear()  # pages of the closed browser
        self._born.clear()
        self._sites.clear()
        self._wake(everyone=True)
        await close_browser(playwright, browser)


# The answer crosses from the page as one string (faster than a large object through
# Playwright's serializer), and the time it takes grows with its length: the rows of controls
# and fields go as columns (a key once, not once a row; empty strings and false left out as
# null; true as 1), a column of few distinct strings as a table and codes (regions,
# containers, tags), and a control's selector inside its container as ">" and the rest of it
# (no selector starts with a combinator). A 5,000-element listing: 0.74 MB in 34 ms before,
# 0.22 MB in 7 ms now. `parse_scan` unpacks it.
_SCAN_JSON = (
    "() => { const r = ("
    + SCAN
    + r""")();
  const pack = (rows, inContainer) => {
    const n = rows.length, cols = {};
    for (let i = 0; i < n; i++) {
      const row = rows[i];
      if (inContainer && row.container && row.selector.startsWith(row.container + ' > ')) {
        row.selector = '>' + row.selector.slice(row.container.length + 3);
      }
      for (const k in row) {
        const v = row[k];
        if (v === '' || v === false) continue;
        (cols[k] || (cols[k] = new Array(n).fill(null)))[i] = v === true ? 1 : v;
      }
    }
    for (const k in cols) {
      const col = cols[k];
      if (!col.every(v => v === null || typeof v === 'string')) continue;
      const index = new Map();
      const codes = col.map(v => {
        if (v === null) return -1;
        let c = index.get(v);
        if (c === undefined) { c = index.size; index.set(v, c); }
        return c;
      });
      if (index.size * 4 <= n) cols[k] = {table: Array.from(index.keys()), codes};
    }
    return {n, cols};
  };
  r.candidates = pack(r.candidates, true);
  r.fields = pack(r.fields, false);
  return JSON.stringify(r); }"""
)


# The scanner is made once in a page's window and called from there: `document.open` keeps the
# window, and with the page's scripts off nothing else writes to it. Made anew in each call, it
# was compiled again and ran cold (8 ms more for a 5,000-element listing). A DOM's element
# named `__loreScan` is no own property of the window, so it is not taken for the scanner.
_SCANNER = (
    "(Object.prototype.hasOwnProperty.call(window, '__loreScan') ? window.__loreScan"
    " : (window.__loreScan = " + _SCAN_JSON + "))"
)
# Once read, the document is emptied in the same call: left in place, Chromium went on to paint
# and rasterise it after the answer (80 ms of CPU a 5,000-element listing, on the cores that
# read the answer), and the next DOM's `document.open` took its teardown anyway.
_SCAN_NOW = (
    "() => { const out = " + _SCANNER + "(); document.open(); document.close(); return out; }"
)
# A new document at `url` in a page already on its origin, then its scan, in one call; null
# when the page refused (the scan page then navigates). With scripts off, the DOM's own
# scripts do not run; its requests are refused as after a navigation.
_WRITE_AND_SCAN = (
    "([url, html]) => { try { history.replaceState(null, '', url); "
    "document.open(); document.write(html); document.close(); } "
    "catch (e) { return null; } return (" + _SCAN_NOW + ")(); }"
)
_CSP = re.compile(r"http-equiv\s*=\s*[\"']?content-security-policy", re.IGNORECASE)
_REFRESH = re.compile(r"<meta\b[^>]*http-equiv\s*=\s*[\"']?refresh\b[^>]*>", re.IGNORECASE)
# Tags that fetch what their attributes name (images, media, frames, scripts, stylesheets).
# Nothing they fetch reaches the scan page (images are off, every other request is refused),
# but each request is still made, and each refusal is a trip through the route handler: a
# listing's 550 images took 17 ms of its parse, a Python docs page's stylesheets and scripts
# 7 ms of its scan. Their attributes are renamed `data-lore-*`, which asks for nothing and
# leaves the elements and the scanner's answer as they were.
#
# An image's `alt` too: with no picture, Chromium draws the alt text in a small tree of its
# own for each image, and the listing's 550 of them were 40-50 ms of its 80-100 ms of parse,
# style and layout. The scanner reads `data-lore-alt` as the alt text, and `_STAND_IN` gives
# each such image a box of 16 by 16 where its attributes give none (the alt text's line was
# no truer to the picture the agent sees): what it links stays visible, an image with an
# empty alt stays without a box, and a rule of the page that sizes or hides it wins.
_FETCHING = re.compile(
    r"<(?:img|source|script|iframe|frame|video|audio|embed|object|track|link)(?![\w-])"
    r"(?:[^>\"']|\"[^\"]{0,4096}\"|'[^']{0,4096}')*>",
    re.IGNORECASE,
)


# A quoted value (kept whole, so a value that says "src=" is left as it is) or a name. A tag
# with a longer value (an image inlined as data) is left as it is: no quote is searched far.
def _attributes(names: str) -> re.Pattern[str]:
    return re.compile(rf"(\"[^\"]*\"|'[^']*')|(?<=\s)({names})(?=\s*=)", re.I)


_FETCH_NAMES = "src|srcset|poster|data|href"
_FETCH_ATTR = _attributes(_FETCH_NAMES)
_FETCH_ATTR_AND_ALT = _attributes(_FETCH_NAMES + "|alt")
# After the DOM (a `<style>` after `</html>` is parsed into the body; before a doctype it would
# put the page in quirks mode). `:where` weighs nothing: a page's rule with a class, an id or
# an attribute in its selector wins (one in a cascade layer, or of no weight itself, does not).
# A DOM with a Content-Security-Policy could refuse the style, so its images keep their alt.
_STAND_IN = (
    "<style>:where(img[data-lore-alt]:not([data-lore-alt='']):not([width]))"
    "{width:16px}:where(img[data-lore-alt]:not([data-lore-alt=''])"
    ":not([height])){height:16px}</style>"
)


def _prepared(dom: str) -> tuple[str, bool]:
    """`dom` as the scan page parses it: without a refresh (a navigation that could come after
    the scan, take the next DOM meant for the page and leave that one's navigation aborted),
    `_inert`, with its images' stand-in boxes; and whether it sets a Content-Security-Policy."""
    dom = _REFRESH.sub("", dom.lstrip("\ufeff"))
    if _CSP.search(dom):
        return _inert(dom, images=False), True
    return _inert(dom) + _STAND_IN, False


def _inert(dom: str, images: bool = True) -> str:
    """`dom` with the fetching attributes of its fetching tags renamed (see `_FETCHING`), and
    with `images` their `alt` too (for `_STAND_IN`)."""
    names = _FETCH_ATTR_AND_ALT if images else _FETCH_ATTR

    def attrs(tag: re.Match[str]) -> str:
        return names.sub(lambda m: m.group(1) or "data-lore-" + m.group(2), tag.group())

    return _FETCHING.sub(attrs, dom)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme in ("http", "https") else ""


def parse_scan(text: str) -> dict[str, Any]:
    """The scanner's JSON answer (as `_SCAN_JSON` packs it) with its rows unpacked and what it
    left out as empty put back."""
    raw: dict[str, Any] = json.loads(text)
    raw["candidates"] = _unpack(raw["candidates"], _CANDIDATE)
    for c in raw["candidates"]:
        if c["selector"].startswith(">"):
            c["selector"] = f"{c['container']} > {c['selector'][1:]}"
    raw["fields"] = _unpack(raw["fields"], _FIELD)
    raw["dialogs"] = [{"label": "", "cookie": False, **d} for d in raw["dialogs"]]
    for name in ("banners", "pagers"):
        raw[name] = [{"label": "", **b} for b in raw[name]]
    raw["lists"] = [{"region": "", **g} for g in raw["lists"]]
    raw.setdefault("title", "")
    return raw


def _unpack(packed: dict[str, Any], defaults: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows from `_SCAN_JSON`'s columns: null is the key's empty value, 1 is true."""
    rows = [dict(defaults) for _ in range(packed["n"])]
    for key, packed_column in packed["cols"].items():
        column = packed_column
        if isinstance(packed_column, dict):
            table = packed_column["table"]
            column = [table[c] if c >= 0 else None for c in packed_column["codes"]]
        flag = defaults.get(key) is False
        for row, value in zip(rows, column, strict=True):
            if value is not None:
                row[key] = bool(value) if flag else value
    return rows


_CANDIDATE = {
    **dict.fromkeys(("role", "label", "href", "list", "item", "container", "url", "region"), ""),
    "text": "",
    **dict.fromkeys(("visible", "disabled", "destructive", "nav", "chrome", "cookie"), False),
    **dict.fromkeys(("variant", "dialog", "facet", "pressed", "form"), False),
}
_FIELD = {
    **dict.fromkeys(("name", "label", "placeholder", "region", "form"), ""),
    **dict.fromkeys(("visible", "disabled", "search", "cookie", "dialog", "facet"), False),
    "checked": False,
}


def check_dom(dom: str) -> None:
    """InvalidDomError unless `dom` reads as HTML."""
    if "\x00" in dom:
        raise InvalidDomError("dom holds NUL bytes: send document.documentElement.outerHTML")
    if not re.search(r"<\s*[a-zA-Z!]", dom[:100_000]):
        raise InvalidDomError("dom has no HTML tags: send document.documentElement.outerHTML")


@functools.lru_cache(maxsize=8)
def read_scanned(text: str, url: str, require_elements: bool = True) -> PageScan:
    """`read_scan` of the scanner's JSON `text`, kept for the latest texts: an agent paging
    through a page's elements (`offset`) or asking with another goal sends the same DOM again,
    which the scanner answers from its latest scans (a 5,000-element listing: 21 ms saved).
    The page is shared: nothing reading it changes it."""
    return read_scan(parse_scan(text), url, require_elements)


def read_scan(raw: dict[str, Any], url: str, require_elements: bool = True) -> PageScan:
    """Elements, patterns and suggestions from the scanner's raw result; InvalidDomError when
    the page has nothing an agent could act on (unless `require_elements` is False)."""
    elements = elements_of(raw)
    if not elements and require_elements:
        raise InvalidDomError(
            "the dom has no element an agent could act on (no links, buttons or form fields)"
        )
    patterns = page_patterns(raw, elements)
    return PageScan(
        url=url,
        title=raw.get("title", ""),
        elements=elements,
        patterns=patterns,
        suggestions=suggestions(patterns, elements),
    )


def render(
    patterns: list[Pattern],
    hints: list[Suggestion],
    types: dict[str, int],
    shown: list[Element],
    total: int,
    offset: int,
    goal: str | None,
) -> str:
    """The scan as compact text for a prompt: `types` counts the page's elements by type."""
    counts = ", ".join(f"{t}: {n}" for t, n in types.items())
    first, last = offset + 1, offset + len(shown)
    head = f"# Showing {len(shown)} of {total} elements"
    if shown:
        head += f" ({first}-{last})"
    lines = [head + f"; {counts}" + (f"; ranked for goal: {goal}" if goal else "")]
    if last < total:
        lines.append(f"# To see more: scan again with offset={last}, or scroll and scan")
    if patterns:
        lines.append("# Patterns: " + "; ".join(f"{p.type} ({p.evidence})" for p in patterns))
    for s in hints[:6]:
        refs = ", ".join(f"[{i}]" for i in s.elements[:5])
        lines.append(f"# Suggest {s.name}: {s.reason}" + (f" -> {refs}" if refs else ""))
    for e in shown:
        text = f'[{e.id}] {e.type} "{e.label}"'
        if e.role not in (e.type, "button", "link", "field"):
            text += f" ({e.role})"
        if e.context:
            text += f" in item: {e.context[:80]}"
        if e.region:
            text += f" @{e.region}"
        if not e.visible:
            text += " hidden"
        lines.append(text)
    return "\n".join(lines)


@dataclass
class ScanAnswer:
    """What `POST /agent/scan` returns: a page of the (goal-ranked) elements and the whole
    page's patterns and suggestions."""

    summary: dict[str, Any]
    patterns: list[Pattern]
    suggestions: list[Suggestion]
    elements: list[Element]
    text: str


def answer(
    scan: PageScan,
    ranker: GoalRanker | None,
    goal: str | None,
    max_elements: int = 50,
    offset: int = 0,
    viewport_only: bool = False,
    viewport_height: int = 720,
) -> ScanAnswer:
    """`max_elements` elements from `offset`: ranked for `goal` when one is given, else in
    document order with visible ones first; `viewport_only` keeps what shows on the first screen."""
    filters = []
    pool = scan.elements
    if viewport_only:
        pool = [e for e in pool if e.visible and e.top < viewport_height]
        filters.append(f"viewportOnly (top < {viewport_height}px)")
    hints = scan.suggestions
    if goal and goal.strip() and ranker is not None and pool:
        scored, hints = ranker.rank(pool, goal, hints)
        shown = [_with(e, score=score) for score, e in scored[offset : offset + max_elements]]
        filters.append("rankedForGoal")
    else:
        ranked = sorted(pool, key=lambda e: (not e.visible, e.id))
        shown = ranked[offset : offset + max_elements]
    total = len(pool)
    remaining = max(0, total - offset - len(shown))
    page_controls = [s.name for s in hints if s.name in ("next_page", "load_more")]
    types = dict(Counter(e.type for e in scan.elements).most_common())
    summary = {
        "totalElements": len(scan.elements),
        "includedElements": len(shown),
        "elementTypes": types,
        "filtersApplied": filters,
        "paginationHints": {
            "offset": offset,
            "nextOffset": offset + len(shown) if remaining else None,
            "remaining": remaining,
            "pageControls": page_controls,
        },
    }
    text = render(scan.patterns, hints, types, shown, total, offset, goal)
    return ScanAnswer(summary, scan.patterns, hints, shown, text)
