"""PDF: words with their spaces, tables as GFM, headings from the outline; pypdf for the
outline, encryption and the page count; OCR with tesseract for pages without a text layer.

Each page is read twice and the better reading is kept:

- layout: pdfminer's layout analysis (through pdfplumber, which also finds the tables): text
  boxes in reading order, so the columns of a paper stay apart; a space wherever the gap between
  two glyphs is over a tenth of their size. pdfplumber's fixed 3 pt tolerance glued the words of
  14 of 42 PDFs (57 % of the letters of a specification whose words are 1-2 pt apart);
- pypdf's `extract_text`: reads fonts pdfminer cannot decode (embedded CMaps).

The layout reading wins unless it glues words (letters in tokens of 25+ letters) that pypdf
separates, or holds less than half of pypdf's letters. Headings come only from the outline
(depth 0 is `#`, 1 `##`, 2 `###`), on the line that carries the title; a text line that starts
with `#` or a code fence is escaped, so it never becomes a heading or swallows later sections.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import logging
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pdfminer.layout import LTChar, LTCurve, LTFigure, LTTextBox, LTTextLine

from ingest.errors import ExtractionError, ProtectedDocumentError, ToolMissingError
from ingest.formats.base import Extracted, ExtractRequest, MarkdownWriter, fail, gfm_table, one_line

log = logging.getLogger(__name__)

_MIN_PAGE_CHARS = 20  # a page with less text than this is treated as scanned
_OCR_DPI = 200
_OUTLINE_DEPTH = 3  # outline levels written as headings: #, ##, ###
# pdfminer's defaults (word_margin 0.1: a space at gaps over a tenth of the glyph size);
# all_texts: text drawn inside form XObjects is laid out too.
_LAPARAMS = {"all_texts": True}
_CELL_TEXT = {"x_tolerance_ratio": 0.1}  # table cells: the same rule, in pdfplumber's terms
_GLUED_LETTERS = 25  # a token this long is almost always words without their spaces
_GLUED_RATE = 0.01
_TOKEN = re.compile(r"[^\W_]+")
# pdfminer's placeholder for a glyph without a character; control characters (a ligature
# whose ToUnicode entry is 0)
_JUNK = re.compile(r"\(cid:\d+\)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"\s+")
_MARKUP = re.compile(r"^\s*(#|`{3}|~{3})")  # would start a heading or a code fence


@dataclass
class _Block:
    """A paragraph (its lines) or a table (GFM in `table`)."""

    lines: list[str] = field(default_factory=list)
    table: str = ""


def _outline(reader: Any) -> dict[int, list[tuple[int, str]]]:
    """Page index → (level, title) of the outline entries that start on it, in outline order."""
    starts: dict[int, list[tuple[int, str]]] = {}

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                if depth + 1 < _OUTLINE_DEPTH:
                    walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # broken destinations are common  # noqa: S112
                continue
            title = one_line(getattr(item, "title", "") or "")
            if title and page is not None and page >= 0:
                starts.setdefault(page, []).append((depth + 1, title))

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


def _has_lines(container: Any) -> bool:
    return any(
        isinstance(item, LTCurve) or (isinstance(item, LTFigure) and _has_lines(item))
        for item in container
    )


def _text_boxes(container: Any) -> Iterator[LTTextBox]:
    for item in container:
        if isinstance(item, LTTextBox):
            yield item
        elif isinstance(item, LTFigure):
            yield from _text_boxes(item)


Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pdfminer's coordinates


def _inside(item: Any, boxes: list[Box]) -> bool:
    x, y = (item.x0 + item.x1) / 2, (item.y0 + item.y1) / 2
    return any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in boxes)


def _line_text(line: LTTextLine, tables: list[Box], rotated: list[LTChar]) -> str:
    """The line's text: glyphs inside tables left out, turned ones set aside in `rotated`."""
    parts: list[str] = []
    previous: LTChar | None = None
    for item in line:
        if isinstance(item, LTChar):
            if _inside(item, tables):
                continue
            if not item.upright:
                rotated.append(item)
                continue
            if (  # "fake bold": the same glyph drawn twice, at most a point apart
                previous is not None
                and item.get_text() == previous.get_text()
                and abs(item.x0 - previous.x0) <= min(1.0, previous.width / 2)
                and abs(item.y0 - previous.y0) <= 1
            ):
                continue
            previous = item
        parts.append(item.get_text())
    return _clean("".join(parts))


def _clean(text: str) -> str:
    return _SPACES.sub(" ", _JUNK.sub("", text)).strip()


