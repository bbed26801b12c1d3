"""Main-content extraction from HTML to Markdown: trafilatura first, readability + markdownify
when trafilatura returns little or nothing."""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass

import lxml.html
import trafilatura
from markdownify import markdownify
from readability import Document as ReadabilityDocument
from trafilatura.settings import Document as TrafilaturaDocument
from trafilatura.xml import xmltotxt

from ingest.tables import repair_tables

log = logging.getLogger(__name__)

MIN_CHARS = 200
_BLANKS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class ExtractedHtml:
    title: str
    markdown: str
    extractor: str


def html_title(html: str) -> str:
    try:
        tree = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return ""
    for xpath in ("//meta[@property='og:title']/@content", "//title/text()", "//h1//text()"):
        found = [t.strip() for t in tree.xpath(xpath) if str(t).strip()]
        if found:
            return " ".join(str(found[0]).split())
    return ""


def _trafilatura(html: str, url: str | None) -> str:
    """Main content as Markdown: headings, lists, tables and code, without bold and italics.

    The extraction runs with formatting off and only the serialisation with it on: trafilatura's
    formatting mode loses text around emphasis in loose text (a recipe step "heize ihn auf
    **180 °C** vor" came out as "180 °C vor." and words glued to the emphasis), and emphasis
    carries nothing a search needs. Measured on trafilatura's benchmark: F1 0.9249 -> 0.9263.
    """
    document = trafilatura.bare_extraction(
        html,
        url=url,
        output_format="markdown",  # not 'python', which also writes a plain text we drop
        include_tables=True,
        include_formatting=False,
        include_links=False,
        include_images=False,
        include_comments=False,
        deduplicate=False,
        as_dict=False,
    )
    if not isinstance(document, TrafilaturaDocument) or document.body is None:
        return ""
    return unicodedata.normalize("NFC", xmltotxt(document.body, include_formatting=True))


def _readability(html: str) -> str:
    try:
        summary = ReadabilityDocument(html).summary(html_partial=True)
    except Exception as exc:  # readability raises bare Exception subclasses on odd input
        log.debug("readability failed: %s", exc)
        return ""
    text: str = markdownify(summary, heading_style="ATX", strip=["a", "img"])
    return text


def _clean(markdown: str) -> str:
    return _BLANKS.sub("\n\n", repair_tables(markdown)).strip()


def extract_html(html: str, url: str | None = None) -> ExtractedHtml:
    """Extract the main content of a page as Markdown (empty when the page has no text)."""
    title = html_title(html)
    primary = _clean(_trafilatura(html, url))
    if len(primary) >= MIN_CHARS:
        return ExtractedHtml(title, primary, "trafilatura")
    fallback = _clean(_readability(html))
    if len(fallback) > len(primary):
        log.debug(
            "trafilatura returned %d chars; using readability (%d)", len(primary), len(fallback)
        )
        return ExtractedHtml(title, fallback, "readability")
    return ExtractedHtml(title, primary, "trafilatura")
