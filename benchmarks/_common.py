"""Helpers shared by the benchmark scripts (not part of the lore package)."""

from __future__ import annotations

import argparse
import functools
import resource
import statistics
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ingest import SourceDocument

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")
TRAFILATURA_EVAL = DATA / "extraction" / "trafilatura-eval" / "tests" / "eval"


def default_corpus() -> Path:
    """The Python docs from Debian's python3.11-doc when installed, else trafilatura's pages."""
    return PYTHON_DOCS if PYTHON_DOCS.is_dir() else TRAFILATURA_EVAL


def html_files(corpus: Path, limit: int) -> list[Path]:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".html", ".htm") and p.is_file())
    if not files:
        raise SystemExit(f"no HTML files under {corpus}")
    return files[:limit] if limit else files


def add_embedding_option(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """--embedding: the backend to measure, lore's default unless told (never the hash fake)."""
    parser.add_argument(
        "--embedding",
        default="auto",
        choices=["auto", "onnx-int8", "sentence-transformers", "onnx"],
        help=help,
    )


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (
        f"p50 {percentile(ms, 50):.1f} ms, p95 {percentile(ms, 95):.1f} ms, "
        f"mean {statistics.fmean(ms):.1f} ms, max {max(ms):.1f} ms (n={len(ms)})"
    )


def page_source(tenant: str, corpus: Path, path: Path) -> SourceDocument:
    """A corpus page as a crawled link would arrive."""
    return SourceDocument(
        tenant_id=tenant,
        data=path.read_bytes(),
        url=f"http://docs.bench.test/{path.relative_to(corpus).as_posix()}",
        source="link",
        source_id="bench",
        filename=path.name,
    )


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def send_head(self):  # type: ignore[no-untyped-def]
        """Clean URLs, as static hosts serve them: `/api` is `api.html` when there is one (a
        folder `api/` beside it too: Zudoku's build), before the folder's redirect."""
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        local = Path(self.translate_path(path))
        if (
            not path.endswith("/")
            and not local.is_file()
            and local.with_name(local.name + ".html").is_file()
        ):
            self.path = path + ".html"
        return super().send_head()


def serve_directory(root: Path) -> tuple[ThreadingHTTPServer, str]:
    """A stdlib static server for `root` on 127.0.0.1 (it answers If-Modified-Since with 304);
    returns it and its base URL. Call `shutdown()` when done."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root))
    )
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
