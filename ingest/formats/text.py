"""HTML, Markdown and plain text."""

from __future__ import annotations

from ingest.detect import decode_text
from ingest.formats.base import Extracted, ExtractRequest
from ingest.html import extract_html


def extract_html_document(request: ExtractRequest) -> Extracted:
    extracted = extract_html(decode_text(request.data, request.content_type), request.url)
    return Extracted(extracted.title, extracted.markdown, extracted.extractor)


def extract_markdown(request: ExtractRequest) -> Extracted:
    text = decode_text(request.data, request.content_type)
    title = next((ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("# ")), "")
    return Extracted(title, text, "markdown")


def extract_text(request: ExtractRequest) -> Extracted:
    # Plain text has no heading syntax: a line starting with '#' is not a heading here.
    text = decode_text(request.data, request.content_type)
    escaped = "\n".join(
        "\\" + ln if ln.lstrip().startswith("#") else ln for ln in text.splitlines()
    )
    return Extracted("", escaped, "text")
