"""Every upload format becomes Markdown with headings and intact tables. Fixtures are generated
here (python-docx, openpyxl, python-pptx, reportlab, LibreOffice, espeak-ng); extraction runs
in-process except where the sandbox itself is under test."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from ingest import (
    ExtractionError,
    ExtractRequest,
    Limits,
    PreparedDocument,
    ProtectedDocumentError,
    SourceDocument,
    ToolMissingError,
    Tools,
    UnsafeDocumentError,
    UnsupportedTypeError,
    detect_type,
    extract,
    prepare,
)
from ingest.formats.base import Extracted

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
TESSERACT = shutil.which("tesseract")
FFMPEG = shutil.which("ffmpeg")
ESPEAK = shutil.which("espeak-ng")
TOOLS = Tools(soffice=SOFFICE, tesseract=TESSERACT, ffmpeg=FFMPEG)


def ingest(data: bytes, filename: str, tools: Tools = TOOLS, **limits: int) -> PreparedDocument:
    source = SourceDocument("t", data, f"upload://{filename}", "upload", "upload", filename)
    return prepare(source, limits=Limits(**limits), tools=tools)


def by_heading(prepared: PreparedDocument) -> dict[tuple[str, ...], str]:
    sections: dict[tuple[str, ...], str] = {}
    for chunk in prepared.chunks:
        key = tuple(chunk.heading_path)
        sections[key] = sections.get(key, "") + "\n" + chunk.text
    return sections


def table_rows(text: str) -> list[list[str]]:
    rows = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert rows and set(rows[1].replace("|", "").strip()) <= {"-", ":"}, text
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows if "---" not in r]


# office formats -------------------------------------------------------------------------------


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Operations manual", level=0)
    document.add_heading("Installation", level=1)
    document.add_paragraph("Run the installer as an administrator.")
    document.add_paragraph("Open the firewall", style="List Bullet")
    document.add_heading("Ports", level=2)
    table = document.add_table(rows=3, cols=3)
    values_by_row = [("Service", "Port", "Protocol"), ("api", "8741", "TCP"), ("dns", "53", "UDP")]
    for row, values in zip(table.rows, values_by_row, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_paragraph("Restart after changing a port.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_docx_headings_lists_and_tables_in_order() -> None:
    prepared = ingest(make_docx(), "manual.docx")
    assert prepared.document.doc_type == "docx" and prepared.extractor == "python-docx"
    sections = by_heading(prepared)
    install = sections[("Operations manual", "Installation")]
    assert "administrator" in install and "- Open the firewall" in install
    ports = sections[("Operations manual", "Installation", "Ports")]
    assert table_rows(ports) == [
        ["Service", "Port", "Protocol"],
        ["api", "8741", "TCP"],
        ["dns", "53", "UDP"],
    ]
    assert ports.index("| dns") < ports.index("Restart after")
    assert prepared.document.title == "Operations manual"


def make_xlsx(rows: int = 3) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Prices"
    sheet.append(["Product", "Price", "Currency"])
    for i in range(rows):
        sheet.append([f"widget-{i}", 10 + i, "EUR"])
    other = book.create_sheet("Contacts")
    other.append(["Name", "Email"])
    other.append(["Ada", "ada@example.com"])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_xlsx_a_section_and_table_per_sheet_with_header_repeated_on_split() -> None:
    prepared = ingest(make_xlsx(rows=400), "prices.xlsx")
    price_chunks = [c for c in prepared.chunks if c.heading_path == ("Sheet: Prices",)]
    assert len(price_chunks) > 2  # a big sheet is split by rows ...
    for chunk in price_chunks:  # ... and every part keeps the header names
        assert table_rows(chunk.text)[0] == ["Product", "Price", "Currency"]
    rows = [r for c in price_chunks for r in table_rows(c.text)[1:]]
    assert ["widget-399", "409", "EUR"] in rows
    assert len({r[0] for r in rows}) == 400
    contacts = by_heading(prepared)[("Sheet: Contacts",)]
    assert table_rows(contacts) == [["Name", "Email"], ["Ada", "ada@example.com"]]


def test_row_limit_keeps_the_first_rows_and_warns() -> None:
    prepared = ingest(make_xlsx(rows=50), "prices.xlsx", max_rows=11)
    assert any("first 11" in w for w in prepared.warnings)
    assert "widget-9" in "".join(c.text for c in prepared.chunks)
    assert "widget-20" not in "".join(c.text for c in prepared.chunks)


def make_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly results"
    slide.placeholders[1].text = "Revenue grew in every region"
    slide.notes_slide.notes_text_frame.text = "Mention the new office in Lyon."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Headcount"
    shape = second.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, values in enumerate([("Team", "People"), ("Sales", "12"), ("Support", "7")]):
        for c, value in enumerate(values):
            shape.table.cell(r, c).text = value
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def test_pptx_a_section_per_slide_with_tables_and_notes() -> None:
    sections = by_heading(ingest(make_pptx(), "deck.pptx"))
    first = sections[("Slide 1: Quarterly results",)]
    assert "Revenue grew" in first and "Notes: Mention the new office in Lyon." in first
    assert table_rows(sections[("Slide 2: Headcount",)]) == [
        ["Team", "People"],
        ["Sales", "12"],
        ["Support", "7"],
    ]


def make_epub() -> bytes:
    buffer = io.BytesIO()
    chapter = (
        "<html xmlns='http://www.w3.org/1999/xhtml'><head><title>{0}</title></head>"
        "<body><h1>{0}</h1><p>{1}</p></body></html>"
    )
    with zipfile.ZipFile(buffer, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr(
            "META-INF/container.xml",
            "<?xml version='1.0'?><container version='1.0' "
            "xmlns='urn:oasis:names:tc:opendocument:xmlns:container'><rootfiles>"
            "<rootfile full-path='OEBPS/content.opf' media-type='application/oebps-package+xml'/>"
            "</rootfiles></container>",
        )
        book.writestr(
            "OEBPS/content.opf",
            "<?xml version='1.0'?><package xmlns='http://www.idpf.org/2007/opf' version='3.0'>"
            "<metadata xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:title>Field guide"
            "</dc:title></metadata><manifest>"
            "<item id='c1' href='one.xhtml' media-type='application/xhtml+xml'/>"
            "<item id='c2' href='two.xhtml' media-type='application/xhtml+xml'/>"
            "</manifest><spine><itemref idref='c2'/><itemref idref='c1'/></spine></package>",
        )
        book.writestr("OEBPS/one.xhtml", chapter.format("Owls", "Owls hunt at night."))
        book.writestr("OEBPS/two.xhtml", chapter.format("Herons", "Herons wade in shallows."))
    return buffer.getvalue()


def test_epub_chapters_in_spine_order() -> None:
    prepared = ingest(make_epub(), "guide.epub")
    assert prepared.document.title == "Field guide"
    assert [c.heading_path for c in prepared.chunks] == [("Herons",), ("Owls",)]
    assert "wade in shallows" in prepared.chunks[0].text


# PDF ------------------------------------------------------------------------------------------


def make_pdf(
    encrypt: str | None = None, javascript: bool = False, text: bool = True, pages: int = 1
) -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Table, TableStyle

    buffer = io.BytesIO()
    styles = getSampleStyleSheet()
    story: list[object] = []
    for page in range(pages):
        story += [
            Paragraph(f"Shipping policy part {page + 1}", styles["Heading1"]),
            Paragraph("Orders ship within two business days from Rotterdam.", styles["Normal"]),
        ]
        table = Table([["Zone", "Days", "Fee"], ["EU", "2", "5 EUR"], ["US", "6", "20 EUR"]])
        table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 1, colors.black)]))
        story += [table, Paragraph("Returns are free within 30 days.", styles["Normal"])]
        story.append(PageBreak())
    SimpleDocTemplate(buffer, pagesize=A4, encrypt=encrypt).build(story)
    data = buffer.getvalue()
    if javascript or not text:
        import pypdf

        reader = pypdf.PdfReader(io.BytesIO(data))
        writer = pypdf.PdfWriter()
        if text:
            writer.append(reader)
        else:
            writer.add_blank_page(595, 842)
        if javascript:
            from pypdf.generic import DictionaryObject, NameObject, TextStringObject

            action = DictionaryObject(
                {
                    NameObject("/S"): NameObject("/JavaScript"),
                    NameObject("/JS"): TextStringObject("app.alert('hello');"),
                }
            )
            writer._root_object[NameObject("/OpenAction")] = action
        out = io.BytesIO()
        writer.write(out)
        data = out.getvalue()
    return data


def test_pdf_text_and_a_table_as_gfm_in_reading_order() -> None:
    prepared = ingest(make_pdf(), "policy.pdf")
    text = "\n".join(c.text for c in prepared.chunks)
    assert table_rows(text) == [
        ["Zone", "Days", "Fee"],
        ["EU", "2", "5 EUR"],
        ["US", "6", "20 EUR"],
    ]
    assert text.index("Rotterdam") < text.index("| Zone") < text.index("Returns are free")
    assert prepared.document.doc_type == "pdf" and not prepared.warnings


def test_pdf_page_limit_warns() -> None:
    prepared = ingest(make_pdf(pages=3), "policy.pdf", max_pages=2)
    text = "\n".join(c.text for c in prepared.chunks)
    assert "part 2" in text and "part 3" not in text
    assert any("first 2 of 3 pages" in w for w in prepared.warnings)


def test_encrypted_pdf_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ProtectedDocumentError, match="encrypted PDF"):
        ingest(make_pdf(encrypt="s3cret"), "locked.pdf")


def test_pdf_javascript_is_ignored_and_noted() -> None:
    prepared = ingest(make_pdf(javascript=True), "js.pdf")
    assert "Rotterdam" in prepared.chunks[0].text
    assert any("JavaScript" in w for w in prepared.warnings)


def test_scanned_pdf_without_ocr_says_how_to_enable_it() -> None:
    with pytest.raises(ToolMissingError, match="install tesseract-ocr"):
        ingest(make_pdf(text=False), "scan.pdf", tools=Tools(tesseract=None))


@pytest.mark.skipif(
    TESSERACT is None, reason="tesseract is not installed (apt-get install tesseract-ocr)"
)
def test_scanned_pdf_is_read_with_ocr() -> None:
    from PIL import Image, ImageDraw, ImageFont
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    image = Image.new("L", (1240, 400), 255)
    font = ImageFont.load_default(size=48)
    ImageDraw.Draw(image).text((40, 150), "Invoices are paid within thirty days", font=font)
    png = io.BytesIO()
    image.save(png, format="PNG")
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    from reportlab.lib.utils import ImageReader

    page.drawImage(ImageReader(io.BytesIO(png.getvalue())), 40, 500, width=515, height=166)
    page.save()
    prepared = ingest(buffer.getvalue(), "scan.pdf")
    assert "thirty days" in prepared.chunks[0].text.lower()


# structured text ------------------------------------------------------------------------------


def test_json_keeps_key_paths() -> None:
    spec = {"servers": [{"url": "https://api.example.com"}], "info": {"title": "Pets"}}
    sections = by_heading(ingest(json.dumps(spec).encode(), "spec.json"))
    assert "servers[0].url: https://api.example.com" in sections[("servers",)]
    assert "info.title: Pets" in sections[("info",)]


def test_ndjson_records_and_yaml_documents() -> None:
    records = b'{"id": 1, "name": "Ada"}\n{"id": 2, "name": "Grace"}\nnot json\n'
    prepared = ingest(records, "people.ndjson")
    assert "name: Grace" in by_heading(prepared)[("record 2 (line 2)",)]
    assert prepared.warnings == ("1 lines are not JSON and were skipped",)
    yaml_text = b"database:\n  host: db.internal\n  ports: [5432, 5433]\n"
    section = by_heading(ingest(yaml_text, "config.yaml"))[("database",)]
    assert "database.host: db.internal" in section and "database.ports[1]: 5433" in section


def test_csv_and_tsv_keep_header_names_and_columns() -> None:
    csv_text = b'city;country;population\nLyon;France;522000\n"Bern; BE";Switzerland;134000\n'
    prepared = ingest(csv_text, "cities.csv")
    assert table_rows(prepared.chunks[0].text) == [
        ["city", "country", "population"],
        ["Lyon", "France", "522000"],
        ["Bern; BE", "Switzerland", "134000"],
    ]
    tsv = ingest(b"key\tvalue\ntimeout\t30 s\n", "settings.tsv")
    assert table_rows(tsv.chunks[0].text) == [["key", "value"], ["timeout", "30 s"]]


def test_xml_element_paths() -> None:
    xml = b"<?xml version='1.0'?><catalog><book id='b1'><title>Dune</title></book></catalog>"
    section = by_heading(ingest(xml, "books.xml"))[("book b1",)]
    assert "catalog/book@id: b1" in section and "catalog/book/title: Dune" in section


# conversions and media ------------------------------------------------------------------------

RTF = rb"{\rtf1\ansi{\fonttbl\f0\fswiss Helvetica;}\f0\pard Backups run every night at two.\par}"


def test_formats_that_need_libreoffice_say_so_when_it_is_missing() -> None:
    with pytest.raises(ToolMissingError, match="LibreOffice"):
        ingest(RTF, "notes.rtf", tools=Tools(soffice=None))


@pytest.mark.skipif(
    SOFFICE is None, reason="LibreOffice is not installed (libreoffice-writer-nogui)"
)
def test_rtf_and_odt_through_libreoffice() -> None:
    prepared = ingest(RTF, "notes.rtf")
    assert prepared.extractor == "libreoffice+python-docx"
    assert "Backups run every night at two." in prepared.chunks[0].text
    odt = _soffice_convert(make_docx(), "docx", "odt")
    sections = by_heading(ingest(odt, "manual.odt"))
    assert ["api", "8741", "TCP"] in table_rows(
        sections[("Operations manual", "Installation", "Ports")]
    )


def _soffice_convert(data: bytes, source: str, target: str) -> bytes:
    from ingest.formats.convert import convert

    return convert(ExtractRequest(data, source, tools=TOOLS), target)


@pytest.mark.skipif(
    ESPEAK is None, reason="espeak-ng is not installed (it speaks the test sentence)"
)
def test_spoken_wav_is_transcribed(tmp_path: Path) -> None:
    wav = tmp_path / "speech.wav"
    sentence = "the meeting starts at nine in the morning"
    # A synthetic voice is hard for pocketsphinx's model; this voice and pace are understood.
    subprocess.run(
        [ESPEAK, "-v", "en-us+f2", "-s", "130", "-g", "4", "-w", str(wav), sentence], check=True
    )
    for tools in (TOOLS, Tools(ffmpeg=None)):  # through ffmpeg, and the stdlib WAV path
        prepared = ingest(wav.read_bytes(), "speech.wav", tools=tools)
        text = prepared.chunks[0].text.lower()
        assert prepared.extractor == "pocketsphinx"
        heard = [w for w in ("meeting", "starts", "morning") if w in text]
        assert len(heard) >= 2, text
        assert prepared.chunks[0].heading_path == ("Transcript 00:00:00",)


@pytest.mark.skipif(
    ESPEAK is None or FFMPEG is None, reason="needs espeak-ng and ffmpeg (apt-get install both)"
)
@pytest.mark.parametrize(
    ("ext", "codec"), [("mp3", "libmp3lame"), ("m4a", "aac"), ("webm", "libopus"), ("mp4", "aac")]
)
def test_compressed_audio_and_video_containers_are_transcribed(
    tmp_path: Path, ext: str, codec: str
) -> None:
    wav, encoded = tmp_path / "speech.wav", tmp_path / f"speech.{ext}"
    subprocess.run(
        [
            ESPEAK,
            "-v",
            "en-us+f2",
            "-s",
            "130",
            "-g",
            "4",
            "-w",
            str(wav),
            "the meeting starts at nine in the morning",
        ],
        check=True,
    )
    assert FFMPEG is not None
    subprocess.run(
        [FFMPEG, "-v", "error", "-y", "-i", str(wav), "-c:a", codec, str(encoded)], check=True
    )
    data = encoded.read_bytes()
    assert detect_type(data, "upload") == ext
    text = ingest(data, f"speech.{ext}").chunks[0].text.lower()
    assert sum(w in text for w in ("meeting", "starts", "morning")) >= 2, text


def test_media_without_a_transcriber_says_how_to_enable_one() -> None:
    wav = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 64
    with pytest.raises(ToolMissingError, match="LORE_MEDIA__TRANSCRIBER"):
        ingest(wav, "call.wav", tools=Tools(transcriber="none"))


# detection and hostile input ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "filename", "declared", "expected"),
    [
        (make_docx, "upload.bin", None, "docx"),  # magic bytes beat the extension
        (make_xlsx, "x", "application/octet-stream", "xlsx"),
        (make_pptx, "deck.pptx", None, "pptx"),
        (make_epub, "book", None, "epub"),
        (make_pdf, "report.txt", "text/plain", "pdf"),
        (lambda: RTF, "notes", None, "rtf"),
        (lambda: b'{"a": 1}', "data", None, "json"),
        (lambda: b'{"a": 1}\n{"a": 2}\n', "data", None, "ndjson"),
        (lambda: b"<?xml version='1.0'?><a/>", "data", None, "xml"),
        (lambda: b"a,b\n1,2\n", "data", "text/csv", "csv"),
        (lambda: b"k: v\n", "c.yml", None, "yaml"),
        (lambda: b"RIFF\x00\x00\x00\x00WAVEfmt ", "a", None, "wav"),
        (lambda: b"ID3\x04\x00" + b"\x00" * 20, "a", None, "mp3"),
        (lambda: b"\x00\x00\x00\x20ftypM4A " + b"\x00" * 20, "a", None, "m4a"),
        (lambda: b"\x00\x00\x00\x20ftypisom" + b"\x00" * 20, "a", None, "mp4"),
        (lambda: b"\x1aE\xdf\xa3" + b"\x00" * 20, "a", None, "webm"),
    ],
)
def test_detection_magic_first(make, filename: str, declared: str | None, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert detect_type(make(), filename, declared) == expected


def zip_bomb_docx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"<w:document>" + b" " * (20 * 1024 * 1024))
    return buffer.getvalue()


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<lolz>&lol3;</lolz>"""

