"""HTML to Markdown that keeps the page's structure.

trafilatura (readability when trafilatura finds little) decides *what* is content; lore writes
*that* part of the page's own DOM as Markdown (`writer`): every heading, code blocks with their
exact text, tables, lists, API signatures as headings. The title comes from `<title>`, the first
`<h1>` or og:title, for HTML and XHTML alike."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import lxml.etree
import lxml.html
import trafilatura
from readability import Document as ReadabilityDocument
from trafilatura.settings import Document as TrafilaturaDocument

from ingest.html.region import KeptText, main_region, pager, with_header
from ingest.html.writer import (
    HEADINGS,
    MarkdownWriter,
    collapse,
    hidden_from_readers,
    is_button,
    is_permalink,
    title_line,
    to_markdown,
)

__all__ = [
    "ExtractedHtml",
    "collapse",
    "extract_html",
    "hidden_from_readers",
    "html_title",
    "is_button",
    "is_permalink",
    "pager",
    "parse",
    "title_line",
    "to_markdown",
]

log = logging.getLogger(__name__)

MIN_CHARS = 200  # below this, trafilatura found too little: readability decides instead
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_PIECES = frozenset({"p", "head", "item", "cell", "code", "quote"})
_READABILITY_BLOCKS = ("p", "li", "td", "th", "dt", "dd", "pre", "blockquote", *HEADINGS)


@dataclass(frozen=True)
class ExtractedHtml:
    title: str
    markdown: str
    extractor: str


def parse(html: str) -> lxml.html.HtmlElement | None:
    """The page's tree; None when there is none to read. An XML declaration (XHTML, DocBook)
    is dropped first: lxml refuses one inside a decoded string."""
    html = _XML_DECLARATION.sub("", html, count=1)
    if not html.strip():
        return None
    try:
        return lxml.html.document_fromstring(html)
    except (ValueError, lxml.etree.ParserError) as exc:
        log.debug("unparsable HTML: %s", exc)
        return None


def page_title(root: lxml.html.HtmlElement) -> str:
    for xpath in ("//title", "//h1", "//meta[@property='og:title']/@content"):
        for found in root.xpath(xpath):
            text = collapse(found if isinstance(found, str) else found.text_content())
            if text:
                return text.strip(" ¶§#")
    return ""


def html_title(html: str) -> str:
    root = parse(html)
    return "" if root is None else page_title(root)


def _trafilatura(html: str, url: str | None) -> list[str]:
    document = trafilatura.bare_extraction(
        html,
        url=url,
        include_tables=True,
        include_formatting=False,
        include_links=False,
        include_images=False,
        include_comments=False,
        deduplicate=False,
        as_dict=False,
    )
    if not isinstance(document, TrafilaturaDocument) or document.body is None:
        return []
    return [_text(e) for e in document.body.iter() if e.tag in _PIECES]


def _text(element: lxml.etree._Element) -> str:
    """An element's text with its line breaks (`<lb/>`) as spaces, not glued."""
    parts = [element.text or ""]
    for child in element:
        parts += [" " if child.tag == "lb" else _text(child), child.tail or ""]
    return "".join(parts)


def _readability(html: str) -> list[str]:
    try:
        summary = ReadabilityDocument(html).summary(html_partial=True)
        tree = lxml.html.fragment_fromstring(summary, create_parent="div")
    except Exception as exc:  # readability raises bare Exception subclasses on odd input
        log.debug("readability failed: %s", exc)
        return []
    return [e.text_content() for e in tree.iter(*_READABILITY_BLOCKS)]


def is_reference(region: lxml.html.HtmlElement) -> bool:
    """Technical documentation: code blocks, API signatures or inline code throughout."""
    if region.xpath(".//pre") or len(region.xpath(".//code")) >= 2:
        return True
    return any(d.get("id") or "sig" in (d.get("class") or "") for d in region.iter("dt"))


def extract_html(html: str, url: str | None = None) -> ExtractedHtml:
    """The page's main content as Markdown with its structure (empty when it has no text)."""
    root = parse(html)
    if root is None:
        return ExtractedHtml("", "", "lore-html")
    title = page_title(root)
    kept = KeptText(_trafilatura(html, url))
    extractor = "trafilatura"
    if len(kept) < MIN_CHARS:
        fallback = KeptText(_readability(html))
        if len(fallback) > len(kept):
            kept, extractor = fallback, "readability"
    body = root.find("body")
    if body is None:
        body = root
    for block in pager(body, url):  # the pages before and after this one, not its content
        block.drop_tree()
    region = main_region(body, kept)
    trust = is_reference(region)
    # Documentation's title may stand above its region; a news site's header is no content.
    regions = with_header(region, body) if trust else [region]
    writer = MarkdownWriter(keep=kept, regions=regions, trust_region=trust)
    markdown = writer.write(body).markdown()
    return ExtractedHtml(title, markdown, extractor)
