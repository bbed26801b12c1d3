"""Zip-based office formats: DOCX (python-docx), PPTX (python-pptx), XLSX (openpyxl) and EPUB,
each checked for decompression bombs before a library opens it."""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterable
from typing import Any

from defusedxml import ElementTree as SafeET

from ingest.detect import decode_text
from ingest.errors import EmptyDocumentError, ExtractionError, UnsafeDocumentError
from ingest.formats.base import (
    Extracted,
    ExtractRequest,
    MarkdownWriter,
    fail,
    one_line,
)
from ingest.html import parse, to_markdown

_MIB = 1024 * 1024
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def check_zip(request: ExtractRequest) -> None:
    """Refuse archives that would expand past the limits (decompression bombs)."""
    limits = request.limits
    try:
        with zipfile.ZipFile(io.BytesIO(request.data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError) as exc:
        raise fail(request, request.doc_type.upper(), exc) from exc
    if len(members) > limits.max_zip_members:
        raise UnsafeDocumentError(
            f"{request.name} holds {len(members):,} files; the limit is {limits.max_zip_members:,}"
        )
    total = sum(m.file_size for m in members)
    if total > limits.max_unzipped_bytes:
        raise UnsafeDocumentError(
            f"{request.name} would expand to {total / _MIB:,.0f} MiB; the limit is "
            f"{limits.max_unzipped_bytes / _MIB:,.0f} MiB (a decompression bomb?)"
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > _MIB and ratio > limits.max_zip_ratio:
            raise UnsafeDocumentError(
                f"{request.name}: {member.filename} is compressed {ratio:,.0f}:1; the limit is "
                f"{limits.max_zip_ratio}:1 (a decompression bomb?)"
            )


# DOCX -----------------------------------------------------------------------------------------


def _heading_level(style: str) -> int | None:
    name = style.lower()
    if name == "title":
        return 1
    if name.startswith("heading"):
        digits = "".join(ch for ch in name if ch.isdigit())
        return min(int(digits), 5) + 1 if digits else 2
    return None


def _docx_table(element: Any) -> list[list[str]]:
    """Rows of cell texts straight from the XML (robust to odd grids and merged cells)."""
    rows = []
    for tr in element.iter(f"{_W}tr"):
        cells = []
        for tc in tr.iter(f"{_W}tc"):
            paragraphs = [
                "".join(t.text or "" for t in p.iter(f"{_W}t")) for p in tc.iter(f"{_W}p")
            ]
            cells.append(" ".join(p for p in paragraphs if p.strip()))
        if any(c.strip() for c in cells):
            rows.append(cells)
    return rows


def extract_docx(request: ExtractRequest) -> Extracted:
    import docx  # noqa: PLC0415  (heavy import, only where needed)
    from docx.table import Table  # noqa: PLC0415

    check_zip(request)
    try:
        document = docx.Document(io.BytesIO(request.data))
        blocks = list(document.iter_inner_content())
        title = one_line(document.core_properties.title or "")
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors, …
        raise fail(request, "DOCX", exc) from exc
    out = MarkdownWriter(request.limits)
    for block in blocks:
        if isinstance(block, Table):
            rows = _docx_table(block._tbl)
            if rows and not out.table(rows):
                break
            continue
        text = one_line(block.text)
        if not text:
            continue
        style = block.style.name if block.style is not None else ""
        level = _heading_level(style or "")
        if level is not None:
            title = title or text
            ok = out.heading(level, text)
        elif "list" in (style or "").lower() or (
            block._p.pPr is not None and (block._p.pPr.numPr is not None)
        ):
            ok = out.add(f"- {text}")
        else:
            ok = out.paragraph(text)
        if not ok:
            break
    return out.result(title, "python-docx")


# PPTX -----------------------------------------------------------------------------------------


def _shape_blocks(shapes: Iterable[Any]) -> Iterable[tuple[str, Any]]:
    for shape in shapes:
        if getattr(shape, "shape_type", None) == 6 or hasattr(shape, "shapes"):  # group
            yield from _shape_blocks(shape.shapes)
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = [[c.text for c in row.cells] for row in shape.table.rows]
            yield "table", rows
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            lines = []
            for paragraph in shape.text_frame.paragraphs:
                text = one_line(paragraph.text)
                if text:
                    lines.append(
                        ("  " * paragraph.level + "- " + text) if paragraph.level else text
                    )
            if lines:
                yield "text", "\n".join(lines)


def extract_pptx(request: ExtractRequest) -> Extracted:
    from pptx import Presentation  # noqa: PLC0415

    check_zip(request)
    try:
        presentation = Presentation(io.BytesIO(request.data))
        slides = list(presentation.slides)
        title = one_line(presentation.core_properties.title or "")
    except Exception as exc:
        raise fail(request, "PPTX", exc) from exc
    out = MarkdownWriter(request.limits)
    has_text = False
    if len(slides) > request.limits.max_pages:
        out.warn(
            f"only the first {request.limits.max_pages:,} of {len(slides):,} slides were ingested"
        )
        slides = slides[: request.limits.max_pages]
    for number, slide in enumerate(slides, 1):
        try:
            heading = one_line(slide.shapes.title.text) if slide.shapes.title is not None else ""
            title_id = slide.shapes.title.shape_id if slide.shapes.title is not None else None
            blocks = list(
                _shape_blocks(s for s in slide.shapes if getattr(s, "shape_id", None) != title_id)
            )
            notes = (
                one_line(slide.notes_slide.notes_text_frame.text)
                if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None
                else ""
            )
        except Exception as exc:
            out.warn(f"slide {number} could not be read: {one_line(exc)[:200]}")
            continue
        has_text = has_text or bool(heading or blocks or notes)
        if not out.heading(2, f"Slide {number}: {heading}" if heading else f"Slide {number}"):
            break
        for kind, value in blocks:
            if not (out.table(value) if kind == "table" else out.paragraph(value)):
                break
        if notes and not out.paragraph(f"Notes: {notes}"):
            break
    if not has_text:
        raise EmptyDocumentError(f"{request.name} has no text on its slides (pictures only?)")
    return out.result(title, "python-pptx")


# XLSX -----------------------------------------------------------------------------------------


def _trim(row: tuple[Any, ...]) -> list[Any]:
    values = list(row)
    while values and (values[-1] is None or str(values[-1]).strip() == ""):
        values.pop()
    return values


def extract_xlsx(request: ExtractRequest) -> Extracted:
    import openpyxl  # noqa: PLC0415

    check_zip(request)
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(request.data), read_only=True, data_only=True)
    except Exception as exc:
        raise fail(request, "XLSX", exc) from exc
    out = MarkdownWriter(request.limits)
    budget = request.limits.max_rows
    try:
        for sheet in workbook.worksheets:
            rows = []
            for row in sheet.iter_rows(values_only=True):
                values = _trim(row)
                if not values:
                    continue
                if budget <= 0:
                    out.warn(f"only the first {request.limits.max_rows:,} rows were ingested")
                    break
                rows.append(values)
                budget -= 1
            if not rows:
                continue
            if not out.heading(2, f"Sheet: {sheet.title}") or not out.table(rows):
                break
    except Exception as exc:
        raise fail(request, "XLSX", exc) from exc
    finally:
        workbook.close()
    return out.result(one_line(workbook.properties.title or ""), "openpyxl")


# EPUB -----------------------------------------------------------------------------------------

_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"


def _chapter_markdown(xhtml: bytes) -> str:
    root = parse(decode_text(xhtml))
    if root is None:
        return ""
    body = root.find("body")
    return to_markdown(root if body is None else body)


def extract_epub(request: ExtractRequest) -> Extracted:
    check_zip(request)
    try:
        with zipfile.ZipFile(io.BytesIO(request.data)) as archive:
            container = SafeET.fromstring(archive.read("META-INF/container.xml"))
            rootfile = container.find(f".//{_CONTAINER}rootfile")
            if rootfile is None:
                raise ExtractionError("META-INF/container.xml names no package file")
            opf_path = rootfile.attrib["full-path"]
            opf = SafeET.fromstring(archive.read(opf_path))
            base = posixpath.dirname(opf_path)
            manifest = {
                item.attrib["id"]: item.attrib["href"]
                for item in opf.iter(f"{_OPF}item")
                if "id" in item.attrib and "href" in item.attrib
            }
            spine = [i.attrib.get("idref", "") for i in opf.iter(f"{_OPF}itemref")]
            title_el = opf.find(f".//{_DC}title")
            title = one_line(title_el.text or "") if title_el is not None else ""
            out = MarkdownWriter(request.limits)
            for idref in spine:
                href = manifest.get(idref)
                if href is None:
                    continue
                path = posixpath.normpath(posixpath.join(base, href))
                if not out.add(_chapter_markdown(archive.read(path))):
                    break
    except ExtractionError:
        raise
    except Exception as exc:  # zipfile, XML and lxml errors, missing members
        raise fail(request, "EPUB", exc) from exc
    return out.result(title, "epub")