YAML_BOMB = b"""a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


@pytest.mark.parametrize(
    ("data", "filename", "error", "says"),
    [
        (zip_bomb_docx(), "invoice.docx", UnsafeDocumentError, "decompression bomb"),
        (BILLION_LAUGHS, "feed.xml", UnsafeDocumentError, "entities"),
        (YAML_BOMB, "config.yaml", UnsafeDocumentError, "alias"),
        (make_pdf()[:1500], "cut.pdf", ExtractionError, "not a readable PDF"),
        (b"PK\x03\x04" + b"\x00" * 100, "broken.xlsx", UnsupportedTypeError, "zip"),
        (b"{\\rtf1 not really", "x.docx", ExtractionError, "could not read x.docx as RTF"),
        (b"just some words", "x.docx", UnsupportedTypeError, "not a DOCX"),
    ],
)
def test_hostile_files_fail_with_a_reason(
    data: bytes, filename: str, error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        ingest(data, filename)


def test_character_limit_truncates_with_a_warning() -> None:
    text = ("A sentence about limits. " * 400).encode()
    prepared = ingest(text, "long.txt", max_chars=2000)
    assert sum(len(c.text) for c in prepared.chunks) < 2600
    assert any("truncated" in w for w in prepared.warnings)


def test_extract_returns_markdown_for_every_registered_type() -> None:
    result = extract(ExtractRequest(b"# T\n\nbody", "markdown"))
    assert isinstance(result, Extracted) and result.title == "T"


def test_a_very_wide_table_becomes_one_record_per_row() -> None:
    header = ",".join(f"measurement_{i}_frequency_unstimulated" for i in range(120))
    rows = "\n".join(",".join(str(r * 1000 + i) for i in range(120)) for r in range(3))
    prepared = ingest(f"{header}\n{rows}\n".encode(), "wide.csv")
    text = "\n".join(c.text for c in prepared.chunks)
    assert "Row 3: measurement_0_frequency_unstimulated: 2000;" in text
    assert "measurement_119_frequency_unstimulated: 2119" in text
    assert len(prepared.chunks) < 40  # not one chunk per header repetition


def test_a_document_of_headings_only_is_still_indexed() -> None:
    prepared = ingest(b"<html><body><h3>Annual report 2020</h3></body></html>", "title.html")
    assert prepared.chunks[0].text == "Annual report 2020"


def test_xml_whose_declaration_names_the_wrong_encoding() -> None:
    data = "\ufeff<?xml version='1.0' encoding='UTF-8'?><a><b>Zürich</b></a>".encode("utf-16-le")
    assert "a/b: Zürich" in ingest(data, "f.xml").chunks[0].text


def test_images_in_iso_containers_are_not_taken_for_video() -> None:
    with pytest.raises(UnsupportedTypeError, match="image"):
        detect_type(b"\x00\x00\x00\x18ftypheic" + b"\x00" * 40, "photo.heic")
