"""HTML main-content extraction quality on trafilatura's benchmark, with its metric.

    python benchmarks/extraction_eval.py [--data DIR] [--limit N] [--workers 2]

For every page in `tests/evaldata.json`: snippets that must appear (`with`) and boilerplate that
must not (`without`) are looked up as whitespace-normalised substrings of the output; P/R/F1
over all snippets (trafilatura's `eval_common.py`). Scored: lore's extractor (trafilatura to
Markdown, readability fallback) with its Markdown reduced to text (heading, list and table markup
removed: the metric compares text), and trafilatura's own canonical runner (fallback
mode, tables, no formatting) on the same pages and machine. Published: trafilatura 2.2.0 F1 0.924.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from trafilatura import extract

from ingest import decode_text, extract_html

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TRAFILATURA_EVAL = DATA / "extraction" / "trafilatura-eval" / "tests"
_SPACES = re.compile(r"\s+")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")
_TABLE_ROW = re.compile(r"^\|(.*)\|\s*$", re.M)
_MARKUP = [
    (re.compile(r"^\s{0,3}#{1,6}\s+", re.M), ""),  # headings
    (re.compile(r"^\s*\|?\s*:?-{3,}[-|: ]*$", re.M), ""),  # table separator rows
    (re.compile(r"(?<![\w*])(\*\*|\*)(?=\S)(.+?)(?<=\S)\1(?![\w*])"), r"\2"),  # emphasis
    (re.compile(r"(`+)(.+?)\1"), r"\2"),  # code spans
    (re.compile(r"^\s*[-+]\s+", re.M), ""),  # list bullets
]


def norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def markdown_text(markdown: str) -> str:
    """Markdown reduced to its text; escaped characters (Berliner\\*innen) stay."""
    escaped: list[str] = []

    def hold(match: re.Match[str]) -> str:
        escaped.append(match.group(1))
        return f"\x00{len(escaped) - 1}\x00"

    text = _ESCAPED.sub(hold, markdown)
    text = _TABLE_ROW.sub(lambda m: " ".join(c.strip() for c in m.group(1).split("|")), text)
    for pattern, replacement in _MARKUP:
        text = pattern.sub(replacement, text)
    return re.sub("\x00(\\d+)\x00", lambda m: escaped[int(m.group(1))], text)


def lore_extract(html: bytes) -> str:
    return markdown_text(extract_html(decode_text(html)).markdown)


def trafilatura_extract(html: bytes) -> str:
    result = extract(
        html, fast=False, include_comments=False, include_tables=True, include_formatting=False
    )
    return result or ""


def counts(item: dict[str, Any], result: str) -> tuple[int, int, int, int]:
    text = norm(result)
    tp = sum(1 for w in item["with"] if norm(w) in text)
    fp = sum(1 for w in item["without"] if norm(w) in text)
    return tp, fp, len(item["with"]) - tp, len(item["without"]) - fp


def load(data: Path, limit: int = 0) -> list[tuple[dict[str, Any], bytes]]:
    evaldata: dict[str, dict[str, Any]] = json.loads((data / "evaldata.json").read_text())
    pages = []
    for url in sorted(evaldata):
        item = evaldata[url]
        for sub in ("cache", "eval"):
            path = data / sub / item["file"]
            if path.is_file():
                pages.append((item, path.read_bytes()))
                break
    return pages[:limit] if limit else pages


def _score_one(
    args: tuple[Callable[[bytes], str], dict[str, Any], bytes],
) -> tuple[int, int, int, int]:
    extractor, item, html = args
    try:
        result = extractor(html)
    except Exception:  # a crash is a full miss, as in the benchmark
        result = ""
    return counts(item, result)


def evaluate(
    extractor: Callable[[bytes], str], pages: list[tuple[dict[str, Any], bytes]], workers: int = 1
) -> tuple[float, float, float]:
    """(precision, recall, F1) of `extractor` over `pages`."""
    jobs = [(extractor, item, html) for item, html in pages]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_score_one, jobs, chunksize=8))
    else:
        results = [_score_one(job) for job in jobs]
    tp = sum(r[0] for r in results)
    fp = sum(r[1] for r in results)
    fn = sum(r[2] for r in results)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return precision, recall, f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=TRAFILATURA_EVAL)
    parser.add_argument("--limit", type=int, default=0, help="first N pages (0 = all)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    pages = load(args.data, args.limit)
    print(f"{len(pages)} pages from {args.data}\n")
    print("| extractor | precision | recall | F1 | seconds |")
    print("|---|---:|---:|---:|---:|")
    for label, extractor in (
        ("lore (trafilatura → Markdown, readability fallback)", lore_extract),
        ("trafilatura, canonical fallback runner", trafilatura_extract),
    ):
        start = time.perf_counter()
        precision, recall, f1 = evaluate(extractor, pages, args.workers)
        elapsed = time.perf_counter() - start
        print(f"| {label} | {precision:.4f} | {recall:.4f} | {f1:.4f} | {elapsed:.0f} |")


if __name__ == "__main__":
    main()
