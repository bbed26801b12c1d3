"""Embedding throughput on the same chunks: plain sentence-transformers (PyTorch) against lore's
embedders (length-sorted batches; PyTorch bf16; ONNX Runtime fp32 and int8).

    python benchmarks/embed_bench.py [--pages 60] [--batch-size 32]

Chunks come from the Python documentation through lore's extractor and chunker (up to 200 model
tokens each). Also prints how close the ONNX vectors are to PyTorch's (mean cosine).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import default_corpus, html_files, page_source

from ingest import (
    ChunkingOptions,
    IngestError,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    bf16_matrix_units,
    prepare,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    torch_embedder = SentenceTransformerEmbedder()
    texts: list[str] = []
    for path in html_files(args.corpus, args.pages):
        source = page_source("bench", args.corpus, path)
        try:
            prepared = prepare(source, ChunkingOptions(), torch_embedder.count_tokens)
        except IngestError:
            continue
        texts += [c.search_text for c in prepared.chunks]
    print(f"{len(texts)} chunks from {args.pages} pages of {args.corpus}")
    print(f"bf16 matrix units (AMX) on this CPU: {bf16_matrix_units()}\n")

    model = torch_embedder._model
    model.encode(texts[:64], batch_size=args.batch_size)  # warm-up, as for each embedder below
    start = time.perf_counter()
    reference = model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True)
    base = len(texts) / (time.perf_counter() - start)
    print("| embedder | chunks/s | × plain PyTorch | cosine to PyTorch: mean | min |")
    print("|---|---:|---:|---:|---:|")
    print(f"| sentence-transformers encode (PyTorch, input order) | {base:.1f} | 1.00 | 1 | 1 |")

    with tempfile.TemporaryDirectory() as tmp:
        candidates = [
            ("lore, PyTorch, length-sorted batches", torch_embedder),
            ("lore, PyTorch bf16 autocast", SentenceTransformerEmbedder(precision="bf16")),
            ("lore, ONNX Runtime fp32", OnnxEmbedder(Path(tmp), quantize=False)),
            ("lore, ONNX Runtime int8", OnnxEmbedder(Path(tmp), quantize=True)),
        ]
        for label, embedder in candidates:
            embedder.embed(texts[:64], batch_size=args.batch_size)
            start = time.perf_counter()
            vectors = np.array(embedder.embed(texts, batch_size=args.batch_size))
            rate = len(texts) / (time.perf_counter() - start)
            cosine = np.sum(vectors * reference, axis=1)
            print(
                f"| {label} | {rate:.1f} | {rate / base:.2f} | {cosine.mean():.5f} "
                f"| {cosine.min():.4f} |"
            )


if __name__ == "__main__":
    main()
