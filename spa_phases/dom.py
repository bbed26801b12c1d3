"""A DOM snapshot into scoped regions of Markdown.

The snapshot is parsed defensively (size limit, no network, no entities, comments and processing
instructions dropped). Scripts, styles, templates and `aria-hidden="true"` subtrees are dropped
(not the page a popup's library hid behind the popup: `ingest.hidden_from_readers`);
content hidden with `display:none`, `hidden` or a collapsed panel is kept, since a single-page
app reveals it later. The page is cut into regions at containers a person would name (elements
with a stable id or test id, tab panels, dialogs, sections, articles, `details`): each region is
the text of its container outside nested containers, with a stable CSS selector as its `scope`,
so the same container in a later snapshot has the same scope.

Hidden text that reads like instructions to a model (the hidden-CSS prompt-injection pattern) is
cut out into its own region and flagged; visible text is never flagged."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import lxml.etree
import lxml.html

from ingest import (
    collapse,
    hidden_from_readers,
    html_to_markdown,
    is_button,
    is_permalink,
    pager,
    title_line,
)
from spa_phases.errors import SnapshotError, SnapshotTooLargeError
from spa_phases.page_scripts import CAMEL_WORD, NAV_NAME

DROPPED_TAGS = ("script", "style", "template", "noscript", "svg", "canvas", "iframe", "object")
CONTAINER_TAGS = frozenset(
    {"section", "article", "details", "dialog", "form", "main", "aside", "nav"}
)
# The page's own header and footer are landmarks; an article's header is part of the article.
LANDMARK_TAGS = frozenset({"header", "footer"})
CONTROL_TAGS = frozenset(
    {"a", "button", "input", "select", "option", "textarea", "label", "summary", "img"}
)
CONTAINER_ROLES = frozenset(
    {
        "tabpanel",
        "dialog",
        "alertdialog",
        "region",
        "status",
        "alert",
        "navigation",
        "main",
        "banner",
        "contentinfo",
        "complementary",
        "search",
        "menu",
        "listbox",
    }
)
# Roles of controls: never a region of their own, even with a stable id (Stoplight Elements'
# language menu items, id "Node", "Go", made one-word chunks that outranked descriptions);
# their labels stay with the menu or list around them.
CONTROL_ROLES = frozenset(
    {
        *("button", "link", "tab", "option", "menuitem", "menuitemcheckbox", "menuitemradio"),
        *("checkbox", "radio", "switch", "treeitem"),
    }
)
# A named element (an id, a test id) is a container when it says this much: one with fewer words
# is a phrase of the container around it (Kong's spec renderer tests every label, `get`, `/pets`,
# `integer`, which made one-word chunks), as a status line "Status: Pending. The request
# waits…" with an id is not.
NAMED_WORDS = 6
# What frames a block of code says beside it: "Copy", a language's or a file's name.
FRAME_WORDS = 3
_SWITCHED = frozenset({"tabpanel", "dialog", "alertdialog"})
# Blocks that repeat under one parent (API operations, cards, results): regions of their own
# when they have no id, from this many alike.
REPEATED = 3
# The longest open toggle's label that leads the regions of the block it opened.
MAX_LABEL = 120
# A sidebar, table of contents or menu without navigation markup is a region mostly of links:
# this share of its text at least, in three links or more.
NAV_LINK_SHARE = 0.7
# Marked by lore's in-browser capture on elements whose computed style hides them.
HIDDEN_MARK = "data-lore-hidden"
# Marked by the capture on a box its layout sets apart from the one before it (as ingest's
# HTML writer reads it): "Parameters" "URL Path" "Header" in a heading are words apart.
APART_MARK = "data-lore-apart"
# Marked by the capture on a line drawn as a title but not marked up as one (its value is the
# level), and on the block it leads: the title is the context of the regions in that block
# only. The Markdown keeps it as the text it is.
TITLE_MARK = "data-lore-title"
TITLED_MARK = "data-lore-titled"
# Marked by the capture on blocks drawn side by side (see `_after_column`).
COLUMN_MARK = "data-lore-column"
_WORD = re.compile(r"\w+")
_NAV_NAME = re.compile(NAV_NAME, re.I)
_CAMEL_WORD = re.compile(CAMEL_WORD)
_STABLE_ID = re.compile(r"^[A-Za-z][\w-]{0,80}$")
# Ids a framework numbers as it renders ("ember1234", "headlessui-disclosure-button-7", Vue's
# "scalar-refs-0-47"), and ids naming a state a script moves between elements (Doxygen's
# `selected` row): not the same element in the next render. As page_scripts' GENERATED.
_GENERATED_ID = re.compile(
    r"\d{4,}|^(ember|react|radix|mui|rc|ng)[-_]?\d|^headlessui-|[-_:]\d+[-_:]\d+$"
    r"|^(selected|current|active|highlighted|focused)$",
    re.I,
)
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(hidden|collapse)|opacity\s*:\s*0(\.0*)?\s*(;|$)"
    r"|font-size\s*:\s*0|color\s*:\s*transparent|clip\s*:\s*rect\(\s*0"
    r"|(left|top|text-indent)\s*:\s*-\d{3,}",
    re.I,
)
_INSTRUCTIONS = [
    re.compile(p, re.I)
    for p in (
        r"\b(ignore|disregard|forget|override)\b.{0,30}\b(previous|prior|above|earlier|all|your)"
        r"\b.{0,20}\b(instructions?|prompts?|rules|messages|guidelines)",
        r"\b(ai|llm|language model|assistant|agent|chatbot|gpt)s?\b.{0,60}\b(must|should|"
        r"are instructed|is instructed|need to|have to|will now)\b",
        r"\byou are (now )?(an? )?(ai|assistant|language model|llm|agent|chatgpt)\b",
        r"\b(system prompt|system message|new instructions?|hidden instructions?)\b",
        r"\bdo not (tell|inform|reveal|mention|show)\b.{0,40}\b(user|human|person|customer)",
        r"\b(instead|immediately),? (click|navigate|go to|send|transfer|submit|type|enter|"
        r"reveal|output|respond|reply|print)\b",
    )
]


@dataclass(frozen=True)
class Region:
    scope: str  # a stable CSS selector of the container
    heading_path: tuple[str, ...]  # headings before the container, outermost first
    markdown: str
    hidden: bool  # invisible to a person when the snapshot was taken
    injection: bool  # hidden and reads like instructions to a model
    navigation: bool = False  # the page's navigation (a sidebar, a menu, a pager): `_navigation`
    # The titles of headings in it that a person cannot see (a closed dialog's, when the
    # dialog is no region of its own): they do not title the page.
    hidden_headings: tuple[str, ...] = ()


def reads_like_instructions(text: str) -> bool:
    return any(p.search(text) for p in _INSTRUCTIONS)


def parse(dom: str | bytes, max_bytes: int = 5 * 1024 * 1024) -> lxml.html.HtmlElement:
    raw = dom.encode("utf-8") if isinstance(dom, str) else dom
    if len(raw) > max_bytes:
        raise SnapshotTooLargeError(f"the DOM is {len(raw)} bytes; the limit is {max_bytes}")
    if not raw.strip():
        raise SnapshotError("the DOM is empty")
    parser = lxml.html.HTMLParser(
        remove_comments=True, remove_pis=True, no_network=True, huge_tree=False, encoding="utf-8"
    )
    try:
        root = lxml.html.document_fromstring(raw, parser=parser)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise SnapshotError(f"the DOM could not be parsed: {exc}") from exc
    if any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log):
        # libxml2 stops at 256 levels and drops the rest: refuse rather than store a part.
        raise SnapshotError("the DOM nests deeper than 255 elements; it was not stored")
    dropped = root.xpath("|".join(f"//{t}" for t in DROPPED_TAGS) + '|//*[@aria-hidden="true"]')
    for element in dropped:
        if element.getparent() is not None and (
            element.tag in DROPPED_TAGS or hidden_from_readers(element)
        ):
            element.drop_tree()
    for control in root.iter(*CONTROL_TAGS):  # "Overview" "Settings", not "OverviewSettings"
        if control.tag not in ("input", "img"):
            control.text = " " + (control.text or "")  # nor "stateCopy link to state"
        control.tail = " " + (control.tail or "")
    return root


def self_hidden(element: lxml.html.HtmlElement) -> bool:
    return (
        element.get("hidden") is not None
        or element.get(HIDDEN_MARK) is not None
        or bool(_HIDDEN_STYLE.search(element.get("style") or ""))
    )


def stable_id(element: lxml.html.HtmlElement) -> str | None:
    value: str | None = element.get("id")
    if value and _STABLE_ID.match(value) and not _GENERATED_ID.search(value):
        return value
    return None


def selector(element: lxml.html.HtmlElement) -> str:
    """A CSS selector for `element`: from its nearest ancestor with a stable id or test id."""
    parts: list[str] = []
    current: lxml.html.HtmlElement | None = element
    while current is not None and current.tag not in ("html", "body"):
        if ident := stable_id(current):
            parts.append(f"#{ident}")
            break
        if (test_id := current.get("data-testid")) and '"' not in test_id:
            parts.append(f'[data-testid="{test_id}"]')
            break
        parent = current.getparent()
        tag = str(current.tag)
        if parent is not None:
            same = [c for c in parent if c.tag == current.tag]
            if len(same) > 1:
                tag += f":nth-of-type({same.index(current) + 1})"
        parts.append(tag)
        current = parent
    return " > ".join(reversed(parts)) or "body"


def _is_container(element: lxml.html.HtmlElement) -> bool:
    if element.get(TITLE_MARK):
        return False  # a title leads the regions after it; as one itself it would lead none
    if _in_code(element):
        # A block of code is one unit: its lines (a div of one class each, in some viewers),
        # and whatever scrolls it (Retype's viewer, marked role=region), are not regions.
        return False
    if _frames_code(element):
        return False
    if element.tag in CONTAINER_TAGS or element.get("role") in CONTAINER_ROLES:
        return True
    if element.tag in CONTROL_TAGS or element.get("role") in CONTROL_ROLES:
        return False  # a control's label belongs to the text around it
    if stable_id(element) is not None or bool(element.get("data-testid")):
        return len(_WORD.findall(element.text_content())) >= NAMED_WORDS
    if element.tag in LANDMARK_TAGS:
        return (
            next(element.iterancestors("article", "section", "main", "aside", "nav"), None) is None
        )
    return element.tag == "div" and _repeated(element)


def _navigation(element: lxml.html.HtmlElement) -> bool:
    """Whether a region is the page's navigation: in a `nav` or `role=navigation`, or a sidebar,
    table of contents or menu (an `aside`, or named so by its class or id) that is mostly
    links, as docsify's sidebar is. Never the page's body or main content, whatever their
    class says (`<body class="sidebar-open">`)."""
    for at in (element, *element.iterancestors()):
        if at.tag == "nav" or at.get("role") == "navigation":
            return True
    if element.tag in ("body", "main", "article") or element.get("role") == "main":
        return False
    name = f"{element.get('class', '')} {element.get('id', '')}"
    named = _NAV_NAME.search(_CAMEL_WORD.sub(r"\1 \2", name))
    if element.tag != "aside" and not named:
        return False
    text = len(" ".join(element.text_content().split()))
    links = element.findall(".//a")
    linked = sum(len(" ".join(a.text_content().split())) for a in links)
    return len(links) >= 3 and linked >= NAV_LINK_SHARE * text


def _in_code(element: lxml.html.HtmlElement) -> bool:
    return next(element.iterancestors("pre", "code"), None) is not None


def _frames_code(element: lxml.html.HtmlElement) -> bool:
    """Whether a `div` or `figure` only frames one block of code: a viewer that scrolls it
    (Fumadocs' `role=region` around each `pre`), a wrapper with an id beside its copy button
    or its language's name. The code belongs to the section it is in, as a `pre` does. Not a
    tab panel or a dialog: a tab of code samples is a view switched in place."""
    if element.tag not in ("div", "figure") or element.get("role") in _SWITCHED:
        return False
    blocks = list(itertools.islice(element.iter("pre"), 2))
    if len(blocks) != 1:
        return False
    frame = len(_WORD.findall(element.text_content())) - len(
        _WORD.findall(blocks[0].text_content())
    )
    return frame <= FRAME_WORDS


def _repeated(element: lxml.html.HtmlElement) -> bool:
    """A classed block with at least `REPEATED - 1` siblings of the same tag and class."""
    classes = element.get("class")
    parent = element.getparent()
    if not classes or parent is None:
        return False
    alike = sum(1 for c in parent if c.tag == element.tag and c.get("class") == classes)
    return alike >= REPEATED


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = frozenset({"div", "p", "li", "tr", "br"})


def _labels(by_id: dict[str, lxml.html.HtmlElement], ids: str) -> tuple[str, ...]:
    """The text of the elements `ids` names (a tab panel's tab: "200" over a response's
    description)."""
    texts = (_heading_text(by_id[i]) for i in ids.split() if i in by_id)
    return tuple(t for t in texts if t)


def _tab_of(panel: lxml.html.HtmlElement) -> tuple[str, ...]:
    """The text of the tab a tab panel without `aria-labelledby` stands for: the tab at its
    place among its sibling panels, in the tab list just before them (Docusaurus' tabs: a
    response's "200" over its description), or the selected tab when only its panel is
    drawn."""
    parent = panel.getparent()
    if parent is None:
        return ()
    panels = [p for p in parent if isinstance(p.tag, str) and p.get("role") == "tabpanel"]
    for around in (parent, *itertools.islice(parent.iterancestors(), 2)):
        last = None  # the last tab list before the panels, not inside one of them
        for t in around.iterdescendants():
            if t in panels:
                break
            if t.get("role") == "tablist" and not any(p in panels for p in t.iterancestors()):
                last = t
        if last is None:
            continue
        tabs = [t for t in last.iterdescendants() if t.get("role") == "tab"]
        if len(tabs) == len(panels):
            tab = tabs[panels.index(panel)]
        elif len(panels) == 1:
            tab = next((t for t in tabs if t.get("aria-selected") == "true"), None)
        else:
            tab = None
        text = _heading_text(tab) if tab is not None else ""
        return (text,) if text else ()
    return ()


def _after_column(
    column: lxml.html.HtmlElement,
    before: list[tuple[float, str]],
    outline: list[tuple[float, str]],
) -> list[tuple[float, str]]:
    """What leads the blocks after a column (a block drawn beside another, marked by the
    capture): what led the column, and the heading the column opens with while it still
    stands (an operation's name over its description column) unless a column beside it has
    a heading of that level or above (a sidebar's "Contents" does not lead the page); not the
    headings further down it: "Responses" at the foot of a Docusaurus OpenAPI page's left
    column led the code samples and the request form drawn beside it."""
    headings = (e for e in column.iter() if isinstance(e.tag, str) and _heading_level(e))
    opening = next(((_heading_level(h), t) for h in headings if (t := _title(h))), None)
    if opening is None or opening not in outline:
        return before
    beside = (h for e in _columns_after(column) for h in e.iter(*_HEADINGS))
    if any(0 < _heading_level(h) <= opening[0] for h in beside):
        return before
    return outline[: outline.index(opening) + 1]


def _columns_after(column: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The columns the capture marked after `column`, beside it."""
    return [e for e in column.itersiblings() if e.get(COLUMN_MARK) is not None]


def _heading_level(element: lxml.html.HtmlElement) -> float:
    """1-6 for a heading, else 0. A line the capture marked as a title sits half a level below
    its mark: above the headings it leads, below a heading of its mark's level before it (an
    `h2` tag group over operations titled in bold over `h3`s keeps leading them)."""
    if element.tag in _HEADINGS:
        return int(element.tag[1])
    mark = element.get(TITLE_MARK) or ""
    return int(mark) + 0.5 if mark in ("1", "2", "3", "4", "5", "6") else 0


def _heading_text(element: lxml.html.HtmlElement) -> str:
    """A heading's words as the page shows them: blocks, and boxes set apart, are words
    apart, and invisible characters are gone (the zero-width space of Docusaurus' anchor
    link, "Responses\u200b", made a heading path no query wrote). A button beside its words
    is not one of them (as the Markdown writes it: `heading_words`), nor a permalink (Sphinx's
    "¶")."""
    return _shown_words(element, buttons=False) or _shown_words(element, buttons=True)


def _shown_words(element: lxml.html.HtmlElement, buttons: bool) -> str:
    """The element's words as the page shows them, without its permalinks' (nor its buttons',
    unless `buttons`)."""
    parts: list[str] = []

    def walk(e: lxml.html.HtmlElement) -> None:
        parts.append(e.text or "")
        for child in e:
            if (
                isinstance(child.tag, str)
                and (buttons or not is_button(child))
                and not is_permalink(child)
            ):
                if child.tag in _BLOCKS or child.get(APART_MARK) is not None:
                    parts.append(" ")
                walk(child)
            parts.append(child.tail or "")

    walk(element)
    return collapse("".join(parts))


def _title(element: lxml.html.HtmlElement) -> str:
    """A heading's words, or those of the line it stands over when it has none (as the
    Markdown writes it: `title_line`)."""
    if text := _heading_text(element):
        return text
    line = title_line(element) if element.tag in _HEADINGS else None
    return _heading_text(line) if line is not None else ""


_INNER_CONTROLS = (
    ".//button | .//select | .//input | .//textarea | .//*[@aria-expanded] | .//*[@role='button'"
    " or @role='tab' or @role='option' or @role='combobox' or @role='listbox' or @role='menuitem']"
)


def _toggle(element: lxml.html.HtmlElement) -> bool:
    """A control that shows and hides a block (open or not: the regions it leads read the
    same either way), not one that opens a menu or list box over the page."""
    if element.tag == "summary":
        return True
    return (
        element.get("aria-expanded") in ("true", "false")
        and element.get("aria-haspopup") in (None, "false")
        and element.get("role") not in ("combobox", "listbox", "menu")
    )


def _disclosure_label(element: lxml.html.HtmlElement) -> str | None:
    """The label of the toggle that starts `element`, before any other text and outside the
    containers inside it (Swagger UI's operation "GET /pets", a button over the block holding
    its parameters and responses; a `details`' summary): what the block discloses is about
    it."""

    def walk(at: lxml.html.HtmlElement) -> str | bool | None:  # label, text first, nothing yet
        if (at.text or "").strip():
            return False
        for child in at:
            if not isinstance(child.tag, str):
                pass
            elif _toggle(child):
                label = _heading_text(child)
                # A header with controls of its own (a status code's picker, "Try It!") is
                # no label: its words are theirs. A link inside it (a deep link) is.
                inner = child.xpath(_INNER_CONTROLS)
                return label if 0 < len(label) <= MAX_LABEL and not inner else False
            elif _is_container(child) and not _wraps_heading(child):
                if child.text_content().strip():
                    return False  # a block of its own comes first, and leads itself
            elif (found := walk(child)) is not None:
                return found
            if (child.tail or "").strip():
                return False
        return None

    found = walk(element)
    return found if isinstance(found, str) else None


def _titles(outline: Sequence[tuple[float, str]]) -> tuple[str, ...]:
    return tuple(title for _, title in outline)


def _wraps_heading(element: lxml.html.HtmlElement) -> bool:
    """Whether all the text of `element` is one heading's (an id'd anchor around an `h3`, or
    around a line the capture marked as a title), its permalinks aside (Starlight's wrapper of
    each heading and the link beside it)."""
    headings = (e for e in element.iter() if isinstance(e.tag, str) and _heading_level(e))
    heading = next(headings, None)
    if heading is None:
        return False
    return _shown_words(element, buttons=True) == _shown_words(heading, buttons=True)


def _markdown(element: lxml.html.HtmlElement) -> str:
    return html_to_markdown(element, skip_navigation=False, controls=True)


def regions(
    dom: str | bytes, max_bytes: int = 5 * 1024 * 1024, url: str | None = None
) -> list[Region]:
    """The snapshot's regions in document order (empty ones left out); not the pager to the
    pages beside the one at `url` (`ingest.pager`)."""
    root = parse(dom, max_bytes)
    body = root.find("body")
    if body is None:
        body = root
    for block in pager(body, url):
        block.drop_tree()
    elements = [e for e in body.iter() if isinstance(e.tag, str)]
    hidden: set[lxml.html.HtmlElement] = set()
    injected: set[lxml.html.HtmlElement] = set()
    for element in elements:  # parents come before their children
        if self_hidden(element) or element.getparent() in hidden:
            hidden.add(element)
            if self_hidden(element) and reads_like_instructions(element.text_content()):
                injected.add(element)
    # Where each region starts: its scope and the headings above it, read before any is cut.
    # A heading inside a container leads only what follows it in that container, and one in a
    # hidden block only that block; hidden ones count there, so a panel's context is the same
    # whether it was open or not. A container that holds nothing but a heading (an anchor's
    # wrapper) is not one: its heading leads what follows in the container around it. The
    # page's main content is led by its own headings, not by the chrome's before it (an
    # assistant panel's "How can I help you today?"). A tab panel's tab, named by
    # aria-labelledby or else the tab at its place (`_tab_of`), is part of its context and of
    # the regions' inside it ("Responses > 200 > Schema"). A column's headings lead the
    # columns beside it only as `_after_column` says, and a column after one whose headings
    # stop there starts a region (its words are not in their sections either).
    by_id = {e.get("id"): e for e in elements if e.get("id")}
    starts: list[tuple[lxml.html.HtmlElement, str, tuple[str, ...]]] = [(body, "body", ())]
    outline: list[tuple[float, str]] = []  # a title marked by the capture sits at half levels
    # Each block entered whose headings lead only inside it: the outline before it, and
    # whether it is a column (its opening heading may lead on).
    entered: list[tuple[lxml.html.HtmlElement, list[tuple[float, str]], bool]] = []
    apart: set[lxml.html.HtmlElement] = set()  # columns that start a region
    for element in elements[1:]:
        while entered and entered[-1][0] not in element.iterancestors():
            left, before, column = entered.pop()
            if not column:
                outline = before
            elif (kept := _after_column(left, before, outline)) != outline:
                apart.update(_columns_after(left))
                outline = kept
        container = _is_container(element)
        column = element.get(COLUMN_MARK) is not None and not container
        if ((container or element in apart) and not _wraps_heading(element)) or (
            element in injected
        ):
            main = element.tag == "main" or element.get("role") == "main"
            context = () if main else _titles(outline)
            tab: tuple[str, ...] = ()
            if element.get("role") == "tabpanel":
                labelled = element.get("aria-labelledby")
                tab = _labels(by_id, labelled) if labelled else _tab_of(element)
            starts.append((element, selector(element), context + tab))
            entered.append((element, list(outline), column))
            if main:
                outline = []
            elif label := _disclosure_label(element) or " ".join(tab):  # leads those inside
                outline = [*outline, ((outline[-1][0] if outline else 0) + 0.5, label)]
        elif (element in hidden and element.getparent() not in hidden) or element.get(
            TITLED_MARK
        ) is not None:
            entered.append((element, list(outline), False))
        elif column:
            entered.append((element, list(outline), True))
        if level := _heading_level(element):
            outline = [(lv, t) for lv, t in outline if lv < level]
            if title := _title(element):
                outline.append((level, title))
    # Innermost first: a container's Markdown is taken, then it is cut out of its parent.
    found: list[Region] = []
    for element, scope, headings in reversed(starts):
        navigation = _navigation(element)
        text = _markdown(element)
        inside_injection = any(a in injected for a in element.iterancestors())
        shut = (
            ()
            if element in hidden
            else tuple(
                title for e in element.iter(*_HEADINGS) if e in hidden and (title := _title(e))
            )
        )
        if element is not body:
            element.drop_tree()  # keeps the text after it (its tail) in the parent
        if text:
            found.append(
                Region(
                    scope=scope,
                    heading_path=headings,
                    markdown=text,
                    hidden=element in hidden,
                    injection=element in injected or inside_injection,
                    navigation=navigation,
                    hidden_headings=shut,
                )
            )
    found.reverse()
    return [part for region in found for part in _sections(region)]


_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$")


def _sections(region: Region) -> list[Region]:
    """A region with no id of its own (scope `body`, `body > main`, …) cut at its headings, so
    that a change under one heading supersedes only that section, not the page. Each section's
    scope is the region's and its heading; the headings above it become its context."""
    if region.scope.startswith(("#", "[")):
        return [region]
    parts: list[tuple[tuple[str, ...], str, list[str]]] = [((), "", [])]
    outline: list[tuple[int, str]] = []
    fenced = False
    for line in region.markdown.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading:
            level, title = len(heading[1]), heading[2]
            outline = [(lv, t) for lv, t in outline if lv < level]
            parts.append((_titles(outline), title, [line]))
            outline.append((level, title))
        else:
            parts[-1][2].append(line)
    out: list[Region] = []
    taken: dict[str, int] = {}
    for above, title, lines in parts:
        text = "\n".join(lines).strip()
        if not text:
            continue
        scope = region.scope
        if title:
            n = taken[title] = taken.get(title, 0) + 1
            scope = f"{region.scope} >> {title}" + (f" ({n})" if n > 1 else "")
        out.append(
            Region(
                scope=scope,
                heading_path=region.heading_path + above,
                markdown=text,
                hidden=region.hidden,
                injection=region.injection,
                navigation=region.navigation,
                hidden_headings=region.hidden_headings,
            )
        )
    return out
