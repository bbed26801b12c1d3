"""A DOM subtree written as Markdown with its structure: headings, fenced code with its exact
text, tables, lists, definition lists (API signatures become headings), block quotes.

Only what Markdown needs is escaped (a paragraph line that would read as a heading, a fence or
a table row); code keeps every character. Emphasis is not marked up: it carries nothing a
search needs, and marking it is where other converters lose spaces and add `\\_` escapes.

`keep`, when given, decides which text blocks are written: the page extractor passes the text
that a main-content extractor kept. Inside `regions` (the main content) code blocks are written
whatever `keep` says, and with `trust_region` text blocks too, unless in containers named
like boilerplate; a heading `keep` did not accept is written there where the text right under
it is. Any heading is written only when something is written under it.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import lxml.html

from ingest.tables import table_blocks

Keep = Callable[[str], bool]
Kind = Literal["heading", "text", "list", "code", "table", "restore", "dropped"]

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
BLOCKS = frozenset(
    {
        *HEADINGS,
        *("address", "article", "aside", "blockquote", "body", "caption", "center", "dd"),
        *("details", "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure"),
        *("footer", "form", "header", "hgroup", "hr", "html", "legend", "li", "main", "nav"),
        *("ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th"),
        *("thead", "tr", "ul", "menu"),
    }
)
SKIPPED = frozenset(
    {
        *("script", "style", "template", "head", "title", "meta", "link", "svg"),
        *("math", "canvas", "iframe", "object", "embed", "button", "select", "input"),
        *("textarea", "option", "video", "audio", "map", "img", "picture", "source", "rt", "rp"),
    }
)
CODE = frozenset({"code", "tt", "kbd", "samp"})
CONTROLS = frozenset({"button", "select", "option"})
# Set by the SPA capture's browser on an inline element its layout shows apart from the one
# before it (a flex item): its words are not run into the neighbour's.
APART_MARK = "data-lore-apart"
# Line-number columns and permalink anchors are not content.
_NOISE_CLASSES = frozenset({"linenos", "lineno", "listing_lines", "headerlink"})
# Boxes whose headings lead only the box: the text after the box belongs to the heading before it.
_BOXES = frozenset(
    {
        *("admonition", "note", "tip", "warning", "caution", "important", "sidebar"),
        *("seealso", "danger", "hint", "attention", "callout", "versionadded"),
    }
)
_BOILERPLATE = re.compile(
    r"(^|[-_\s])(comments?|share|sharing|social|related|newsletter|subscribe|subscription|tags?"
    r"|byline|author|breadcrumbs?|advert\w*|ads?|promo\w*|footer|cookies?|sponsor\w*)($|[-_\s])",
    re.I,
)
_BOILERPLATE_TAGS = frozenset({"aside", "footer", "form", "figcaption"})
_LANGUAGE = re.compile(r"^(?:language|lang|highlight|brush)[-:]?([A-Za-z0-9_+#.-]+)$")
_NO_LANGUAGE = frozenset({"default", "none", "text", "plain", "plaintext", "notranslate"})
_SPACE = re.compile(r"[ \t\n\r\f\v\u00a0]+")
# Soft hyphens, zero-width spaces, word joiners, BOMs: invisible hints that split words for a
# search engine ("Mit­tel­al­ter").
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u2060\ufeff"))
_BREAK = "\x00"
_NEEDS_ESCAPE = re.compile(r"^(#|`{3}|~{3}|\|)")
_SIGNATURE = re.compile(r"^(.{1,120}?)\(.*\)\s*(->.*)?$", re.S)
MAX_DEPTH = 120  # deeper subtrees are written as plain text (parsers nest 10 MB of divs)
MAX_HEADING = 500  # characters; a longer "heading" is a paragraph in heading markup


def classes(element: lxml.html.HtmlElement) -> set[str]:
    return set(str(element.get("class") or "").split())


def is_permalink(element: lxml.html.HtmlElement) -> bool:
    """A link within the page that shows nothing to read: a heading's ¶, §, #, an icon, with
    whatever it says to screen readers alone (Starlight's "Section titled “Usage”" beside each
    heading)."""
    if element.tag != "a" or not str(element.get("href") or "").startswith("#"):
        return False
    text = _seen_text(element).strip()
    return len(text) <= 3 and not any(c.isalnum() for c in text)


# Text only screen readers get (Tailwind, Bootstrap, WordPress and app names for it).
_SCREEN_READER = frozenset(
    {
        *("sr-only", "screenreader-only", "screen-reader-only", "screen-reader-text"),
        *("visually-hidden", "visuallyhidden", "a11y-hidden", "assistive-text"),
    }
)


def _spoken_only(element: lxml.html.HtmlElement) -> bool:
    """Said to screen readers alone (not Tailwind's `sr-only md:not-sr-only`, shown on wide
    screens)."""
    names = classes(element)
    return bool(names & _SCREEN_READER) and not any(n.endswith("not-sr-only") for n in names)


def hidden_from_readers(element: lxml.html.HtmlElement) -> bool:
    """`aria-hidden`: what it keeps from screen readers (an icon, a line said twice) is not
    content. But a popup's library sets it on the rest of the page while the popup is open,
    marked `inert` (Headless UI) or `data-aria-hidden` (Radix's aria-hidden): that is the page,
    only behind the popup."""
    return (
        element.get("aria-hidden") == "true"
        and element.get("inert") is None
        and element.get("data-aria-hidden") is None
    )


def _seen_text(element: lxml.html.HtmlElement) -> str:
    if _spoken_only(element) or element.get("hidden") is not None or hidden_from_readers(element):
        return ""
    parts = [element.text or ""]
    for child in element:
        parts += [_seen_text(child) if isinstance(child.tag, str) else "", child.tail or ""]
    return "".join(parts)


# The frame a site draws around every page, which says nothing of the page: a skip link, an
# "Edit this page" link, the title of an on-page table of contents, copying the page, a search
# launcher and its shortcut ("Search… Ctrl K"). Whole names only: an element saying this and
# nothing more.
_CHROME = re.compile(
    r"^((skip|jump) to\b.{0,40}|skip (navigation|nav|links)"
    r"|(edit|improve) (this|the) (page|doc|document|article)( on \w+)?"
    r"|edit (this page |page )?on (github|gitlab|bitbucket|codeberg)|edit page"
    r"|(view|show) (page )?source|on this page|in this article|page contents"
    r"|copy (this )?(page|(as )?markdown)"
    r"|(search\b.{0,30}?)?\s*(ctrl|⌘|⌃|cmd|command)\s*\+?\s*k)$",
    re.I,
)
# A generator's credit ("Powered by Retype", "Generated using TypeDoc", "Made with Material
# for MkDocs"): a short line that links to it.
_CREDIT = re.compile(
    r"^(powered|generated|built|made|created|published|hosted) (by|with|using)\b", re.I
)
_CHROME_TAGS = frozenset({"a", "button", "p", "div", "span", "small", "li", "summary", "h2", "h3"})
_CHROME_ELEMENTS = 12  # more elements than this in it: more than chrome
# In an app's DOM, where buttons are written: one that copies, opens the menu or switches the
# theme (as links, "Copy" and "Copied" are Rust's names of a trait and a type).
_CHROME_CONTROL = re.compile(
    r"^(copy|copied!?|menu|☰|(toggle|open|close) (the )?(menu|navigation|sidebar)"
    r"|(switch to |toggle )?(light|dark|system|auto)( mode| theme)?|toggle (dark mode|theme))$",
    re.I,
)


def is_chrome(element: lxml.html.HtmlElement, controls: bool = False) -> bool:
    """Whether the element is the site's frame, not the page (`_CHROME`, `_CREDIT`); with
    `controls` (an app's DOM, whose buttons are written), also a menu or theme button."""
    if element.tag not in _CHROME_TAGS:
        return False
    if sum(1 for _ in itertools.islice(element.iter(), _CHROME_ELEMENTS + 1)) > _CHROME_ELEMENTS:
        return False
    text = collapse(_seen_text(element))
    if not text or len(text) > 120:
        return False
    if _CHROME.match(text):
        return True
    linked = element.tag == "a" or element.find(".//a") is not None
    if _CREDIT.match(text) and len(text.split()) <= 12 and linked:
        return True
    return controls and is_button(element) and bool(_CHROME_CONTROL.match(text))


def is_icon_control(element: lxml.html.HtmlElement) -> bool:
    """A button that shows only an icon, its name said to screen readers alone ("Copy link to
    username", "Close"): what it does, not what the page says."""
    if element.tag != "button" and element.get("role") != "button":
        return False
    spoken = any(_spoken_only(e) for e in element.iterdescendants())
    return spoken and not collapse(_seen_text(element))


def collapse(text: str) -> str:
    """Text as a reader sees it: white space collapsed, invisible hints gone, composed (NFC)."""
    return unicodedata.normalize("NFC", _SPACE.sub(" ", text.translate(_INVISIBLE))).strip()


# What may stand under an empty heading as its title: a short line of inline words, not a
# paragraph, list, table, code, a control or a block of its own with headings.
_LINE_TAGS = frozenset({"div", "span", "a", "code", "strong", "b", "em"})
_NOT_IN_LINE = (
    ".//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6 | .//p | .//ul | .//ol | .//dl | .//table"
    " | .//pre | .//blockquote | .//li | .//button | .//input | .//select | .//textarea"
)
MAX_TITLE_WORDS = 12


def is_button(element: lxml.html.HtmlElement) -> bool:
    return bool(element.tag == "button" or element.get("role") == "button")


def title_line(heading: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The line a heading with no words of its own stands over, which the page shows as its
    title: Zudoku heads an operation with no summary by an `h2` that holds only a permalink,
    then "GET /2.0/users/{username}" in the line after it. The next element, with nothing
    but space between: a `div` or inline element of 1 to `MAX_TITLE_WORDS` words, not ending
    like a sentence or a label, holding no paragraph, list, table, code or control. The
    caller decides that the heading has no words."""
    if (heading.tail or "").strip():
        return None
    line = heading.getnext()
    while line is not None and not isinstance(line.tag, str):  # a comment
        if (line.tail or "").strip():
            return None
        line = line.getnext()
    if line is None or line.tag not in _LINE_TAGS or line.xpath(_NOT_IN_LINE):
        return None
    text = collapse(line.text_content())
    words = len(text.split())
    if not 0 < words <= MAX_TITLE_WORDS or len(text) > 160 or text[-1] in ".:;,!?":
        return None
    return line


@dataclass
class Block:
    kind: Kind
    markdown: str
    level: int = 0  # headings
    vetted: bool = True  # a heading `keep` did not decide: written only above kept text
    links: bool = False  # text that is mostly links (it does not vouch for a heading)
    structure: bool = False  # a heading of trusted content: written even with nothing under it


@dataclass
class _Inline:
    markdown: list[str] = field(default_factory=list)
    plain: list[str] = field(default_factory=list)
    linked: int = 0  # characters of link text

    def add(self, markdown: str, plain: str | None = None, link: bool = False) -> None:
        self.markdown.append(markdown)
        self.plain.append(markdown if plain is None else plain)
        if link:
            self.linked += len(collapse(self.plain[-1]))


# Blocks that start a new line inside preformatted text.
_LINE_BLOCKS = frozenset({"div", "p", "li", "tr"})
# A highlighter's line, a `span` ("line": Shiki's; Prism's "token-line"): a line of its own even
# with no line break between them (Fumadocs' OpenAPI pages draw Shiki's lines as a flex column,
# newlines dropped).
_CODE_LINE = re.compile(r"^(?:[\w-]+[-_])?line$", re.I)
# A code viewer's line numbers and prompts, drawn beside the code and not part of it: classes
# such as "sl-code-highlight__ln", "line-numbers", "gutter", Tailwind's "select-none".
_GUTTER = re.compile(r"(?:^|[-_])(?:ln|line-?num(?:ber)?s?|gutter)$|(?:^|[-_:])select-none$", re.I)


def _code_span(text: str) -> str:
    text = collapse(text)
    if not text:
        return ""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _language(pre: lxml.html.HtmlElement) -> str:
    candidates = [pre, *pre.iterchildren("code")]
    parent = pre.getparent()
    for _ in range(2):
        if parent is None:
            break
        candidates.append(parent)
        parent = parent.getparent()
    for element in candidates:
        if lang := element.get("data-lang"):
            return str(lang)
        for name in sorted(classes(element)):
            match = _LANGUAGE.match(name)
            if match and match.group(1).lower() not in _NO_LANGUAGE:
                return match.group(1)
        if element is pre and "rust" in classes(element):
            return "rust"
    return ""


def fenced(code: str, language: str = "") -> str:
    """A fenced block holding `code` exactly: the fence is longer than any backtick run that
    starts a line of the code."""
    runs = [len(m.group(1)) for m in re.finditer(r"^[ \t]*(`+)", code, re.M)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}{language}\n{code}\n{fence}"


def _escape_line(line: str) -> str:
    return "\\" + line if _NEEDS_ESCAPE.match(line) else line


class MarkdownWriter:
    """Walks a subtree once, collecting blocks; `markdown()` joins the ones to keep."""

    def __init__(
        self,
        keep: Keep | None = None,
        regions: Sequence[lxml.html.HtmlElement] = (),
        skip_navigation: bool = True,
        trust_region: bool = False,
        controls: bool = False,
    ) -> None:
        self.keep = keep
        self.regions = frozenset(regions)
        # Inside a trusted region, text `keep` refused is written all the same unless it sits
        # in a container named like boilerplate.
        self.trust_region = trust_region
        self.inside = keep is None or not regions  # structure is written unvetted here
        # Never skipped: broken markup can put the content inside a <nav>.
        self._around = {a for r in regions for a in r.iterancestors()}
        self._titles: set[lxml.html.HtmlElement] = set()  # lines written as empty headings' text
        self.skip_navigation = skip_navigation
        self.controls = controls  # write the labels of buttons and menus (an app's DOM)
        self.blocks: list[Block] = []
        self.stack: list[tuple[int, str]] = []  # open headings (level, text)
        self._inline = _Inline()
        self._quote = 0
        self._signature_base: list[int] = []  # heading level under which a <dl> lists APIs
        self._links = 0  # open <a> elements
        self._containers: list[lxml.html.HtmlElement] = []  # open block elements
        self._boilerplate: dict[lxml.html.HtmlElement, bool] = {}

    # ------------------------------------------------------------------ walking

    def write(self, element: lxml.html.HtmlElement) -> MarkdownWriter:
        self._node(element, 0)
        self._flush()
        return self

    def skipped(self, element: lxml.html.HtmlElement) -> bool:
        tag = element.tag
        if element in self._around:
            return False
        if element in self._titles:
            return True
        if hidden_from_readers(element):
            return True
        if tag in SKIPPED and not (self.controls and tag in CONTROLS):
            return True
        if element.get("hidden") is not None:
            return True
        if self.skip_navigation and (tag == "nav" or element.get("role") == "navigation"):
            return True
        if self.controls and is_icon_control(element):
            return True
        if is_chrome(element, self.controls):
            return True
        return bool(classes(element) & _NOISE_CLASSES) or is_permalink(element)

    def _node(self, element: lxml.html.HtmlElement, depth: int) -> None:
        tag = element.tag
        if not isinstance(tag, str) or self.skipped(element):
            return
        if element.get(APART_MARK) is not None:  # laid out apart from the element before it
            self._text(" ")
        if element in self.regions and not self.inside:
            self._flush()
            self.inside = True
            self._node(element, depth)
            self._flush()
            self.inside = False
            return
        if depth > MAX_DEPTH:
            self._flush()
            self._text(element.text_content())
            self._flush()
            return
        if tag in HEADINGS:
            text = self.heading_words(element)
            line = None if text else title_line(element)
            if line is not None:
                text = self.plain(line)
            if len(text) > MAX_HEADING:  # a paragraph marked up as a heading
                self._flush()
                self._children(element, depth)
                self._flush()
            elif (
                (vetted := self._kept(text))
                or line is not None  # the extractor reads a line, not a heading: unvetted
                or (self.inside and not any(self._named_boilerplate(c) for c in self._containers))
            ):
                self.heading(int(tag[1]), text, vetted)
                if line is not None and text:
                    self._titles.add(line)  # written once, as the heading's words
        elif tag == "pre":
            self._pre(element)
        elif tag in ("ul", "ol", "menu"):
            self._list(element, depth)
        elif tag == "dl":
            self._definitions(element, depth)
        elif tag == "dt" and self._signature_base and self.inside and _is_signature(element):
            self.heading(min(6, self._signature_base[-1] + 1), self._signature(element))
        elif tag == "table":
            self._table(element, depth)
        elif tag == "br":
            self._inline.add(_BREAK, _BREAK)
        elif tag in CODE:
            text = self.plain(element)
            self._inline.add(_code_span(text), text)
        elif tag == "blockquote":
            self._flush()
            self._quote += 1
            self._children(element, depth)
            self._flush()
            self._quote -= 1
        elif tag in BLOCKS:
            self._flush()
            box = bool(classes(element) & _BOXES) or tag == "aside"
            before = list(self.stack)
            self._containers.append(element)
            self._children(element, depth)
            self._flush()
            self._containers.pop()
            if box:
                self._restore(before)
        elif tag == "a":
            self._links += 1
            self._children(element, depth)
            self._links -= 1
        else:
            self._children(element, depth)

    def _children(self, element: lxml.html.HtmlElement, depth: int) -> None:
        if element.text:
            self._text(element.text)
        for child in element:
            self._node(child, depth + 1)
            if child.tail:
                self._text(child.tail)

    def _text(self, text: str) -> None:
        self._inline.add(text, link=self._links > 0)

    def raw_text(self, element: lxml.html.HtmlElement, buttons: bool = True) -> str:
        """The element's text as written, without skipped parts (permalinks, line numbers), a
        `<br>` as a line break, and a block (a code viewer's `<div>` per line) or a
        highlighter's line on a line of its own; without `buttons`, the buttons' words left
        out."""
        parts: list[str] = []

        def walk(node: lxml.html.HtmlElement) -> None:
            if node.text:
                parts.append(node.text)
            for child in node:
                if (
                    isinstance(child.tag, str)
                    and not self.skipped(child)
                    and (buttons or not is_button(child))
                ):
                    line = child.tag in _LINE_BLOCKS or (
                        child.tag == "span" and any(map(_CODE_LINE.match, classes(child)))
                    )
                    starts_line = line and parts and parts[-1][-1] != "\n"
                    if child.tag == "br" or starts_line:
                        parts.append("\n")
                    elif (
                        child.get(APART_MARK) is not None and parts and not parts[-1][-1:].isspace()
                    ):
                        parts.append(" ")  # laid out apart: "GET" "/pets" in a flex row
                    if not any(_GUTTER.search(c) for c in classes(child)):
                        walk(child)
                if child.tail:
                    parts.append(child.tail)

        walk(element)
        return "".join(parts)

    def plain(self, element: lxml.html.HtmlElement) -> str:
        """The element's text as a reader sees it on one line."""
        return collapse(self.raw_text(element))

    def heading_words(self, element: lxml.html.HtmlElement) -> str:
        """A heading's text on one line: a button inside it beside its words (Retype's "Copy"
        page action in each `h1`) is not one of them; a heading that is all button (an
        accordion's) keeps the button's."""
        return collapse(self.raw_text(element, buttons=False)) or self.plain(element)

    # ------------------------------------------------------------------ blocks

    def _kept(self, text: str) -> bool:
        if self.keep is None or self.keep(text):
            return True
        if not (self.inside and self.trust_region):
            return False
        return not any(self._named_boilerplate(c) for c in self._containers)

    def _named_boilerplate(self, element: lxml.html.HtmlElement) -> bool:
        """Whether a container inside the region is boilerplate by its name (comments,
        sharing, related links, tags, bylines, ads, footers) or its tag (an aside, a footer, a
        form, a picture's caption)."""
        if element not in self._boilerplate:
            names = f"{element.get('class') or ''} {element.get('id') or ''}"
            inside = any(a in self.regions for a in element.iterancestors())
            named = element.tag in _BOILERPLATE_TAGS or bool(_BOILERPLATE.search(names))
            self._boilerplate[element] = inside and named
        return self._boilerplate[element]

    def _emit(self, kind: Kind, markdown: str, level: int = 0) -> None:
        self.blocks.append(Block(kind, markdown, level))

    def _flush(self) -> None:
        inline, self._inline = self._inline, _Inline()
        if not inline.markdown:
            return
        lines = [collapse(ln) for ln in "".join(inline.markdown).split(_BREAK)]
        lines = [_escape_line(ln) for ln in lines if ln]
        if not lines:
            return
        plain = collapse("".join(inline.plain).replace(_BREAK, " "))
        if not self._kept(plain):
            self._emit("dropped", "")
            return
        prefix = "> " * self._quote
        links = inline.linked > 0.5 * len(plain)
        self.blocks.append(Block("text", "\n".join(prefix + ln for ln in lines), links=links))

    def heading(self, level: int, text: str, vetted: bool = True) -> None:
        """Open a heading (`vetted`: `keep` accepted it or no filter applies)."""
        self._flush()
        if not text:
            return
        if re.search(r"\s#+$", text) or text.startswith("#"):
            text = text.replace("#", "\\#")
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, text))
        trusted = self.inside and (self.keep is None or self.trust_region)
        self.blocks.append(
            Block("heading", f"{'#' * level} {text}", level, vetted, structure=trusted)
        )

    def _restore(self, before: list[tuple[int, str]]) -> None:
        """After a box or an API list: what follows belongs to the heading before it again."""
        if self.stack == before:
            return
        self.stack = list(before)
        if before:
            level, text = before[-1]
            self._emit("restore", f"{'#' * level} {text}", level)

    def _pre(self, element: lxml.html.HtmlElement) -> None:
        self._flush()
        # A button drawn inside the block ("Copy": Storybook's in the `pre` around its code) is
        # the viewer's, not the code's.
        code = self.raw_text(element, buttons=False).replace("\r\n", "\n").replace("\r", "\n")
        code = code.removeprefix("\n").rstrip()
        if code.strip() and (self.inside or self._kept(code)):
            self._emit("code", fenced(code, _language(element)))

    def _list(self, element: lxml.html.HtmlElement, depth: int) -> None:
        self._flush()
        ordered = element.tag == "ol"
        start = str(element.get("start") or "1")
        number = int(start) if start.isdigit() else 1
        lines: list[str] = []
        dropped = written = False
        links = True
        for item in element:
            if not isinstance(item.tag, str) or self.skipped(item):
                continue
            if item.tag != "li":  # stray content between items
                self._node(item, depth + 1)
                continue
            marker = f"{number}." if ordered else "-"
            number += 1
            pad = " " * (len(marker) + 1)
            sub = self._sub()
            sub._containers.append(item)
            sub._children(item, depth + 1)
            sub._flush()
            first = True
            for block in sub.blocks:
                if block.kind in ("text", "list"):
                    links = links and block.links
                if block.kind == "text":
                    for line in block.markdown.split("\n"):
                        lines.append(f"{marker} {line}" if first else f"{pad}{line}")
                        first = False
                elif block.kind == "list":
                    if first:
                        lines.append(marker)
                        first = False
                    lines.extend(f"{pad}{line}" for line in block.markdown.split("\n"))
                elif block.kind == "dropped":
                    dropped = True
                else:  # code, tables, headings: a block of their own, the list resumes
                    if lines:
                        self.blocks.append(Block("list", "\n".join(lines), links=links))
                        lines, links = [], True
                    self.blocks.append(block)
                    written = True
            self.stack = sub.stack
        if lines:
            self.blocks.append(Block("list", "\n".join(lines), links=links))
        elif dropped and not written:
            self._emit("dropped", "")

    def _sub(self) -> MarkdownWriter:
        sub = MarkdownWriter(
            self.keep, (), self.skip_navigation, self.trust_region, controls=self.controls
        )
        sub.regions, sub.inside, sub._around = self.regions, self.inside, self._around
        sub._containers, sub._boilerplate = list(self._containers), self._boilerplate
        sub.stack = list(self.stack)
        sub._signature_base = list(self._signature_base)
        return sub

    def _definitions(self, element: lxml.html.HtmlElement, depth: int) -> None:
        self._flush()
        before = list(self.stack)
        self._signature_base.append(self.stack[-1][0] if self.stack else 1)
        self._children(element, depth)
        self._flush()
        self._signature_base.pop()
        self._restore(before)

    def _signature(self, dt: lxml.html.HtmlElement) -> str:
        """An API signature as a heading: `json.dumps()` for Sphinx's `json.dumps(obj, *, …)`."""
        names = dt.xpath(".//*[contains(@class,'sig-prename') or contains(@class,'sig-name')]")
        if names:
            name = "".join(self.plain(n) for n in names)
            paren = dt.xpath(".//*[contains(@class,'sig-paren')]")
            return name + ("()" if paren else "")
        text = self.plain(dt)
        match = _SIGNATURE.match(text)
        if match:
            return match.group(1).strip() + "()"
        return text[:200]

    def _table(self, element: lxml.html.HtmlElement, depth: int) -> None:
        self._flush()
        rows = _rows(element)
        if rows is None:  # a layout table: its cells are ordinary content
            self._children(element, depth)
            self._flush()
            return
        caption = element.find("caption")
        if caption is not None:
            self._text(self.plain(caption))
            self._flush()
        texts: list[list[str]] = []
        for row in rows:
            cells: list[str] = []
            for cell in row:
                sub = self._sub()
                sub.keep = None
                sub._children(cell, depth + 1)
                sub._flush()
                text = " ".join(b.markdown for b in sub.blocks if b.kind == "text")
                span = str(cell.get("colspan") or "1")
                cells += [text] + [""] * (min(int(span), 50) - 1 if span.isdigit() else 0)
            texts.append(cells)
        texts = [r for r in texts if any(c.strip() for c in r)]
        if not texts:
            return
        if not self._kept(collapse(" ".join(self.plain(c) for row in rows for c in row))):
            return
        for block in table_blocks(texts):
            self._emit("table", block)

    # ------------------------------------------------------------------ output

    def markdown(self) -> str:
        return "\n\n".join(b.markdown for b in finish(self.blocks))


def _is_signature(dt: lxml.html.HtmlElement) -> bool:
    """A definition term that names an API (Sphinx, Javadoc, rustdoc): it has an anchor id or a
    signature class."""
    return bool(dt.get("id")) or any(c.startswith("sig") for c in classes(dt))


_LAYOUT_INSIDE = (
    ".//table|.//pre|.//ul|.//ol|.//dl|.//blockquote|.//h1|.//h2|.//h3|.//h4|.//h5|.//h6"
)


def _rows(table: lxml.html.HtmlElement) -> list[list[lxml.html.HtmlElement]] | None:
    """The cells of a data table, row by row; None for a layout table (nested tables, code,
    lists or headings in cells, one column, or cells of page-long text)."""
    if table.get("role") in ("presentation", "none") or table.xpath(_LAYOUT_INSIDE):
        return None
    rows = [
        [c for c in tr if c.tag in ("td", "th")]
        for tr in table.iter("tr")
        if tr.getparent() is table or tr.getparent().getparent() is table
    ]
    rows = [r for r in rows if r]
    if not rows or max(len(r) for r in rows) < 2:
        return None
    if any(len(c.text_content()) > 400 for r in rows for c in r):
        return None
    return rows


def finish(blocks: list[Block]) -> list[Block]:
    """Blocks to write: a heading that `keep` did not vet only where the text right under it was
    kept and is not a list of links; a restore only where content follows it; any other heading
    only where something is written under it (before the next heading of its level or above),
    or where it is the structure of trusted content (a list of API items with no text of their
    own); a long vetted heading with nothing under it as text."""
    out: list[Block] = []
    for i, block in enumerate(blocks):
        if block.kind == "dropped":
            continue
        if block.kind == "restore":
            after = next((b for b in blocks[i + 1 :] if b.kind != "restore"), None)
            if after is None or after.kind in ("heading", "dropped"):
                continue
            block = Block("heading", block.markdown, block.level)  # noqa: PLW2901
        elif block.kind == "heading" and not block.vetted:
            under = next((b for b in blocks[i + 1 :] if b.kind not in _HEADING_KINDS), None)
            if under is None or under.kind == "dropped" or under.links:
                continue
        out.append(block)
    written = _headings_to_write(out)
    kept: list[Block] = []
    for i, block in enumerate(out):
        if block.kind != "heading" or i in written:
            kept.append(block)
        elif block.vetted and len(text := block.markdown.lstrip("#").strip()) >= 25:
            kept.append(Block("text", text))  # kept text in heading markup, not a heading
    if not any(b.kind != "heading" for b in kept):  # a page of headings only: they are its text
        return [b for b in out if b.kind == "heading" and b.vetted]
    return kept


def _headings_to_write(blocks: list[Block]) -> set[int]:
    """Positions of the headings with something written under them (before the next heading of
    their level or above), and of trusted bare headings that are one of a list (beside a bare
    sibling or under a bare parent: an API page's trait implementations), with their parents."""
    filled: dict[int, bool] = {}
    content_until = [False] * 7  # content before the next heading of that level or above
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].kind != "heading":
            content_until = [True] * 7
            continue
        filled[i] = content_until[blocks[i].level]
        for level in range(blocks[i].level, 7):
            content_until[level] = False
    order = sorted(filled)
    after = dict(itertools.pairwise(order))
    before = {b: a for a, b in after.items()}
    parent: dict[int, int | None] = {}
    open_: list[int] = []
    for i in order:
        while open_ and blocks[open_[-1]].level >= blocks[i].level:
            open_.pop()
        parent[i] = open_[-1] if open_ else None
        open_.append(i)

    def bare_leaf(i: int | None, level: int) -> bool:
        if i is None or filled[i] or not blocks[i].structure or blocks[i].level != level:
            return False
        following = after.get(i)
        return following is None or blocks[following].level <= level

    written = {i for i in order if filled[i]}
    for i in order:
        level, up = blocks[i].level, parent[i]
        listed = bare_leaf(before.get(i), level) or bare_leaf(after.get(i), level)
        if bare_leaf(i, level) and (listed or (up is not None and not filled[up])):
            written.add(i)
            while up is not None:
                written.add(up)
                up = parent[up]
    return written


_HEADING_KINDS = ("heading", "restore")


def to_markdown(
    element: lxml.html.HtmlElement, *, skip_navigation: bool = True, controls: bool = False
) -> str:
    """An element written whole as Markdown (no content filter): an EPUB chapter, a region of
    an app's DOM (`controls` keeps the labels of its buttons and menus)."""
    writer = MarkdownWriter(skip_navigation=skip_navigation, controls=controls)
    return writer.write(element).markdown()
