"""PDFs keep their words: spaces where the glyphs are apart (however close), columns apart,
headings only from the outline and at their place, a `#` at a line start never a heading, and a
page the layout engine refuses read by pypdf. Every PDF is drawn here with reportlab; where
spacing is under test, word by word with no space character, so the gaps are exactly known."""

from __future__ import annotations

import io
import random
from collections.abc import Callable

import pytest
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from ingest import (
    ExtractionError,
    IngestError,
    Limits,
    PreparedDocument,
    SourceDocument,
    Tools,
    prepare,
)

FONT, SIZE = "Helvetica", 10
NO_OCR = Tools(tesseract=None)


def ingest(data: bytes, tools: Tools = NO_OCR) -> PreparedDocument:
    source = SourceDocument("t", data, "upload://doc.pdf", "upload", "upload", "doc.pdf")
    return prepare(source, limits=Limits(), tools=tools)


def text_of(prepared: PreparedDocument) -> str:
    return "\n".join(chunk.text for chunk in prepared.chunks)


def words(canvas: Canvas, x: float, y: float, line: str, gap: float = 2.0) -> None:
    """Each word drawn on its own, `gap` points after the previous one, with no space
    character in the PDF: only the distance tells words apart (as in many real PDFs)."""
    for word in line.split():
        canvas.drawString(x, y, word)
        x += stringWidth(word, FONT, SIZE) + gap


def pdf(*pages: Callable[[Canvas], None]) -> bytes:
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=(595, 842))
    for draw in pages:
        canvas.setFont(FONT, SIZE)
        draw(canvas)
        canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def test_words_two_points_apart_keep_their_spaces() -> None:
    # pdfplumber's default 3 pt tolerance read this line as "Thedefaultpriorityvalueis50."
    data = pdf(lambda c: words(c, 72, 760, "The default priority value is 50."))
    assert text_of(ingest(data)) == "The default priority value is 50."


def test_glyphs_one_point_apart_are_one_word() -> None:
    def draw(canvas: Canvas) -> None:
        x = 72.0
        for char in "Spacing":  # letter-spaced by 0.4 pt: still one word
            canvas.drawString(x, 760, char)
            x += stringWidth(char, FONT, SIZE) + 0.4
        words(canvas, 72, 747, "is not a gap between words")

    assert text_of(ingest(pdf(draw))) == "Spacing is not a gap between words"


def test_two_columns_are_read_one_after_the_other() -> None:
    left = ["Left column first line", "left column second line", "left column third line"]
    right = ["Right column first line", "right column second line", "right column third line"]

    def draw(canvas: Canvas) -> None:
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            canvas.drawString(72, 760 - 13 * i, a)
            canvas.drawString(320, 760 - 13 * i, b)

    assert text_of(ingest(pdf(draw))) == " ".join(left) + "\n\n" + " ".join(right)


def test_a_line_starting_with_a_hash_is_text_not_a_heading() -> None:
    def draw(canvas: Canvas) -> None:
        canvas.drawString(72, 760, "Edit the configuration file:")
        canvas.drawString(72, 747, "# comments start with a hash")
        canvas.drawString(72, 734, "```")
        canvas.drawString(72, 721, "and the file ends here.")

    prepared = ingest(pdf(draw))
    assert [chunk.heading_path for chunk in prepared.chunks] == [()]
    assert text_of(prepared) == (
        "Edit the configuration file: \\# comments start with a hash \\``` and the file ends here."
    )


def test_outline_levels_become_heading_levels_at_their_place() -> None:
    def first(canvas: Canvas) -> None:
        canvas.bookmarkHorizontal("install", 72, 775)
        canvas.addOutlineEntry("Installation", "install", level=0)
        canvas.drawString(72, 760, "Installation")
        canvas.drawString(72, 740, "Run the installer as an administrator.")
        canvas.bookmarkHorizontal("requirements", 72, 715)
        canvas.addOutlineEntry("Requirements", "requirements", level=1)
        canvas.drawString(72, 700, "1.1 Requirements")
        canvas.drawString(72, 680, "Python 3.11 or later.")

    def second(canvas: Canvas) -> None:
        for key, title, level in [
            ("usage", "Usage of the command line tool", 0),
            ("options", "Options", 1),  # not on the page: right after the heading before it
            ("verbose", "Verbose mode", 2),
        ]:
            canvas.bookmarkPage(key)
            canvas.addOutlineEntry(title, key, level=level)
        canvas.drawString(72, 760, "Usage of the")  # a title over two lines
        canvas.drawString(72, 747, "command line tool")
        canvas.drawString(72, 720, "Start it with lore serve.")
        canvas.drawString(72, 700, "2.1.1 Verbose mode")
        canvas.drawString(72, 680, "Pass --verbose to see every step.")

    usage = "Usage of the command line tool"
    sections = {tuple(c.heading_path): c.text for c in ingest(pdf(first, second)).chunks}
    assert sections == {
        ("Installation",): "Run the installer as an administrator.",
        ("Installation", "Requirements"): "Python 3.11 or later.",
        (usage, "Options"): "Start it with lore serve.",
        (usage, "Options", "Verbose mode"): "Pass --verbose to see every step.",
    }


