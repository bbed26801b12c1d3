"""Run every file of the unstructured example documents through lore's extraction and chunking.

    python benchmarks/documents_eval.py [--corpus DIR] [--verbose]

Each file goes through what an upload goes through (type detection, the sandboxed extractor
with its limits, the heading-aware chunker with the model's tokenizer), without embedding. Prints
per detected format: files, succeeded, failed (with reasons), chunks, seconds; files of types lore
does not ingest are listed apart.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from _common import DATA

from api import Settings
from api.service import extraction_limits, extraction_tools
from ingest import (
    ChunkingOptions,
    IngestError,
    Sandbox,
    SentenceTransformerEmbedder,
    SourceDocument,
    UnsupportedTypeError,
    detect_type,
    prepare,
)

CORPUS = DATA / "documents" / "unstructured-example-docs"


@dataclass
class Row:
    files: int = 0
    ok: int = 0
    chunks: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--verbose", action="store_true", help="one line per file")
    args = parser.parse_args()

    settings = Settings()
    tools, limits = extraction_tools(settings), extraction_limits(settings)
    sandbox = Sandbox(settings.documents.timeout_s, settings.documents.memory_mb or None)
    tokens = SentenceTransformerEmbedder().count_tokens
    print(
        f"tools: soffice={tools.soffice} tesseract={tools.tesseract} ffmpeg={tools.ffmpeg} "
        f"transcriber={tools.transcriber}"
    )
    rows: dict[str, Row] = defaultdict(Row)
    unsupported: list[str] = []
    files = sorted(p for p in args.corpus.rglob("*") if p.is_file())
    total = time.perf_counter()
    for path in files:
        name = str(path.relative_to(args.corpus))
        data = path.read_bytes()
        try:
            doc_type = detect_type(data, path.name)
        except UnsupportedTypeError:
            unsupported.append(path.suffix.lower() or path.name)
            continue
        except IngestError as exc:
            doc_type = path.suffix.lstrip(".").lower() or "?"
            rows[doc_type].files += 1
            rows[doc_type].failures.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        row = rows[doc_type]
        row.files += 1
        source = SourceDocument("eval", data, f"upload://{path.name}", "upload", "eval", path.name)
        start = time.perf_counter()
        try:
            prepared = prepare(source, ChunkingOptions(), tokens, sandbox.extract, limits, tools)
        except IngestError as exc:
            row.seconds += time.perf_counter() - start
            row.failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:200]}")
            if args.verbose:
                print(f"FAIL {name}: {exc}")
            continue
        elapsed = time.perf_counter() - start
        row.seconds += elapsed
        row.ok += 1
        row.chunks += len(prepared.chunks)
        row.warnings.extend(f"{name}: {w}" for w in prepared.warnings)
        if args.verbose:
            print(f"ok   {name}: {len(prepared.chunks)} chunks, {elapsed:.2f} s")
    print(f"\n{len(files)} files in {time.perf_counter() - total:.0f} s\n")
    print("| format | files | succeeded | failed | chunks | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    for doc_type in sorted(rows):
        row = rows[doc_type]
        print(
            f"| {doc_type} | {row.files} | {row.ok} | {len(row.failures)} | {row.chunks} "
            f"| {row.seconds:.1f} |"
        )
    failures = [f for r in rows.values() for f in r.failures]
    warnings = [w for r in rows.values() for w in r.warnings]
    kinds = sorted(set(unsupported), key=lambda k: (-unsupported.count(k), k))
    skipped = [f"{kind}: {unsupported.count(kind)} files" for kind in kinds]
    for title, lines in (
        ("failed", failures),
        ("warnings", warnings),
        ("not ingested (type not supported, or not what its name says)", skipped),
    ):
        print(f"\n{title} ({len(lines)}):")
        for line in lines:
            print(f"  {line}")


if __name__ == "__main__":
    main()
