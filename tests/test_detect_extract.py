"""Type detection, decoding, HTML extraction and table repair."""

from __future__ import annotations

import re

import pytest

from ingest import (
    EmptyDocumentError,
    UnsupportedTypeError,
    decode_text,
    detect_type,
    extract_html,
)


@pytest.mark.parametrize(
    ("data", "filename", "content_type", "expected"),
    [
        (b"<!DOCTYPE html><html><body><p>x</p></body></html>", "page.txt", None, "html"),
        (b"<!-- c --><html><p>x</p></html>", None, "text/plain", "html"),
        (b"# Title\n\nbody", "notes.md", None, "markdown"),
        (b"# Title\n\nbody", "notes.txt", None, "text"),
        (b"# Title\n\nbody", None, "text/markdown; charset=utf-8", "markdown"),
        (b"# Title\n\nbody", None, None, "markdown"),
        (b"just words", None, None, "text"),
        (b"<div><p>fragment</p></div>", None, None, "html"),
        ("caf\u00e9 cr\u00e8me".encode("cp1252"), "menu.txt", None, "text"),
        (b"\xef\xbb\xbfBOM text", "bom.txt", None, "text"),
        (b"%PDF-1.7\n\x00\x00binary", "a.bin", None, "pdf"),
        (b"{}", None, "application/json", "json"),
    ],
)
def test_detects_types(
    data: bytes, filename: str | None, content_type: str | None, expected: str
) -> None:
    assert detect_type(data, filename, content_type) == expected


@pytest.mark.parametrize(
    ("data", "filename", "content_type", "error", "message"),
    [
        (b"", "a.md", None, EmptyDocumentError, "empty"),
        (b"\x00\x01\x02\xff" * 50, "a.html", None, UnsupportedTypeError, "binary"),
        (b"words", "a.docx", None, UnsupportedTypeError, ".docx"),
        (b"{}", None, "application/zip", UnsupportedTypeError, "application/zip"),
        (b"\x00\x01" * 100, "a.pdf", "application/pdf", UnsupportedTypeError, "not a valid PDF"),
    ],
)
def test_refuses_what_it_cannot_read(
    data: bytes, filename: str, content_type: str | None, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        detect_type(data, filename, content_type)


def test_mostly_utf8_with_a_few_broken_bytes_stays_utf8() -> None:
    data = ("Grüße aus Köln, schöne Grüße. " * 20).encode() + b"\xe4 broken"
    assert decode_text(data).startswith("Grüße aus Köln")
    stale = '<meta charset="iso-8859-1"><p>Größe</p>'.encode()  # declared Latin-1, is UTF-8
    assert "Größe" in decode_text(stale)


def test_utf16_text_without_a_byte_order_mark() -> None:
    for codec in ("utf-16-le", "utf-16-be"):
        data = "Plain notes about the rollout.\n".encode(codec) * 3
        assert detect_type(data, "notes.txt") == "text"
        assert decode_text(data).startswith("Plain notes about the rollout.")


def test_decoding_follows_bom_declared_and_meta_charsets() -> None:
    assert decode_text("né".encode("latin-1"), "text/plain; charset=latin-1") == "né"
    meta = b'<html><head><meta charset="windows-1252"></head><body>\x93hi\x94</body></html>'
    assert "\u201chi\u201d" in decode_text(meta)
    assert decode_text("naïve".encode()) == "naïve"
    assert decode_text(b"\x93smart\x94") == "\u201csmart\u201d"


def test_falls_back_to_readability_when_trafilatura_finds_little() -> None:
    # A page whose only content is in a bare div with short paragraphs: trafilatura keeps
    # little of it; whatever extractor wins, the text must be there and the boilerplate not.
    paragraphs = "".join(
        f"<div class='entry'><span>Step {i}: tighten bolt number {i} to 12 newton metres."
        f"</span></div>"
        for i in range(12)
    )
    html = (
        f"<html><head><title>Torque table</title></head><body><div id='menu'><a href='/'>"
        f"Home</a></div><div id='content'>{paragraphs}</div></body></html>"
    )
    extracted = extract_html(html)
    assert extracted.title == "Torque table"
    assert "tighten bolt number 7" in extracted.markdown
    assert extracted.extractor in ("trafilatura", "readability")


def test_sentences_with_emphasis_in_loose_text_stay_whole() -> None:
    # Recipe steps as loose text after a progress bar, each with a bold quantity: trafilatura's
    # formatting mode cut each sentence before the bold part and glued the next word to it
    # ("auf" / "**180 °C**vor."). Headings still come out as Markdown headings.
    sentences = [
        "Heize den Backofen schon einmal auf <strong>180 °C Ober- und Unterhitze</strong> vor.",
        "Mische in einer Rührschüssel <strong>150 g Weizenmehl</strong> mit 2 TL Backpulver.",
        "Gib die Butter und <b>4 Eier</b> dazu und verrühre alles zu einem glatten Teig.",
    ]
    steps = "".join(
        f"<div class='step'><div class='num'><span>{n}</span> von 3</div>"
        f"<div class='bar' role='progressbar'><div style='width: 12%'></div></div>"
        f"{sentence} <div role='button'><span>Bild anzeigen</span></div></div>"
        for n, sentence in enumerate(sentences, 1)
    )
    html = f"<html><body><main><h1>Maulwurfkuchen</h1><div>{steps}</div></main></body></html>"
    markdown = extract_html(html).markdown
    assert markdown.startswith("# Maulwurfkuchen\n")
    for sentence in sentences:
        plain = re.sub(r"</?(strong|b)>", "", sentence)
        assert plain in markdown, f"{plain!r} not whole in {markdown!r}"


def test_extraction_of_an_empty_page_is_empty() -> None:
    assert extract_html("<html><body><script>x()</script></body></html>").markdown == ""
