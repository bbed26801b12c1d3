"""BEIR SciFact for the retrieval benchmarks: corpus, training queries and qrels, nDCG@10. Imports
nothing from lore, so that the LlamaIndex comparison can run in its own environment."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

SCIFACT = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "retrieval" / "beir-scifact"
)


def load(data: Path) -> tuple[list[dict[str, str]], dict[str, str], dict[str, set[str]]]:
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").open()]
    queries = {q["_id"]: q["text"] for q in map(json.loads, (data / "queries.jsonl").open())}
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in (data / "qrels" / "train.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, score = line.split("\t")
        if int(score) > 0:
            qrels[query_id].add(doc_id)
    return corpus, queries, qrels


def ndcg_at_10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return dcg / ideal
