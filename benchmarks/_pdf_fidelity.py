"""PDF fidelity: does lore keep a PDF's words, with their spaces, and all of its text?

    python benchmarks/_pdf_fidelity.py [--data DIR] [PATH ...]

Imported by `fidelity_eval.py`; `unstructured_pdf_eval.py` reuses the scoring with another
extractor (this module imports lore only inside `lore_markdown`, so it runs in a venv without lore).

Definitions, per file:

- tokens: runs of letters and digits (`[^\\W_]+`) after NFKC normalisation and lowercasing;
  a token's letters are its alphabetic characters;
- lore's text: the Markdown lore's extractor writes for the file (`ingest.formats.extract`, type
  `pdf`, OCR off: `Tools(tesseract=None)`); a ToolMissingError or ExtractionError is a row with
  the error;
- the references: plain `pdftotext FILE -` (poppler-utils; reading order, not `-layout`) and
  pypdf's `extract_text()` of every page;
- glued tokens: lore tokens of >= 25 letters that are a token of neither reference
  (`Thedefaultpriorityvalueis50`);
- glued-word rate: letters in glued tokens / letters in all lore tokens;
- text recall: |multiset(pdftotext tokens) ∩ multiset(lore tokens)| / |pdftotext tokens|.

Default files: every `*.pdf` under DATA/documents (recursively) plus the Debian manuals below that
are installed (`.gz` is gunzipped in memory). A file encrypted with a password is reported as
such and not scored. Targets: glued <= 1 % on every file, recall >= 98 %.
"""

from __future__ import annotations

import argparse
import gzip
import io
import re
import subprocess
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEBIAN_PDFS = [
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/usr/share/doc/fontconfig/fontconfig-user.pdf.gz"),
    Path("/usr/share/doc/bzip2/manual.pdf.gz"),
    Path("/usr/share/doc/nettle-dev/nettle.pdf.gz"),
    Path("/usr/share/doc/zlib1g-dev/crc-doc.1.0.pdf.gz"),
]
GLUED_LETTERS = 25
GLUED_TARGET = 0.01
RECALL_TARGET = 0.98
_TOKEN = re.compile(r"[^\W_]+")

# An extractor under test: (PDF bytes, file name) -> its text.
Extract = Callable[[bytes, str], str]


def default_pdfs(data: Path = DATA) -> list[Path]:
    found = sorted((data / "documents").rglob("*.pdf"))
    return found + [p for p in DEBIAN_PDFS if p.is_file()]


def read_pdf(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def letters(token: str) -> int:
    return sum(c.isalpha() for c in token)


def pdftotext(data: bytes) -> str:
    result = subprocess.run(
        ["pdftotext", "-q", "-", "-"], input=data, capture_output=True, timeout=300, check=False
    )
    return result.stdout.decode("utf-8", "replace")


def pypdf_text(data: bytes) -> str:
    import pypdf  # noqa: PLC0415

    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        reader.decrypt("")
    texts = []
    for page in reader.pages:
        try:
            texts.append(page.extract_text() or "")
        except Exception:  # a page pypdf cannot read adds nothing to the reference
            texts.append("")
    return "\n".join(texts)


def page_count(data: bytes) -> int | None:
    """Pages, or None for a PDF that needs a password."""
    import pypdf  # noqa: PLC0415

    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted and not reader.decrypt(""):
        return None
    return len(reader.pages)


def lore_markdown(data: bytes, name: str) -> str:
    """lore's Markdown for a PDF, OCR off (imported here: the module runs without lore)."""
    from ingest.formats import ExtractRequest, Tools, extract  # noqa: PLC0415

    request = ExtractRequest(data=data, doc_type="pdf", filename=name, tools=Tools(tesseract=None))
    return extract(request).markdown


def glued_tokens(text: str, *references: str) -> list[str]:
    known: set[str] = set()
    for reference in references:
        known.update(tokens(reference))
    return [t for t in tokens(text) if letters(t) >= GLUED_LETTERS and t not in known]


def score(text: str, reference: str, other: str = "") -> dict[str, Any]:
    """Glued-word rate and recall of `text` against pdftotext's `reference` (and pypdf's
    `other`, which only widens what counts as a real long word)."""
    ours = tokens(text)
    glued = glued_tokens(text, reference, other)
    total_letters = sum(letters(t) for t in ours)
    truth = Counter(tokens(reference))
    found = sum((truth & Counter(ours)).values())
    return {
        "glued": sum(letters(t) for t in glued) / total_letters if total_letters else 0.0,
        "recall": found / sum(truth.values()) if truth else None,  # pdftotext reads nothing
        "examples": sorted(set(glued), key=glued.index)[:3],
    }


def pdf_rows(paths: Iterable[Path], extract: Extract = lore_markdown) -> list[dict[str, Any]]:
    """One row per file: file, pages, glued, recall, seconds, examples, error."""
    rows: list[dict[str, Any]] = []
    for path in paths:
        row: dict[str, Any] = {"file": path.name, "pages": None, "error": ""}
        rows.append(row)
        data = read_pdf(path)
        try:
            row["pages"] = page_count(data)
        except Exception:  # pypdf cannot read it: scored all the same, its text left out
            row["pages"] = 0
        if row["pages"] is None:
            row["error"] = "encrypted with a password: skipped"
            continue
        started = time.perf_counter()
        try:
            text = extract(data, path.name)
        except Exception as exc:  # ToolMissingError, ExtractionError, or a crash: all reported
            row["error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
            text = ""
        row["seconds"] = time.perf_counter() - started
        row.update(score(text, pdftotext(data), pypdf_text(data) if row["pages"] else ""))
    return rows


def print_pdf_table(rows: list[dict[str, Any]]) -> None:
    print("| PDF | pages | glued words | recall vs pdftotext | s/page | glued examples / error |")
    print("|---|---:|---:|---:|---:|---|")
    for row in rows:
        if "glued" not in row:
            print(f"| {row['file']} | | | | | {row['error']} |")
            continue
        per_page = row["seconds"] / max(1, row["pages"] or 1)
        note = row["error"] or ", ".join(e[:40] for e in row["examples"])
        recall = "n/a" if row["recall"] is None else f"{row['recall']:.1%}"
        print(
            f"| {row['file']} | {row['pages']} | {row['glued']:.1%} | {recall} "
            f"| {per_page:.3f} | {note} |"
        )
    scored = [r for r in rows if "glued" in r]
    over = [r["file"] for r in scored if r["glued"] > GLUED_TARGET]
    recalls = [r for r in scored if r["recall"] is not None]
    low = [r for r in recalls if r["recall"] < RECALL_TARGET]
    lowest = min(recalls, key=lambda r: r["recall"]) if recalls else None
    seconds = sum(r["seconds"] for r in scored)
    pages = sum(r["pages"] or 0 for r in scored)
    print(
        f"\n{len(scored)} PDFs scored ({len(rows) - len(scored)} skipped), {pages} pages, "
        f"{seconds / max(1, pages):.3f} s/page; over {GLUED_TARGET:.0%} glued: {len(over)}"
        + (f" ({', '.join(over)})" if over else "")
        + f"; under {RECALL_TARGET:.0%} recall: {len(low)}"
        + (f"; min recall {lowest['recall']:.1%} ({lowest['file']})" if lowest else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="PDF files (default: the suite)")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args()
    print_pdf_table(pdf_rows(args.paths or default_pdfs(args.data)))


if __name__ == "__main__":
    main()