def _rotated_lines(chars: list[LTChar]) -> list[str]:
    """Text turned by 90° (a margin stamp, a landscape page): pdfminer makes each glyph a
    line of its own; here the glyphs on one vertical baseline are joined along it, upwards
    when the glyphs' tops point left, with a space at gaps over a tenth of the glyph size."""
    if not chars:
        return []
    runs: list[list[LTChar]] = []
    for char in sorted(chars, key=lambda c: c.x0):
        if runs and char.x0 - runs[-1][0].x0 <= 1.5:
            runs[-1].append(char)
        else:
            runs.append([char])
    lines: list[str] = []
    for run in runs:
        up = run[0].matrix[1] > 0
        run.sort(key=lambda c: c.y0 if up else -c.y0)
        text = run[0].get_text()
        for before, char in itertools.pairwise(run):
            gap = char.y0 - before.y1 if up else before.y0 - char.y1
            space = gap > 0.1 * max(char.width, char.height)
            text += (" " if space else "") + char.get_text()
        lines.append(_clean(text))
    return [line for line in (lines if chars[0].matrix[1] > 0 else lines[::-1]) if line]


def _layout_blocks(page: Any) -> list[_Block]:
    """The page's text boxes in pdfminer's reading order, each table (pdfplumber's, as GFM)
    before the first box below its top edge (one beside it in the same column first)."""
    mb_x0, mb_top = page.mediabox[0], page.mediabox[1]
    tables: list[tuple[Box, str]] = []
    # pdfplumber finds tables by their ruling lines; without any, it would convert every glyph
    # of the page to look for them (half the time of a page of text)
    for table in page.find_tables() if _has_lines(page.layout) else []:
        x0, top, x1, bottom = table.bbox
        box = (x0 - mb_x0, page.height - bottom + mb_top, x1 - mb_x0, page.height - top + mb_top)
        rows = [[c or "" for c in row] for row in table.extract(**_CELL_TEXT)]
        rows = [row for row in rows if any(row)]
        if rows:
            tables.append((box, gfm_table(rows)))
    areas = [box for box, _ in tables]
    texts: list[tuple[Box, _Block]] = []
    rotated: list[LTChar] = []
    for text_box in _text_boxes(page.layout):
        if lines := [text for line in text_box if (text := _line_text(line, areas, rotated))]:
            texts.append((text_box.bbox, _Block(lines)))
    if lines := _rotated_lines(rotated):
        texts.append(((0.0, 0.0, 0.0, 0.0), _Block(lines)))
    before: dict[int, list[_Block]] = {}
    for box, gfm in sorted(tables, key=lambda t: -t[0][3]):  # top-most first
        below = [i for i, (b, _) in enumerate(texts) if b[3] <= box[3] + 1]
        column = [i for i in below if texts[i][0][0] < box[2] and texts[i][0][2] > box[0]]
        before.setdefault((column or below or [len(texts)])[0], []).append(_Block(table=gfm))
    blocks: list[_Block] = []
    for i, (_, block) in enumerate([*texts, ((0.0, 0.0, 0.0, 0.0), _Block())]):
        blocks += [*before.get(i, []), block]
    return [block for block in blocks if block.lines or block.table]


def _pypdf_blocks(reader: Any, index: int) -> list[_Block] | None:
    """pypdf's text of the page as one paragraph; None when pypdf cannot read the page."""
    try:
        text = reader.pages[index].extract_text() or ""
    except Exception:
        return None
    lines = [line for raw in text.splitlines() if (line := _SPACES.sub(" ", raw).strip())]
    return [_Block(lines)] if lines else []


def _letters(blocks: list[_Block]) -> tuple[int, int]:
    """(letters, letters in tokens of 25+ letters) of the blocks' text."""
    total = glued = 0
    for block in blocks:
        for token in _TOKEN.findall(block.table or "\n".join(block.lines)):
            letters = sum(c.isalpha() for c in token)
            total += letters
            glued += letters if letters >= _GLUED_LETTERS else 0
    return total, glued


def _chars(blocks: list[_Block]) -> int:
    return sum(len(block.table) + sum(map(len, block.lines)) for block in blocks)


def _prefer_pypdf(layout: list[_Block], plain: list[_Block]) -> bool:
    letters, glued = _letters(layout)
    plain_letters, plain_glued = _letters(plain)
    if letters < plain_letters / 2:  # glyphs pdfminer could not decode
        return True
    rate = glued / max(1, letters)
    return rate > _GLUED_RATE and plain_glued / max(1, plain_letters) < rate / 2


def _dehyphenate(lines: list[str]) -> list[str]:
    """`ef-` + `ficient …` → `efficient` + `…`: words split at a line end are joined (as
    pdftotext does)."""
    out: list[str] = []
    for line in lines:
        last = out[-1] if out else ""
        if len(last) > 1 and last[-1] == "-" and last[-2].islower() and line[:1].islower():
            word, _, rest = line.partition(" ")
            out[-1] = last[:-1] + word
            if rest:
                out.append(rest)
        else:
            out.append(line)
    return out