def test_words_split_at_a_line_end_are_joined() -> None:
    def draw(canvas: Canvas) -> None:
        canvas.drawString(72, 760, "Dense retrieval is ef-")
        canvas.drawString(72, 747, "ficient and well-known.")

    assert text_of(ingest(pdf(draw))) == "Dense retrieval is efficient and well-known."


def test_fake_bold_glyphs_drawn_twice_are_read_once() -> None:
    def draw(canvas: Canvas) -> None:
        x = 72.0
        for char in "BOLD":
            canvas.drawString(x, 760, char)
            canvas.drawString(x + 0.5, 760, char)
            x += stringWidth(char, FONT, SIZE)
        canvas.drawString(72, 747, "and plain text after it")

    assert text_of(ingest(pdf(draw))) == "BOLD and plain text after it"


def test_text_turned_by_90_degrees_is_read_along_its_baseline() -> None:
    def draw(canvas: Canvas) -> None:
        canvas.drawString(72, 760, "Body text reads across the page.")
        canvas.saveState()
        canvas.translate(40, 300)
        canvas.rotate(90)
        canvas.drawString(0, 0, "arXiv stamp 2021")
        canvas.restoreState()

    assert text_of(ingest(pdf(draw))) == "Body text reads across the page.\n\narXiv stamp 2021"


def _refused_by_pdfminer(data: bytes) -> bytes:
    """The PDF with an ICC colour space lacking its required /N on the first page: pdfminer
    refuses the whole page (as on a real PDF of the example set), pypdf reads it."""
    import pypdf
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject, StreamObject

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    icc = StreamObject()
    icc.set_data(b"\x00" * 16)
    space = ArrayObject([NameObject("/ICCBased"), writer._add_object(icc)])
    resources = writer.pages[0]["/Resources"].get_object()
    resources[NameObject("/ColorSpace")] = DictionaryObject({NameObject("/CS0"): space})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_page_the_layout_engine_refuses_is_read_by_pypdf() -> None:
    def draw(canvas: Canvas) -> None:
        canvas.drawString(72, 760, "Colour spaces can be broken.")
        canvas.drawString(72, 740, "# still not a heading")

    prepared = ingest(_refused_by_pdfminer(pdf(draw)))
    assert text_of(prepared) == "Colour spaces can be broken. \\# still not a heading"
    assert list(prepared.warnings) == ["pages read as plain text, tables not detected: 1"]


def test_a_pdf_no_reader_can_read_is_an_extraction_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import pypdf

    def refuse(self: object, *args: object, **kwargs: object) -> str:
        raise pypdf.errors.PdfReadError("unreadable content stream")

    # pypdf reads every broken page drawn here, so its refusal is simulated: the point is
    # what lore does when both readers give up (it used to call the page "scanned").
    monkeypatch.setattr(pypdf.PageObject, "extract_text", refuse)
    data = _refused_by_pdfminer(pdf(lambda c: c.drawString(72, 760, "Nobody reads this page.")))
    with pytest.raises(ExtractionError, match=r"doc\.pdf is not a readable PDF file: no page"):
        ingest(data)


def test_table_cells_keep_their_words_and_stay_a_table() -> None:
    rows = [["Region", "Lead time"], ["North America", "six days"], ["Western Europe", "two days"]]

    def draw(canvas: Canvas) -> None:
        words(canvas, 72, 760, "Delivery times by region are listed below.")
        top, height, columns = 740, 20, [72, 252, 432]
        canvas.grid(columns, [top - height * i for i in range(len(rows) + 1)])
        for i, row in enumerate(rows):
            for x, value in zip(columns, row, strict=False):
                words(canvas, x + 4, top - height * i - 14, value)
        words(canvas, 72, top - height * len(rows) - 20, "Orders placed on Friday ship on Monday.")

    assert text_of(ingest(pdf(draw))) == (
        "Delivery times by region are listed below.\n\n"
        "| Region | Lead time |\n|---|---|\n"
        "| North America | six days |\n| Western Europe | two days |\n\n"
        "Orders placed on Friday ship on Monday."
    )


def test_damaged_pdfs_are_read_or_refused_with_an_ingest_error() -> None:
    def draw(canvas: Canvas) -> None:
        canvas.bookmarkPage("top")
        canvas.addOutlineEntry("Top", "top", level=0)
        for i in range(12):
            canvas.drawString(72, 760 - 13 * i, f"Line {i} of a page that is about to be damaged.")

    data = pdf(draw, draw)
    rng = random.Random(15)
    outcomes: set[str] = set()
    for _ in range(60):
        damaged = bytearray(data)
        for _ in range(rng.choice([1, 4, 16])):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            ingest(bytes(damaged[: rng.choice([len(damaged), rng.randrange(len(damaged))])]))
            outcomes.add("read")
        except IngestError as exc:
            outcomes.add(type(exc).__name__)
    assert "read" in outcomes and "ExtractionError" in outcomes
