"""PDF: text and tables with pdfplumber (tables as GFM, text outside them in reading order),
pypdf for the outline, encryption and the page count; OCR with tesseract for pages without a
text layer."""

from __future__ import annotations

import contextlib
import io
import subprocess
from typing import Any

from ingest.errors import ExtractionError, ProtectedDocumentError, ToolMissingError
from ingest.formats.base import Extracted, ExtractRequest, MarkdownWriter, fail, gfm_table, one_line

_MIN_PAGE_CHARS = 20  # a page with less text than this is treated as scanned
_OCR_DPI = 200


def _outline(reader: Any) -> dict[int, list[str]]:
    """Page index → outline titles that start on it (top-level and second-level entries)."""
    starts: dict[int, list[str]] = {}

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                if depth < 2:
                    walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # broken destinations are common  # noqa: S112
                continue
            title = one_line(getattr(item, "title", "") or "")
            if title and page is not None and page >= 0:
                starts.setdefault(page, []).append(title)

    try:
        walk(list(reader.outline), 0)
    except Exception:
        return {}
    return starts


def _has_javascript(reader: Any) -> bool:
    try:
        root = reader.trailer["/Root"]
        names = root.get("/Names", {})
        return "/JavaScript" in names or "/JS" in str(root.get("/OpenAction", ""))
    except Exception:
        return False


def _page_blocks(page: Any) -> list[str]:
    """The page's text and tables as Markdown blocks, top to bottom."""
    tables = [t for t in page.find_tables() if t.bbox is not None]
    blocks: list[tuple[float, str]] = []
    for table in tables:
        rows = [[c or "" for c in row] for row in table.extract() if any(c for c in row if c)]
        if rows:
            blocks.append((table.bbox[1], gfm_table(rows)))

    def outside(obj: dict[str, Any]) -> bool:
        x, top = obj.get("x0", 0), obj.get("top", 0)
        return not any(
            t.bbox[0] <= x <= t.bbox[2] and t.bbox[1] <= top <= t.bbox[3] for t in tables
        )

    source = page.filter(outside) if tables else page
    for line in source.extract_text_lines(keep_blank_chars=False):
        blocks.append((line["top"], line["text"]))
    blocks.sort(key=lambda b: b[0])
    merged: list[str] = []
    for _, text in blocks:
        if text.startswith("|") or not merged or merged[-1].startswith("|"):
            merged.append(text)
        else:
            merged[-1] += "\n" + text
    return merged


def _pypdf_blocks(reader: Any, index: int) -> list[str]:
    try:
        text = reader.pages[index].extract_text() or ""
    except Exception:  # the page is beyond both parsers
        return []
    return [text.strip()] if text.strip() else []


def _pages(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:10])) + (" …" if len(numbers) > 10 else "")


class _PageImages:
    """Page images for OCR, rendered from one pdfium document opened on first use."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._document: Any = None

    def png(self, index: int) -> bytes:
        import pypdfium2  # noqa: PLC0415

        if self._document is None:
            self._document = pypdfium2.PdfDocument(self._data)
        image = self._document[index].render(scale=_OCR_DPI / 72).to_pil()
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    def close(self) -> None:
        if self._document is not None:
            self._document.close()


def _ocr(request: ExtractRequest, png: bytes) -> str:
    assert request.tools.tesseract is not None
    result = subprocess.run(
        [request.tools.tesseract, "stdin", "stdout", "-l", request.tools.ocr_languages],
        input=png,
        capture_output=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        raise ExtractionError(f"tesseract failed: {result.stderr.decode(errors='replace')[:300]}")
    return result.stdout.decode("utf-8", "replace").strip()


def extract_pdf(request: ExtractRequest) -> Extracted:
    import pdfplumber  # noqa: PLC0415
    import pypdf  # noqa: PLC0415

    try:
        reader = pypdf.PdfReader(io.BytesIO(request.data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ProtectedDocumentError(
                f"{request.name} is an encrypted PDF that needs a password; upload a copy "
                "without the password"
            )
        page_count = len(reader.pages)
        outline = _outline(reader)
        title = one_line((reader.metadata.title if reader.metadata else "") or "")
        javascript = _has_javascript(reader)
    except ProtectedDocumentError:
        raise
    except Exception as exc:
        raise fail(request, "PDF", exc) from exc
    out = MarkdownWriter(request.limits)
    if javascript:
        out.warn("the PDF contains JavaScript; it was ignored (lore only reads text)")
    if page_count > request.limits.max_pages:
        out.warn(
            f"only the first {request.limits.max_pages:,} of {page_count:,} pages were ingested "
            "(LORE_DOCUMENTS__MAX_PAGES)"
        )
    pages = min(page_count, request.limits.max_pages)
    scanned: list[int] = []
    fallback: list[int] = []
    try:
        pdf = pdfplumber.open(io.BytesIO(request.data), password="")
    except Exception as exc:
        raise fail(request, "PDF", exc) from exc
    images = _PageImages(request.data)
    with pdf, contextlib.closing(images):
        for index in range(pages):
            for heading in outline.get(index, []):
                out.heading(2, heading)
            try:
                blocks = _page_blocks(pdf.pages[index])
            except Exception:  # pdfminer gives up on some pages that pypdf reads
                blocks = _pypdf_blocks(reader, index)
                fallback.append(index + 1)
            finally:
                if index < len(pdf.pages):
                    pdf.pages[index].flush_cache()
            if sum(len(b) for b in blocks) < _MIN_PAGE_CHARS:
                if request.tools.tesseract is None:
                    scanned.append(index + 1)
                    continue
                blocks = [_ocr(request, images.png(index))]
            if not all(out.add(b) for b in blocks):
                break
    if fallback:
        out.warn(f"pages read as plain text, tables not detected: {_pages(fallback)}")
    if scanned:
        message = (
            f"{len(scanned)} of {pages} pages have no text layer (scanned?) and were skipped: "
            f"{_pages(scanned)}; install tesseract-ocr to read them with OCR"
        )
        if len(scanned) == pages:
            raise ToolMissingError(f"{request.name}: {message}")
        out.warn(message)
    return out.result(title, "pdfplumber")
