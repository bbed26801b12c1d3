"""BM25 analyser settings on BEIR SciFact (train queries): sparse and hybrid nDCG@10 for each
setting of the engine's BM25 encoder (k1, b, the average length it normalises by, stemming,
the weight of the title and heading path).

    python benchmarks/bm25_eval.py --index-dir DIR [--queries N]

The chunks of lore's index (build it once with retrieval_eval.py --index-dir DIR) are encoded
again with each setting into a sparse-only Qdrant Edge shard in a temporary directory; each
query's BM25 list from it is fused with the index's dense list the way the engine's DBSF does
(fusion_eval.py's `fused`, weight 0.5), at lore's prefetch depth.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

import qdrant_edge as qe
from _scifact import SCIFACT, load, ndcg_at_10
from fusion_eval import fused
from retrieval_eval import BASE

from api import Lore, Settings
from retrieval import Chunk, ChunkFilter, Hit, SearchQuery
from retrieval.types import prefetch_depth

DEPTH = prefetch_depth(50)


def sparse_text(chunk: Chunk, context_weight: int) -> str:
    """What lore's BM25 encoder reads (`Chunk.search_text`: the heading context, then the
    text), with the heading context `context_weight` times."""
    context = chunk.search_text.removesuffix(chunk.text).strip()
    return "\n".join([context] * (context_weight - 1 if context else 0) + [chunk.search_text])


def settings() -> list[tuple[str, dict[str, Any], int]]:
    """(label, Bm25Config arguments, context weight)."""
    grid: list[tuple[str, dict[str, Any], int]] = [("engine defaults", {}, 1)]
    for k in (0.9, 1.2, 1.5):
        for b in (0.4, 0.75, 0.9):
            grid.append((f"k1 {k}, b {b}, avg_len = corpus", {"k": k, "b": b}, 1))
    grid.append(("no stemming", {"stemmer": qe.DisabledStemmer()}, 1))
    grid.append(("context twice", {}, 2))
    grid.append(("context three times", {}, 3))
    return grid


def encoder(options: dict[str, Any], avg_len: float) -> qe.Bm25:
    options = dict(options)
    if "k" in options:
        options["avg_len"] = avg_len
    return qe.Bm25(qe.Bm25Config(**options) if options else None)


def sparse_lists(
    chunks: list[Chunk], bm25: qe.Bm25, weight: int, queries: dict[str, str]
) -> dict[str, list[Hit]]:
    by_id = {c.id: c for c in chunks}
    with tempfile.TemporaryDirectory() as tmp:
        config = qe.EdgeConfig(
            vectors={},
            sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )
        shard = qe.EdgeShard.create(tmp, config)
        for start in range(0, len(chunks), 1024):
            points = [
                qe.Point(c.id, {"bm25": bm25.embed_document(sparse_text(c, weight))}, {})
                for c in chunks[start : start + 1024]
            ]
            shard.update(qe.UpdateOperation.upsert_points(points))
        lists = {}
        for qid, text in queries.items():
            query = qe.Query.Nearest(bm25.embed_query(text), using="bm25")
            points = shard.query(qe.QueryRequest(limit=DEPTH, query=query))
            lists[qid] = [Hit(by_id[str(p.id)], float(p.score)) for p in points]
        shard.close()
    return lists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SCIFACT)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=0, help="first N queries (0 = all)")
    args = parser.parse_args()
    _, all_queries, qrels = load(args.data)
    query_ids = sorted(qrels, key=int)[: args.queries or None]
    queries = {q: all_queries[q] for q in query_ids}

    lore = Lore(Settings(data_dir=args.index_dir))
    flt = ChunkFilter(tenant_ids=(lore.tenant,))
    chunks = lore.store.scroll(flt, 10**6)
    words = [len(sparse_text(c, 1).split()) for c in chunks]
    avg_len = statistics.fmean(words)
    print(f"{len(chunks)} chunks, {avg_len:.0f} words on average; {len(queries)} queries\n")
    dense = {
        q: lore.store.search(
            SearchQuery(text, lore.embedder.embed_query(text), flt, limit=DEPTH, mode="dense")
        )
        for q, text in queries.items()
    }
    lore.close()

    print("| BM25 setting | sparse nDCG@10 | hybrid (DBSF) nDCG@10 |")
    print("|---|---:|---:|")
    for label, options, weight in settings():
        lists = sparse_lists(chunks, encoder(options, avg_len), weight, queries)
        sparse = hybrid = 0.0
        for q in query_ids:
            only = list(dict.fromkeys(h.chunk.url.removeprefix(BASE) for h in lists[q]))
            sparse += ndcg_at_10(only, qrels[q])
            hybrid += ndcg_at_10(fused(dense[q], lists[q], 0.5), qrels[q])
        n = len(query_ids)
        print(f"| {label} | {sparse / n:.3f} | {hybrid / n:.3f} |", flush=True)


if __name__ == "__main__":
    main()
