"""Where a page's main content is, and which of its text blocks are content.

trafilatura (readability when trafilatura finds little) is good at telling content from
boilerplate but writes the content without its structure. So its output is used as a set of
texts: `KeptText` answers whether a block of the page is one of them, and `main_region` is the
smallest element of the page that holds nearly all of them. The page's own DOM is then written
from there (`writer.MarkdownWriter`), with `KeptText` as its filter.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from urllib.parse import urljoin, urlsplit

import lxml.html

_SPACE = re.compile(r"\s+")
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))
SHORT = 25  # blocks shorter than this must equal one of the kept texts
SHINGLE = 5  # words per shingle for blocks kept in part
REGION_SHARE = 0.9  # the region holds at least this share of the kept text
_ANY_HEADING = ".//h1|.//h2|.//h3|.//h4|.//h5|.//h6"
HEADER_SHARE = 0.25  # a header above the region joins it when no longer than this share
HEADER_SIBLINGS = 3  # of the elements before the region (a table of contents between)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return _SPACE.sub(" ", text).strip()


class KeptText:
    """The texts a main-content extractor kept, for lookups of the page's blocks."""

    def __init__(self, pieces: list[str]) -> None:
        normalised = [p for p in (normalise(t) for t in pieces) if p]
        self.pieces = Counter(normalised)
        self.flat = " ".join(normalised)

    def __len__(self) -> int:
        return len(self.flat)

    def __call__(self, text: str) -> bool:
        """Whether a block with this text is content: the whole block was kept, or (for a
        block whose inline parts the extractor wrote differently) most of its phrases were."""
        text = normalise(text)
        if not text:
            return False
        if len(text) < SHORT:
            # A short text is kept as often as the extractor kept it ("Advertisement" once in
            # the article does not let every advertisement's label in).
            if self.pieces[text] > 0:
                self.pieces[text] -= 1
                return True
            # A phrase of the extractor's text that it wrote inside a longer piece.
            return len(text.split()) >= 3 and f" {text} " in f" {self.flat} "
        if text in self.pieces:
            return True
        if text in self.flat:
            return True
        words = text.split()
        if len(words) < 2 * SHINGLE:
            return False
        shingles = [" ".join(words[i : i + SHINGLE]) for i in range(0, len(words) - SHINGLE + 1, 3)]
        found = sum(1 for s in shingles if s in self.flat)
        return found >= 0.5 * len(shingles)


def with_header(
    region: lxml.html.HtmlElement, body: lxml.html.HtmlElement
) -> list[lxml.html.HtmlElement]:
    """The region after the header before it when that holds the page's `<h1>` and little else
    (a manual page's name and summary above its body, a chapter's title above its table of
    contents)."""
    if region is body or region.xpath(".//h1"):
        return [region]
    node = region
    while node is not body and node.getparent() is not None:
        siblings = [e for e in node.itersiblings(preceding=True) if isinstance(e.tag, str)]
        for before in siblings[:HEADER_SIBLINGS]:
            if before.tag == "h1" or before.xpath(".//h1"):
                small = len(before.text_content()) <= HEADER_SHARE * len(region.text_content())
                if small and not before.xpath(".//nav|.//form"):
                    return [before, region]
                return [region]
        node = node.getparent()
    return [region]


def main_region(body: lxml.html.HtmlElement, kept: KeptText) -> lxml.html.HtmlElement:
    """The deepest element that holds at least `REGION_SHARE` of the page's kept text (counted
    over text runs long enough to be unambiguous), widened to the main content the page
    declares (`_widen`); `body` when nothing matches."""
    weight: dict[lxml.html.HtmlElement, int] = {}
    for element in body.iter():
        if not isinstance(element.tag, str):
            continue
        for owner, text in ((element, element.text), (element.getparent(), element.tail)):
            if owner is None or not text or len(text) < SHORT:
                continue
            run = normalise(text)
            if len(run) < SHORT or run not in kept.flat:
                continue
            node: lxml.html.HtmlElement | None = owner
            while node is not None:
                weight[node] = weight.get(node, 0) + len(run)
                if node is body:
                    break
                node = node.getparent()
    total = weight.get(body, 0)
    region = body
    while total:
        heaviest = max(
            (c for c in region if isinstance(c.tag, str)),
            key=lambda c: weight.get(c, 0),
            default=None,
        )
        if heaviest is None or weight.get(heaviest, 0) < REGION_SHARE * total:
            break
        region = heaviest
    return _widen(region, body)


