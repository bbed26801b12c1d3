"""What every extractor shares: the request, the result, the limits and a Markdown writer that
enforces them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ingest.errors import ExtractionError


@dataclass(frozen=True)
class Limits:
    """Per-document limits; content past a count limit is left out with a warning."""

    max_pages: int = 2000  # PDF pages, slides
    max_rows: int = 100_000  # CSV, TSV, XLSX rows over all sheets
    max_chars: int = 5_000_000  # Markdown characters
    max_unzipped_bytes: int = 512 * 1024 * 1024  # zip-based formats, all members together
    max_zip_ratio: int = 200  # uncompressed / compressed, per member over 1 MiB
    max_zip_members: int = 20_000
    max_media_seconds: int = 3 * 3600


@dataclass(frozen=True)
class Tools:
    """External programs and the transcriber, as configured (plain data: it crosses processes)."""

    soffice: str | None = None  # LibreOffice, for DOC, ODT, RTF, XLS, PPT
    tesseract: str | None = None  # OCR for PDF pages without a text layer
    ffmpeg: str | None = None  # decodes audio and video
    transcriber: str = "pocketsphinx"  # "pocketsphinx", "faster-whisper" or "none"
    whisper_model_dir: str | None = None
    ocr_languages: str = "eng"


@dataclass(frozen=True)
class ExtractRequest:
    data: bytes
    doc_type: str
    filename: str | None = None
    content_type: str | None = None
    url: str | None = None
    limits: Limits = Limits()
    tools: Tools = Tools()

    @property
    def name(self) -> str:
        return self.filename or self.url or "the document"


@dataclass
class Extracted:
    title: str
    markdown: str
    extractor: str
    warnings: list[str] = field(default_factory=list)


Extractor = Callable[[ExtractRequest], Extracted]

_SPACES = re.compile(r"\s+")
WIDE_HEADER_CHARS = 600


def one_line(text: object) -> str:
    return _SPACES.sub(" ", str(text)).strip()


def cell(value: object) -> str:
    """A value as a GFM table cell: one line, pipes escaped."""
    if value is None:
        return ""
    return one_line(value).replace("\\", "\\\\").replace("|", "\\|")


def _split_header(
    rows: Sequence[Sequence[object]], header: Sequence[object] | None
) -> tuple[list[object], list[list[object]]]:
    """(header, body): the given header, else the first row."""
    body = [list(r) for r in rows]
    head = list(header) if header is not None else (body.pop(0) if body else [])
    return head, body


def _column_names(head: Sequence[object], width: int) -> list[str]:
    """Header cells, with `column N` for blank or missing ones."""
    cells = [cell(c) for c in head] + [""] * (width - len(head))
    return [name or f"column {i + 1}" for i, name in enumerate(cells)]


def gfm_table(rows: Sequence[Sequence[object]], header: Sequence[object] | None = None) -> str:
    """A valid GFM table: the header row (the first row when none is given), its separator,
    every row padded to the same width."""
    head, body = _split_header(rows, header)
    width = max(len(head), *(len(r) for r in body)) if body else len(head)
    if width == 0:
        return ""
    lines = [
        "| " + " | ".join(_column_names(head, width)) + " |",
        "|" + "---|" * width,
    ]
    for row in body:
        padded = list(row) + [""] * (width - len(row))
        lines.append("| " + " | ".join(cell(c) for c in padded) + " |")
    return "\n".join(lines)


class MarkdownWriter:
    """Collects Markdown blocks and stops at the character limit, noting it as a warning."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.blocks: list[str] = []
        self.size = 0
        self.full = False
        self.warnings: list[str] = []

    def add(self, block: str) -> bool:
        """Append a block; False once the character limit is reached."""
        if self.full:
            return False
        block = block.strip("\n")
        if not block.strip():
            return True
        if self.size + len(block) > self.limits.max_chars:
            self.full = True
            self.warn(
                f"text truncated at {self.limits.max_chars:,} characters "
                "(LORE_DOCUMENTS__MAX_CHARS)"
            )
            return False
        self.blocks.append(block)
        self.size += len(block) + 2
        return True

    def heading(self, level: int, text: object) -> bool:
        title = one_line(text)
        return self.add(f"{'#' * max(1, min(level, 6))} {title}") if title else True

    def paragraph(self, text: str) -> bool:
        return self.add(text.strip())

    def table(
        self, rows: Sequence[Sequence[object]], header: Sequence[object] | None = None
    ) -> bool:
        """A GFM table; a table too wide to read as one (its header alone longer than
        `WIDE_HEADER_CHARS`) becomes one `column: value` record per row instead."""
        head, body = _split_header(rows, header)
        if sum(len(cell(c)) + 3 for c in head) <= WIDE_HEADER_CHARS:
            return self.add(gfm_table(body, head))
        for number, row in enumerate(body, 1):
            names = _column_names(head, max(len(head), len(row)))
            pairs = [
                f"{names[i]}: {one_line(v)}"
                for i, v in enumerate(row)
                if v is not None and one_line(v)
            ]
            if not self.add(f"Row {number}: " + "; ".join(pairs)):
                return False
        return True

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def markdown(self) -> str:
        return "\n\n".join(self.blocks)

    def result(self, title: str, extractor: str, warnings: Sequence[str] = ()) -> Extracted:
        return Extracted(title, self.markdown(), extractor, [*warnings, *self.warnings])


def fail(request: ExtractRequest, kind: str, exc: BaseException) -> ExtractionError:
    """A clear error for a file its library could not read."""
    detail = one_line(exc) or type(exc).__name__
    return ExtractionError(f"{request.name} is not a readable {kind} file: {detail[:300]}")
