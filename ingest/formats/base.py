"""What every extractor shares: the request, the result, the limits and a Markdown writer that
enforces them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ingest.errors import ExtractionError
from ingest.tables import gfm_table as gfm_table  # noqa: PLC0414 (re-exported for the extractors)
from ingest.tables import table_blocks


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


def one_line(text: object) -> str:
    return _SPACES.sub(" ", str(text)).strip()


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
        """A GFM table, or one record per row for a table too wide to read as one
        (`table_blocks`)."""
        return all(self.add(block) for block in table_blocks(rows, header))

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
