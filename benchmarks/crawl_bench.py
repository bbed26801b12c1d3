"""Crawl benchmark: the Python documentation (Debian's python3.11-doc, ~530 pages) served on
127.0.0.1 by a stdlib HTTP server (which answers If-Modified-Since with 304), crawled by lore's
spider three times:

1. fetch + extract + chunk only (no embedding, nothing stored): the crawler's own speed;
2. the full pipeline (embed with the default model, store in the embedded engine);
3. the same crawl again, nothing changed: time and chunks re-embedded (target: >= 20x faster
   than 2, zero re-embedded).

    .venv/bin/python benchmarks/crawl_bench.py [--corpus DIR] [--max-pages 1000]
    .venv/bin/python benchmarks/crawl_bench.py --skip-full --render browser   # Chromium pass
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import anyio.to_thread
from _common import PYTHON_DOCS, peak_rss_mb, serve_directory

from api import Lore, Settings
from api.jobs import run_job
from crawl import CrawlOptions, CrawlSpec, Page, PageResult, SiteCrawl
from ingest import IngestError, SourceDocument


class ExtractOnly:
    """Extracts and chunks each page like the real sink, then drops it."""

    def __init__(self, lore: Lore) -> None:
        self.lore = lore
        self.chunks = 0

    async def conditional_headers(self, url: str) -> dict[str, str]:
        return {}

    async def __call__(self, page: Page) -> PageResult:
        source = SourceDocument(
            tenant_id="bench",
            data=page.body,
            url=page.url,
            source="link",
            source_id="bench",
            content_type=page.content_type,
        )
        try:
            prepared = await anyio.to_thread.run_sync(self.lore.prepare, source)
        except IngestError as exc:
            return PageResult("failed", str(exc))
        self.chunks += len(prepared.chunks)
        return PageResult("ingested", chunks=len(prepared.chunks))


def settings(data_dir: Path, args: argparse.Namespace) -> Settings:
    return Settings(
        data_dir=data_dir,
        fetch={"allow_private_addresses": True},  # type: ignore[arg-type]
        crawl={"max_concurrency": args.concurrency, "max_urls_per_job": 20_000},  # type: ignore[arg-type]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=PYTHON_DOCS)
    parser.add_argument("--max-pages", type=int, default=1000)
    parser.add_argument("--max-depth", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--skip-full", action="store_true", help="only the fetch+extract pass")
    parser.add_argument(
        "--render", choices=("http", "browser", "auto"), default="http", help="for that pass"
    )
    args = parser.parse_args()
    if not args.corpus.is_dir():
        raise SystemExit(f"{args.corpus} is missing: apt-get install -y python3.11-doc")
    server, base = serve_directory(args.corpus)
    start_url = f"{base}/index.html"
    spec = CrawlSpec(
        start_url,
        "spider",
        max_pages=args.max_pages,
        max_depth=args.max_depth,
        render=args.render,
    )
    print(f"corpus {args.corpus} served at {base}; spider from {start_url}")

    with tempfile.TemporaryDirectory() as tmp:
        lore = Lore(settings(Path(tmp) / "extract", args))
        try:
            sink = ExtractOnly(lore)
            options = CrawlOptions(
                fetch=lore.fetch_options,
                max_concurrency=args.concurrency,
                per_host_concurrency=args.concurrency,
                max_urls=20_000,
                browser=lore.browser_options,
            )
            started = time.perf_counter()
            summary = asyncio.run(SiteCrawl("extract", spec, options, lore.catalog, sink).run())
            elapsed = time.perf_counter() - started
            for failed in lore.catalog.crawl_urls("extract", states=("failed",), limit=5):
                print(f"  failed: {failed.url}: {failed.reason[:160]}")
        finally:
            lore.close()
        pages = summary.counts["ingested"]
        print(
            f"fetch+extract (render {args.render}): {pages} pages, {sink.chunks} chunks "
            f"in {elapsed:.1f} s: "
            f"{pages / elapsed:.1f} pages/s ({summary.counts['skipped']} URLs skipped, "
            f"{summary.counts['failed']} failed)"
        )
        if args.skip_full:
            return

        lore = Lore(settings(Path(tmp) / "full", args))
        try:
            runs = []
            for label in ("full pipeline", "unchanged re-crawl"):
                job = lore.submit_link(
                    start_url, "spider", max_pages=args.max_pages, max_depth=args.max_depth
                )
                started = time.perf_counter()
                done = asyncio.run(run_job(lore, job.id))
                elapsed = time.perf_counter() - started
                counts = done.counts
                runs.append((elapsed, counts))
                for failed in lore.catalog.crawl_urls(job.id, states=("failed",), limit=5):
                    print(f"  failed: {failed.url}: {failed.reason[:160]}")
                handled = counts["ingested"] + counts["unchanged"]
                print(
                    f"{label}: {done.status}, {handled} pages in {elapsed:.1f} s: "
                    f"{handled / elapsed:.2f} pages/s; ingested {counts['ingested']}, unchanged "
                    f"{counts['unchanged']}, failed {counts['failed']}; chunks {counts['chunks']}"
                    f" ({counts['chunks'] / elapsed:.1f}/s), embedded {counts['embedded']}"
                )
        finally:
            lore.close()
        (first, _), (second, again) = runs
        print(
            f"second crawl {first / second:.1f}x faster than the first, "
            f"{again['embedded']} chunks re-embedded; peak RSS {peak_rss_mb():.0f} MB"
        )
    server.shutdown()


if __name__ == "__main__":
    main()
