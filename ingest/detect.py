"""Type detection (magic bytes first, then the declared content type, then the extension) and
decoding of text."""

from __future__ import annotations

import codecs
import io
import json
import re
import zipfile
from pathlib import PurePosixPath

from ingest.errors import EmptyDocumentError, ProtectedDocumentError, UnsupportedTypeError

DocType = str  # one of SUPPORTED

TEXT_TYPES = ("html", "markdown", "text", "csv", "tsv", "json", "ndjson", "yaml", "xml")
OFFICE_TYPES = ("pdf", "docx", "xlsx", "pptx", "epub", "odt", "doc", "xls", "ppt", "rtf")
MEDIA_TYPES = ("mp3", "wav", "m4a", "mp4", "webm", "ogg", "flac")
SUPPORTED: tuple[DocType, ...] = TEXT_TYPES + OFFICE_TYPES + MEDIA_TYPES

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
    ".rst": "text",
    ".org": "text",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".xml": "xml",
    **{f".{t}": t for t in OFFICE_TYPES + MEDIA_TYPES},
    ".mpga": "mp3",
    ".oga": "ogg",
}
_MEDIA_TYPE_NAMES: dict[str, DocType] = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "application/json": "json",
    "application/x-ndjson": "ndjson",
    "application/jsonl": "ndjson",
    "application/yaml": "yaml",
    "application/x-yaml": "yaml",
    "text/yaml": "yaml",
    "text/x-yaml": "yaml",
    "application/xml": "xml",
    "text/xml": "xml",
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/epub+zip": "epub",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/msword": "doc",
    "application/vnd.ms-excel": "xls",
    "application/vnd.ms-powerpoint": "ppt",
    "application/rtf": "rtf",
    "text/rtf": "rtf",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mp4": "m4a",
    "audio/x-m4a": "m4a",
    "video/mp4": "mp4",
    "video/webm": "webm",
    "audio/webm": "webm",
    "audio/ogg": "ogg",
    "audio/flac": "flac",
}
_ZIP_MEMBERS: tuple[tuple[str, DocType], ...] = (
    ("word/document.xml", "docx"),
    ("xl/workbook.xml", "xlsx"),
    ("ppt/presentation.xml", "pptx"),
)
_ZIP_MIMETYPES: dict[bytes, DocType] = {
    b"application/epub+zip": "epub",
    b"application/vnd.oasis.opendocument.text": "odt",
}
_OLE_STREAMS: tuple[tuple[bytes, DocType], ...] = (
    ("WordDocument".encode("utf-16-le"), "doc"),
    ("Workbook".encode("utf-16-le"), "xls"),
    ("Book".encode("utf-16-le"), "xls"),
    ("PowerPoint Document".encode("utf-16-le"), "ppt"),
)
_IMAGE_BRANDS = (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis")
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HTML_SNIFF = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b", re.I | re.S)
_HTML_TAGS = re.compile(rb"<(p|div|h[1-6]|table|article|main|section|a\s)[\s>]", re.I)
_XML_SNIFF = re.compile(rb"^\s*<\?xml[^>]*>", re.I)
_MD_HEADING = re.compile(r"^#{1,6} \S", re.M)
_CHARSET = re.compile(r"charset=([\w.:-]+)", re.I)
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([\w.:-]+)", re.I)
_SNIFF_BYTES = 8192
_SINGLE_BYTE_WESTERN = {"iso-8859-1", "latin-1", "latin1", "iso-8859-15", "windows-1252", "cp1252"}
_UTF_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def bomless_utf16(data: bytes) -> str | None:
    """The codec of UTF-16 text without a byte-order mark (mostly-ASCII text: every other
    byte is zero), else None."""
    sample = data[: _SNIFF_BYTES & ~1]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    for zeros, chars, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        printable = sum(1 for b in chars if b >= 32 or b in (9, 10, 13))
        if zeros.count(0) > 0.9 * len(zeros) and printable > 0.9 * len(chars):
            return codec
    return None


def looks_binary(data: bytes) -> bool:
    """True when the head of the data is not text in any common encoding."""
    head = data[:_SNIFF_BYTES]
    if head.startswith(_UTF_BOMS) or bomless_utf16(head):
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


def _zip_type(data: bytes) -> DocType | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if "mimetype" in names:
                mimetype = archive.read("mimetype").strip()
                if mimetype in _ZIP_MIMETYPES:
                    return _ZIP_MIMETYPES[mimetype]
            for member, doc_type in _ZIP_MEMBERS:
                if member in names:
                    return doc_type
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    return None


def _ole_type(data: bytes, what: str) -> DocType | None:
    if "EncryptedPackage".encode("utf-16-le") in data:
        raise ProtectedDocumentError(
            f"{what} is a password-protected Office document; remove the password and upload "
            "it again"
        )
    for stream, doc_type in _OLE_STREAMS:
        if stream in data:
            return doc_type
    return None


def sniff(data: bytes, what: str = "the upload") -> DocType | None:
    """The type the bytes themselves announce, or None for text and unknown binaries."""
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        return _zip_type(data) or "zip"
    if head.startswith(_OLE_MAGIC):
        return _ole_type(data, what) or "ole"
    if head.startswith(b"{\\rtf"):
        return "rtf"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE6 == 0xE2):
        return "mp3"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in _IMAGE_BRANDS:
            return "image"
        return "m4a" if brand in (b"M4A ", b"M4B ") else "mp4"
    if head.startswith(b"\x1aE\xdf\xa3"):
        return "webm"
    if head.startswith(b"OggS"):
        return "ogg"
    if head.startswith(b"fLaC"):
        return "flac"
    return None


