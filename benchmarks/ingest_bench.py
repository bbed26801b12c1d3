"""Ingest N real HTML pages through lore's pipeline and print pages/s and chunks/s.

    python benchmarks/ingest_bench.py [--corpus DIR] [--limit N] [--data-dir DIR] [--sequential]

`Lore.ingest` (the default) extracts and chunks the next pages in a thread while a pass of
pages is embedded and stored (all-MiniLM-L6-v2 on the CPU, Qdrant Edge). `--sequential` runs
the two stages one after the other and times each: extract + chunk, then embed + store. The
model is exported to ONNX (once, in a child process) before the clock starts. Default corpus:
the Python docs from Debian's python3.11-doc if installed, else the trafilatura benchmark
pages in ../shared/data.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import add_embedding_option, default_corpus, html_files, page_source, peak_rss_mb

from api import Lore, Settings
from ingest import IngestError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--limit", type=int, default=200, help="pages (0 = all)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep the index here (default: a temporary directory)",
    )
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="extract every page, then embed them (the stages timed one by one)",
    )
    add_embedding_option(parser)
    args = parser.parse_args()

    files = html_files(args.corpus, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data_dir or Path(tmp)
        # The real model and engine; each page extracted as the server extracts it.
        settings = Settings(data_dir=data_dir, embedding={"backend": args.embedding})  # type: ignore[arg-type]
        lore = Lore(settings)
        t1 = None
        try:
            t0 = time.perf_counter()
            sources = [page_source(lore.tenant, args.corpus, path) for path in files]
            if args.sequential:
                prepared, failed = [], 0
                for src in sources:
                    try:
                        prepared.append(lore.prepare(src))
                    except IngestError:
                        failed += 1
                t1 = time.perf_counter()
                results = lore.index(prepared)
            else:
                outcomes = lore.ingest(sources)
                results = [r for r in outcomes if not isinstance(r, IngestError)]
                failed = len(outcomes) - len(results)
            t2 = time.perf_counter()
        finally:
            lore.close()

    chunks = sum(r.chunks for r in results)
    total = t2 - t0
    print(f"embedding: {lore.embedder.name}")
    print(f"corpus: {args.corpus} ({len(files)} pages, {failed} with no extractable text)")
    if t1 is not None:
        print(f"extract + chunk: {len(files) / (t1 - t0):.1f} pages/s ({t1 - t0:.1f} s)")
        print(f"embed + store:   {chunks / (t2 - t1):.1f} chunks/s ({t2 - t1:.1f} s)")
    print(
        f"full pipeline ({'sequential' if args.sequential else 'pipelined'}): "
        f"{len(results) / total:.2f} pages/s, {chunks / total:.1f} chunks/s, "
        f"{chunks} chunks in {total:.1f} s"
    )
    print(f"peak RSS: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
