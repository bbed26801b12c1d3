"""Hybrid fusion settings on BEIR SciFact (train queries), from one dense and one sparse search
per query: DBSF with the sparse (BM25) list weighted 0.3-0.7 and prefetch depths, against RRF.

    python benchmarks/fusion_eval.py [--index-dir DIR] [--queries N]

Each query's dense and BM25 lists (with scores) are fetched once from lore's Qdrant Edge store;
the fusions are computed here the way the engine computes DBSF (each list's scores normalised
over mean +- 3 standard deviations, then summed), with weights. Chunk hits collapse to their
abstract. Build the index once with retrieval_eval.py --index-dir DIR (the same layout).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _scifact import SCIFACT, load, ndcg_at_10
from retrieval_eval import BASE, build

from api import Lore, Settings
from retrieval import ChunkFilter, Hit, SearchQuery
from retrieval.ranking import phrase_overlap

WEIGHTS = (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7)  # of the sparse list; dense gets 1 - w
DEPTHS = (58, 116, 232)  # each retriever's list (116: lore's prefetch for its pool of 50)
LIMIT = 58  # the fused list kept (lore's pool of 50 and its tie margin)
BOOSTS = (0.25, 0.5, 1.0)  # lore's phrase boost, on DBSF w=0.5 from 116 a list


def normalised(hits: list[Hit]) -> dict[str, float]:
    """Qdrant's DBSF normalisation of one list: (s - (mean - 3 sd)) / (6 sd), the sample
    standard deviation, not clipped."""
    if not hits:
        return {}
    scores = [h.score for h in hits]
    mean = statistics.fmean(scores)
    sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
    low, high = mean - 3 * sd, mean + 3 * sd
    span = high - low or 1.0
    return {h.chunk.id: (h.score - low) / span for h in hits}


def fused(
    dense: list[Hit],
    sparse: list[Hit],
    weight: float,
    query: str = "",
    boost: float = 0.0,
    window: int = LIMIT,
) -> list[str]:
    """Abstracts in the order of the weighted DBSF fusion; with `boost`, lore's phrase boost
    applied to the fused list (as `retrieval.ranking.rerank` does)."""
    chunks = {h.chunk.id: h.chunk for h in (*dense, *sparse)}
    score: dict[str, float] = {}
    for ids, w in ((normalised(dense), 1 - weight), (normalised(sparse), weight)):
        for chunk_id, s in ids.items():
            score[chunk_id] = score.get(chunk_id, 0.0) + w * s
    order = sorted(score, key=lambda c: (-score[c], c))[:LIMIT]
    if boost:
        hits = [Hit(chunks[c], score[c]) for c in order]
        quoted = phrase_overlap(query, hits, window)
        boosted = {h.chunk.id: h.score * (1 + boost * q) for h, q in zip(hits, quoted, strict=True)}
        order = sorted(boosted, key=lambda c: (-boosted[c], c))
    return list(dict.fromkeys(chunks[c].url.removeprefix(BASE) for c in order))


def rrf(dense: list[Hit], sparse: list[Hit], k: int = 60) -> list[str]:
    urls = {h.chunk.id: h.chunk.url for h in (*dense, *sparse)}
    score: dict[str, float] = {}
    for hits in (dense, sparse):
        for rank, h in enumerate(hits):
            score[h.chunk.id] = score.get(h.chunk.id, 0.0) + 1 / (k + rank + 1)
    order = sorted(score, key=lambda c: (-score[c], c))
    return list(dict.fromkeys(urls[c].removeprefix(BASE) for c in order))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SCIFACT)
    parser.add_argument("--index-dir", type=Path, default=None, help="keep/reuse the index here")
    parser.add_argument("--queries", type=int, default=0, help="first N queries (0 = all)")
    args = parser.parse_args()
    corpus, queries, qrels = load(args.data)
    query_ids = sorted(qrels, key=int)[: args.queries or None]
    with tempfile.TemporaryDirectory() as tmp:
        lore = Lore(Settings(data_dir=args.index_dir or Path(tmp)))
        flt = ChunkFilter(tenant_ids=(lore.tenant,))
        if lore.store.count(flt) == 0:
            build(lore, corpus)
        lists = {}
        for q in query_ids:
            vector = lore.embedder.embed_query(queries[q])
            lists[q] = tuple(
                lore.store.search(SearchQuery(queries[q], vector, flt, max(DEPTHS), mode))
                for mode in ("dense", "sparse")
            )
        lore.close()
    print(f"{len(query_ids)} queries (train split), {len(corpus)} abstracts: nDCG@10\n")
    print("| depth | " + " | ".join(f"DBSF w={w}" for w in WEIGHTS) + " | RRF k=60 |")
    print("|---:|" + "---:|" * (len(WEIGHTS) + 1))
    for depth in DEPTHS:
        row = []
        for weight in WEIGHTS:
            total = sum(
                ndcg_at_10(fused(d[:depth], s[:depth], weight), qrels[q])
                for q, (d, s) in lists.items()
            )
            row.append(f"{total / len(lists):.3f}")
        total = sum(ndcg_at_10(rrf(d[:depth], s[:depth]), qrels[q]) for q, (d, s) in lists.items())
        print(f"| {depth} | " + " | ".join(row) + f" | {total / len(lists):.3f} |")
    print("\n| phrase boost | window 16 | window 58 (the pool) |\n|---:|---:|---:|")
    for boost in (0.0, *BOOSTS):
        row = [
            sum(
                ndcg_at_10(fused(d[:116], s[:116], 0.5, queries[q], boost, window), qrels[q])
                for q, (d, s) in lists.items()
            )
            / len(lists)
            for window in (16, LIMIT)
        ]
        print(f"| {boost} | {row[0]:.3f} | {row[1]:.3f} |")


if __name__ == "__main__":
    main()
