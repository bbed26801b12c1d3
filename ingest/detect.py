"""Type detection (sniffing first, then declared content type, then extension) and decoding."""

from __future__ import annotations

import codecs
import re
from pathlib import PurePosixPath
from typing import Literal

from ingest.errors import EmptyDocumentError, UnsupportedTypeError

DocType = Literal["html", "markdown", "text"]
SUPPORTED: tuple[DocType, ...] = ("html", "markdown", "text")

_EXTENSIONS: dict[str, DocType] = {
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".log": "text",
}
_MEDIA_TYPES: dict[str, DocType] = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
}
_HTML_SNIFF = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b", re.I | re.S)
_HTML_TAGS = re.compile(rb"<(p|div|h[1-6]|table|article|main|section|a\s)[\s>]", re.I)
_MD_HEADING = re.compile(r"^#{1,6} \S", re.M)
_CHARSET = re.compile(r"charset=([\w.:-]+)", re.I)
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([\w.:-]+)", re.I)
_SNIFF_BYTES = 8192


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def looks_binary(data: bytes) -> bool:
    """True when the head of the data is not text in any common encoding."""
    head = data[:_SNIFF_BYTES]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    if b"\x00" in head:
        return True
    control = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27))
    if control > len(head) * 0.02:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the sniff boundary is still text.
        if exc.start < len(head) - 4:
            high = sum(1 for b in head if b >= 0x80)
            return high > len(head) * 0.3
    return False


def detect_type(
    data: bytes, filename: str | None = None, content_type: str | None = None
) -> DocType:
    """Decide what the content is. Raises `UnsupportedTypeError` or `EmptyDocumentError`."""
    if not data.strip():
        raise EmptyDocumentError("the document is empty")
    name = PurePosixPath(filename or "").name
    ext = PurePosixPath(name.lower()).suffix
    declared = _MEDIA_TYPES.get(_media_type(content_type))
    by_ext = _EXTENSIONS.get(ext)
    if looks_binary(data):
        what = name or _media_type(content_type) or "the upload"
        raise UnsupportedTypeError(
            f"{what} is binary data, not {by_ext or declared or 'text'}; lore ingests "
            f"{', '.join(SUPPORTED)} documents"
        )
    if _HTML_SNIFF.match(data[:_SNIFF_BYTES]):
        return "html"
    if declared is not None:
        return declared
    if by_ext is not None:
        return by_ext
    if _media_type(content_type) and not _media_type(content_type).startswith("text/"):
        raise UnsupportedTypeError(
            f"content type {_media_type(content_type)!r} is not supported; lore ingests "
            f"{', '.join(SUPPORTED)} documents"
        )
    if ext and ext not in _EXTENSIONS:
        raise UnsupportedTypeError(
            f"file type {ext!r} is not supported; lore ingests {', '.join(SUPPORTED)} documents "
            f"({', '.join(sorted(_EXTENSIONS))})"
        )
    if _HTML_TAGS.search(data[:_SNIFF_BYTES]):
        return "html"
    text = data[:_SNIFF_BYTES].decode("utf-8", "replace")
    return "markdown" if _MD_HEADING.search(text) else "text"


def decode_text(data: bytes, content_type: str | None = None) -> str:
    """Decode bytes as the BOM, the declared charset, UTF-8, then Windows-1252 (as browsers do)."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(encoding, "replace")
    match = _CHARSET.search(content_type or "")
    candidates = [match.group(1)] if match else []
    meta = _META_CHARSET.search(data[:_SNIFF_BYTES])
    if meta:
        candidates.append(meta.group(1).decode("ascii", "ignore"))
    for encoding in (*candidates, "utf-8"):
        try:
            return data.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return data.decode("cp1252", "replace")
