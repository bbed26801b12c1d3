"""unstructured's PDF partitioner on lore's PDF fidelity suite, scored exactly as lore is.

    /tmp/unstructured/bin/python benchmarks/unstructured_pdf_eval.py [--strategy fast]
        [--data DIR] [--json OUT.json] [PATH ...]

Runs in a virtual environment of its own and imports nothing from lore:

    python3 -m venv /tmp/unstructured
    /tmp/unstructured/bin/pip install torch==2.13.0   # the CPU wheel, before anything pulls CUDA
    /tmp/unstructured/bin/pip install 'unstructured[pdf]'

Each file's text is the elements of `partition_pdf(file=..., strategy=...)` joined by blank
lines; glued words, recall against pdftotext and seconds per page come from
`_pdf_fidelity.py` (same definitions, same files). `--json` writes every file's text and figures.
A file the partitioner fails on, or returns nothing for, is a row with that error.

At run time unstructured downloads the spaCy model `en_core_web_sm` from GitHub; where that
fails (offline, or PyPI-only like here) `partition_pdf` logs "PDF text extraction failed, skip
text extraction..." and returns no elements. `--blank-spacy` puts a weightless English pipeline
(`spacy.blank("en")` + sentencizer) in its place, so the text extraction itself can be scored;
the element types it assigns (title, narrative text) are then not unstructured's own.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
from pathlib import Path

import spacy
import unstructured.nlp.tokenize
from _pdf_fidelity import DATA, Extract, default_pdfs, pdf_rows, print_pdf_table
from unstructured.partition.pdf import partition_pdf


def blank_spacy() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    unstructured.nlp.tokenize._get_nlp = lambda: nlp  # type: ignore[assignment]


def partitioner(strategy: str, texts: dict[str, str]) -> Extract:
    def extract(data: bytes, name: str) -> str:
        elements = partition_pdf(file=io.BytesIO(data), strategy=strategy)
        text = "\n\n".join(str(element) for element in elements)
        texts[name] = text
        if not text.strip():
            raise RuntimeError(f"partition_pdf returned no text ({len(elements)} elements)")
        return text

    return extract


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="PDF files (default: the suite)")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    parser.add_argument(
        "--strategy", default="fast", choices=["fast", "auto", "hi_res", "ocr_only"]
    )
    parser.add_argument("--json", type=Path, help="write each file's text and figures here")
    parser.add_argument("--blank-spacy", action="store_true", help="no spaCy model download")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.blank_spacy:
        blank_spacy()
    texts: dict[str, str] = {}
    rows = pdf_rows(args.paths or default_pdfs(args.data), partitioner(args.strategy, texts))
    spacy = "blank stand-in" if args.blank_spacy else "en_core_web_sm (downloaded at run time)"
    print(f"unstructured partition_pdf, strategy={args.strategy}, spaCy: {spacy}\n")
    print_pdf_table(rows)
    if args.json:
        for row in rows:
            row["text"] = texts.get(row["file"], "")
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