def _widen(region: lxml.html.HtmlElement, body: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """The region grown to what the page itself declares as its main content: the enclosing
    `<main>`, `role="main"` or `<article>`, else the outermost of nested sections of the same
    kind (DocBook's `div.section` in `div.section`), since an extractor that kept one
    subsection of a manual page left the rest of the same text out; and at least the nearest
    element with a heading (the section whose paragraph the extractor kept)."""
    for ancestor in region.iterancestors():
        if ancestor is body:
            break
        if ancestor.tag in ("main", "article") or ancestor.get("role") == "main":
            return ancestor
    kind = (region.tag, region.get("class"))
    for ancestor in region.iterancestors():
        if ancestor is body:
            break
        if (ancestor.tag, ancestor.get("class")) == kind and kind[0] in ("div", "section"):
            region = ancestor
    # A region without a heading of its own grows to the section its heading opens.
    while not region.xpath(_ANY_HEADING) and region.getparent() is not None:
        parent = region.getparent()
        if parent is body or parent.tag in ("body", "html"):
            break
        region = parent
        if region.xpath(_ANY_HEADING):
            break
    return region


PAGER_LINKS = 2  # a pager names the page before this one and the page after it
PAGER_SHARE = 0.8  # of its text, at least this share is its links' text
_NAV_WORD = re.compile(r"(^|[\s_-])(nav|navigation|sidebar|toc|menu)([\s_-]|$)", re.IGNORECASE)


def _navigation(element: lxml.html.HtmlElement) -> bool:
    """A navigation by its markup (`nav`, `aside`, `role=navigation`) or by a word of its class
    or id (`sidebar`, `toc`, `menu`, `nav`)."""
    if element.tag in ("nav", "aside") or element.get("role") == "navigation":
        return True
    return bool(_NAV_WORD.search(f"{element.get('class') or ''} {element.get('id') or ''}"))


_INLINE = frozenset({"a", "span", "em", "strong", "b", "i", "code", "small"})
_PAGE_END = re.compile(r"(/index)?(\.html?)?/*$")


def pager(body: lxml.html.HtmlElement, url: str | None) -> list[lxml.html.HtmlElement]:
    """The blocks of a documentation page's pager: one or two links to the pages just before
    and after this one in the page's own navigation, and little else (Docus' and Fumadocs'
    cards hold the next page's title and first lines; not in a `nav`, written into the last
    section as its text). The navigation's order is the links' order around this page's own
    link (in a sidebar); the pager links to those pages a second time, elsewhere."""
    if not url:
        return []

    def page(href: str) -> tuple[str, str]:
        try:
            parts = urlsplit(urljoin(url, href))
        except ValueError:  # no address at all ("http://[x")
            return "", href
        return parts.netloc, _PAGE_END.sub("", parts.path)

    links = [
        (a, page(href))
        for a in body.iter("a")
        if (href := (a.get("href") or "").strip())
        and not href.startswith(("#", "javascript:", "mailto:"))
    ]
    here = page(url)
    beside: set[lxml.html.HtmlElement] = set()  # the navigation's own links around this page's
    for i, (a, target) in enumerate(links):
        # This page's entry in a navigation names it; not a section of it (a table of
        # contents) nor a logo's link home.
        if target != here or "#" in a.get("href", "") or not normalise(a.text_content()):
            continue
        if not any(_navigation(e) for e in a.iterancestors()):
            continue  # a page's link to itself in its text
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(links) and links[j][1] == here:
                j += step
            if 0 <= j < len(links):
                beside.add(links[j][0])
    neighbours = {target for a, target in links if a in beside}
    again = {a for a, target in links if target in neighbours and a not in beside}
    found: list[lxml.html.HtmlElement] = []
    for a in again:
        block = None
        for node in (a, *a.iterancestors()):
            if node.tag in ("body", "main", "article") or node.xpath(".//h1|.//h2|.//h3"):
                break
            inside = [x for x, _ in links if x is node or node in x.iterancestors()]
            if len(inside) > PAGER_LINKS or not all(x in again for x in inside):
                break
            block = node
        if block is None or any(block is f or f in block.iterancestors() for f in found):
            continue
        text = normalise(block.text_content())
        around = block.getparent()
        if around is not None and block.tag in _INLINE and normalise(around.text_content()) != text:
            continue  # a link in a sentence: the text's, whatever it names
        linked = sum(len(normalise(x.text_content())) for x in block.iter("a"))
        if text and linked >= PAGER_SHARE * len(text):
            found = [f for f in found if block not in f.iterancestors()] + [block]
    return found