def _title_lines(lines: list[str], title: list[str]) -> int:
    """How many of the lines (one or two) carry the title, perhaps after a section number the
    outline leaves out; 0 when they do not."""
    for n in (1, 2) if title else ():
        words = _TOKEN.findall(" ".join(lines[:n]).lower())
        extra = len(words) - len(title)
        if extra >= 0 and words[extra:] == title and all(w.isdigit() for w in words[:extra]):
            return n
    return 0


def _markdown(blocks: list[_Block], headings: list[tuple[int, str]]) -> list[str]:
    """The page as Markdown blocks: each outline heading in place of the lines that carry its
    title (searched in outline order), else right after the previous heading; lines escaped."""
    at: dict[tuple[int, int], list[str]] = {}  # (block, line) → headings written before it
    taken: set[tuple[int, int]] = set()  # lines that carried a title
    start = (0, 0)
    for level, title in headings:
        words = _TOKEN.findall(title.lower())
        found = next(
            (
                (b, i, n)
                for b, block in enumerate(blocks)
                for i in range(len(block.lines))
                if (b, i) >= start and (n := _title_lines(block.lines[i:], words))
            ),
            None,
        )
        if found is not None:
            b, i, n = found
            at.setdefault((b, i), []).append(f"{'#' * level} {title}")
            taken.update((b, i + k) for k in range(n))
            start = (b, i + n) if i + n < len(blocks[b].lines) else (b + 1, 0)
        else:
            at.setdefault(start, []).append(f"{'#' * level} {title}")
    out: list[str] = []
    for b, block in enumerate([*blocks, _Block()]):
        lines: list[str] = []
        for i, line in enumerate(block.lines or [""]):
            if (b, i) in at:
                out += ["\n".join(_dehyphenate(lines)), *at[(b, i)]]
                lines = []
            if line and (b, i) not in taken:
                lines.append(_MARKUP.sub(lambda m: "\\" + m.group(1), line))
        out += ["\n".join(_dehyphenate(lines)), block.table]
    return [block for block in out if block]


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


class _Readings:
    """Each page read by pdfminer's layout analysis (through pdfplumber) and by pypdf; the
    better reading kept (pypdf alone where pdfminer gives up on the page or the file)."""

    def __init__(self, data: bytes, reader: Any) -> None:
        import pdfplumber  # noqa: PLC0415

        self.reader = reader
        try:
            self.pdf: Any = pdfplumber.open(io.BytesIO(data), password="", laparams=_LAPARAMS)
        except Exception:
            log.debug("pdfminer cannot open the PDF; pypdf reads every page", exc_info=True)
            self.pdf = None

    def page(self, index: int) -> tuple[list[_Block] | None, bool]:
        """(the page's blocks, whether the layout engine failed); None when nothing reads it."""
        plain = _pypdf_blocks(self.reader, index)
        if self.pdf is None:
            return plain, True
        page = None
        try:
            page = self.pdf.pages[index]
            layout = _layout_blocks(page)
        except Exception:  # pdfminer gives up on some pages that pypdf reads
            log.debug("layout analysis failed on page %s", index + 1, exc_info=True)
            return plain, True
        finally:
            if page is not None:
                page.close()
        return (plain if plain is not None and _prefer_pypdf(layout, plain) else layout), False

    def close(self) -> None:
        # pdfplumber's close reads the page tree again: it raises again where it could not
        with contextlib.suppress(Exception):
            if self.pdf is not None:
                self.pdf.close()


def extract_pdf(request: ExtractRequest) -> Extracted:
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
    unreadable: list[int] = []
    readings = _Readings(request.data, reader)
    images = _PageImages(request.data)
    with contextlib.closing(images), contextlib.closing(readings):
        for index in range(pages):
            blocks, failed = readings.page(index)
            if blocks is None:  # both parsers refuse it (and pdfium, as a rule, to render it)
                unreadable.append(index + 1)
                blocks = []
            elif failed:
                fallback.append(index + 1)
            if index + 1 not in unreadable and _chars(blocks) < _MIN_PAGE_CHARS:
                if request.tools.tesseract is None:
                    scanned.append(index + 1)
                    blocks = []
                else:
                    text = _ocr(request, images.png(index))
                    blocks = [_Block([line for line in text.splitlines() if line.strip()])]
            if not all(out.add(b) for b in _markdown(blocks, outline.get(index, []))):
                break
    if unreadable and len(unreadable) == pages:
        raise ExtractionError(f"{request.name} is not a readable PDF file: no page could be read")
    if unreadable:
        out.warn(f"pages no PDF reader could read were skipped: {_pages(unreadable)}")
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