def _sniff_text(data: bytes) -> DocType | None:
    head = data[:_SNIFF_BYTES]
    if _HTML_SNIFF.match(head):
        return "html"
    if _XML_SNIFF.match(head):
        return "xml"
    stripped = data.strip()
    if stripped[:1] in (b"{", b"["):
        try:
            json.loads(stripped)
        except ValueError:
            lines = [ln for ln in stripped.splitlines()[:20] if ln.strip()]
            try:
                for line in lines:
                    json.loads(line)
            except ValueError:
                return None
            return "ndjson" if len(lines) > 1 else None
        return "json"
    return None


def _unsupported(what: str) -> str:
    return f"lore ingests {', '.join(SUPPORTED)}; {what}"


def detect_type(
    data: bytes, filename: str | None = None, content_type: str | None = None
) -> DocType:
    """Decide what the content is. Raises `UnsupportedTypeError`, `EmptyDocumentError` or
    `ProtectedDocumentError`."""
    if not data.strip():
        raise EmptyDocumentError("the document is empty")
    name = PurePosixPath(filename or "").name
    ext = PurePosixPath(name.lower()).suffix
    media = _media_type(content_type)
    declared = _MEDIA_TYPE_NAMES.get(media)
    by_ext = _EXTENSIONS.get(ext)
    what = name or media or "the upload"
    hint = by_ext or declared
    magic = sniff(data, what)
    if magic == "zip":
        if hint in ("docx", "xlsx", "pptx", "epub", "odt"):
            raise UnsupportedTypeError(
                f"{what} is a zip archive without the parts of a {hint.upper()} file; it may "
                "be damaged or of another kind"
            )
        raise UnsupportedTypeError(_unsupported(f"{what} is a zip archive"))
    if magic == "image":
        raise UnsupportedTypeError(_unsupported(f"{what} is an image (HEIF/AVIF)"))
    if magic == "ole":
        if hint in ("doc", "xls", "ppt"):
            return hint
        raise UnsupportedTypeError(_unsupported(f"{what} is an OLE2 file of an unknown kind"))
    if magic is not None:
        if magic == "mp4" and hint == "m4a":
            return "m4a"
        return magic
    if looks_binary(data):
        kind = f", not a valid {hint.upper()} file" if hint else " of an unknown kind"
        raise UnsupportedTypeError(f"{what} is binary data{kind}; " + _unsupported("refused"))
    if hint is not None and hint not in TEXT_TYPES and hint != "rtf":
        raise UnsupportedTypeError(f"{what} is text, not a {hint.upper()} file")
    if _HTML_SNIFF.match(data[:_SNIFF_BYTES]):
        return "html"
    if declared is not None:
        return declared
    if by_ext is not None:
        return by_ext
    if media and not media.startswith("text/"):
        raise UnsupportedTypeError(_unsupported(f"content type {media!r} is not supported"))
    if ext and ext not in _EXTENSIONS:
        raise UnsupportedTypeError(_unsupported(f"file type {ext!r} is not supported"))
    sniffed = _sniff_text(data)
    if sniffed is not None:
        return sniffed
    if _HTML_TAGS.search(data[:_SNIFF_BYTES]):
        return "html"
    text = data[:_SNIFF_BYTES].decode("utf-8", "replace")
    return "markdown" if _MD_HEADING.search(text) else "text"


def decode_text(data: bytes, content_type: str | None = None) -> str:
    """Decode bytes as the BOM, the declared charset, UTF-8, then Windows-1252 (as browsers do)."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(encoding, "replace")
    utf16 = bomless_utf16(data)
    if utf16:
        return data.decode(utf16, "replace")
    match = _CHARSET.search(content_type or "")
    candidates = [match.group(1)] if match else []
    meta = _META_CHARSET.search(data[:_SNIFF_BYTES])
    if meta:
        candidates.append(meta.group(1).decode("ascii", "ignore"))
    if candidates and candidates[0].lower().replace("_", "-") in _SINGLE_BYTE_WESTERN:
        # Declared Latin-1 but valid UTF-8 with non-ASCII bytes: the declaration is stale
        # (Latin-1 text is almost never valid UTF-8).
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            if not text.isascii():
                return text
    for encoding in (*candidates, "utf-8"):
        try:
            return data.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    # Mostly UTF-8 with a few broken bytes (pages stitched from several sources): keep UTF-8.
    lenient = data.decode("utf-8", "replace")
    broken = lenient.count("\ufffd")
    valid = sum(1 for ch in lenient if ord(ch) > 127) - broken
    if valid >= 20 * broken:
        return lenient
    return data.decode("cp1252", "replace")
