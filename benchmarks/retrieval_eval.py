"""Retrieval quality on BEIR SciFact through lore's own pipeline: nDCG@10 and recall@100.

    python benchmarks/retrieval_eval.py [--data DIR] [--index-dir DIR] [--queries N]

Every abstract becomes a Markdown document (`# title` + text) that goes through lore's chunker,
the all-MiniLM-L6-v2 embedder and the Qdrant Edge store (dense + BM25 sparse). Each training
query (qrels/train.tsv) is searched dense, sparse and hybrid (DBSF and RRF fusion); chunk hits
collapse to their abstract (best rank first). --index-dir keeps the index for a quick rerun.
Published test-split references: BM25 0.665, all-MiniLM-L6-v2 dense 0.645.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import add_embedding_option, peak_rss_mb
from _scifact import SCIFACT, load, ndcg_at_10

from api import Lore, Settings
from ingest import SourceDocument, prepare
from retrieval import ChunkFilter, CrossEncoderReranker, SearchQuery

BASE = "https://scifact.test/"
RUNS: list[tuple[str, dict[str, Any]]] = [
    ("dense", {"mode": "dense"}),
    ("sparse (BM25)", {"mode": "sparse"}),
    ("hybrid, DBSF", {"mode": "hybrid", "fusion": "dbsf"}),
    ("hybrid, RRF", {"mode": "hybrid", "fusion": "rrf"}),
]


def build(lore: Lore, corpus: list[dict[str, str]]) -> None:
    t0 = time.perf_counter()
    prepared = [
        prepare(
            SourceDocument(
                lore.tenant,
                f"# {doc['title']}\n\n{doc['text']}".encode(),
                BASE + doc["_id"],
                "link",
                "scifact",
                content_type="text/markdown",
            ),
            lore.chunking,
            lore.embedder.count_tokens,
        )
        for doc in corpus
    ]
    chunks = sum(len(p.chunks) for p in prepared)
    t1 = time.perf_counter()
    print(f"prepared {len(prepared)} abstracts into {chunks} chunks in {t1 - t0:.0f} s")

    def progress(done: int, total: int) -> None:
        if done % 1000 < 32 or done == total:
            print(f"  embedded {done}/{total}", flush=True)

    lore.index(prepared, progress)
    t2 = time.perf_counter()
    print(f"indexed in {t2 - t1:.0f} s ({chunks / (t2 - t1):.1f} chunks/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SCIFACT)
    parser.add_argument("--index-dir", type=Path, default=None, help="keep/reuse the index here")
    parser.add_argument("--queries", type=int, default=0, help="first N queries (0 = all)")
    add_embedding_option(parser, "embedding backend (a new --index-dir per backend)")
    parser.add_argument(
        "--reranker",
        type=Path,
        default=None,
        help="a local cross-encoder directory: adds a row with hybrid DBSF's best "
        "--rerank-candidates re-scored by it",
    )
    parser.add_argument("--rerank-candidates", type=int, default=30)
    args = parser.parse_args()
    reranker = CrossEncoderReranker(args.reranker) if args.reranker else None
    runs = [(label, options, None) for label, options in RUNS]
    if reranker is not None:
        label = f"hybrid, DBSF, best {args.rerank_candidates} reranked by {reranker.name}"
        runs.append((label, {"mode": "hybrid", "fusion": "dbsf"}, reranker))
    corpus, queries, qrels = load(args.data)
    query_ids = sorted(qrels, key=int)[: args.queries or None]

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=args.index_dir or Path(tmp),
            embedding={"backend": args.embedding},  # type: ignore[arg-type]
        )
        lore = Lore(settings)
        if lore.store.count(ChunkFilter(tenant_ids=(lore.tenant,))) == 0:
            build(lore, corpus)
        flt = ChunkFilter(tenant_ids=(lore.tenant,))
        vectors = {q: lore.embedder.embed_query(queries[q]) for q in query_ids}
        print(f"\n{len(query_ids)} queries (train split), {len(corpus)} abstracts\n")
        print("| retrieval | nDCG@10 | recall@100 | ms/query |")
        print("|---|---:|---:|---:|")
        for label, options, rerank_with in runs:
            ndcg = recall = 0.0
            t = time.perf_counter()
            for query_id in query_ids:
                hits = lore.store.search(
                    SearchQuery(queries[query_id], vectors[query_id], flt, limit=150, **options)
                )
                if rerank_with is not None:
                    top = args.rerank_candidates
                    hits = rerank_with.rerank(queries[query_id], hits[:top]) + hits[top:]
                ranked = list(dict.fromkeys(h.chunk.url.removeprefix(BASE) for h in hits))[:100]
                relevant = qrels[query_id]
                ndcg += ndcg_at_10(ranked, relevant)
                recall += len(relevant & set(ranked)) / len(relevant)
            ms = (time.perf_counter() - t) * 1000 / len(query_ids)
            n = len(query_ids)
            print(f"| {label} | {ndcg / n:.3f} | {recall / n:.3f} | {ms:.1f} |")
        lore.close()
    print(f"\npeak RSS: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
