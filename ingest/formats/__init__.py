"""One extractor per format family, chosen by the detected type. Every extractor turns bytes into
Markdown with headings, so chunks carry a heading path."""

from __future__ import annotations

from ingest.formats.base import (
    Extracted,
    Extractor,
    ExtractRequest,
    Limits,
    MarkdownWriter,
    Tools,
    gfm_table,
)
from ingest.formats.convert import extract_converted
from ingest.formats.data import (
    extract_json,
    extract_ndjson,
    extract_table,
    extract_xml,
    extract_yaml,
)
from ingest.formats.media import extract_media
from ingest.formats.office import extract_docx, extract_epub, extract_pptx, extract_xlsx
from ingest.formats.pdf import extract_pdf
from ingest.formats.text import extract_html_document, extract_markdown, extract_text

EXTRACTORS: dict[str, Extractor] = {
    "html": extract_html_document,
    "markdown": extract_markdown,
    "text": extract_text,
    "csv": extract_table,
    "tsv": extract_table,
    "json": extract_json,
    "ndjson": extract_ndjson,
    "yaml": extract_yaml,
    "xml": extract_xml,
    "pdf": extract_pdf,
    "docx": extract_docx,
    "xlsx": extract_xlsx,
    "pptx": extract_pptx,
    "epub": extract_epub,
    **dict.fromkeys(("doc", "odt", "rtf", "xls", "ppt"), extract_converted),
    **dict.fromkeys(("mp3", "wav", "m4a", "mp4", "webm", "ogg", "flac"), extract_media),
}


def extract(request: ExtractRequest) -> Extracted:
    """Extract a document of a detected type in this process."""
    extracted = EXTRACTORS[request.doc_type](request)
    limit = request.limits.max_chars
    if len(extracted.markdown) > limit:
        cut = extracted.markdown.rfind("\n", 0, limit)
        extracted.markdown = extracted.markdown[: cut if cut > 0 else limit]
        extracted.warnings.append(
            f"text truncated at {limit:,} characters (LORE_DOCUMENTS__MAX_CHARS)"
        )
    return extracted


__all__ = [
    "EXTRACTORS",
    "ExtractRequest",
    "Extracted",
    "Extractor",
    "Limits",
    "MarkdownWriter",
    "Tools",
    "extract",
    "gfm_table",
]
