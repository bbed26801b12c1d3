"""The bf16 PyTorch embedder (the default for batches on CPUs with AMX) against fp32 PyTorch, the
split between a query runtime and a batch runtime, and which embedder `auto` picks on which
CPU."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from api import Settings, service
from ingest import (
    Embedder,
    EmbeddingError,
    HashEmbedder,
    SentenceTransformerEmbedder,
    SplitEmbedder,
)

TEXTS = [
    "How do I reset my password?",
    "Invoices can be downloaded as PDF from the billing tab of the account settings.",
    "The json module encodes Python objects as JSON strings and decodes them again. " * 6,
]


def test_pytorch_vectors_are_the_library_s_own(torch_embedder: Embedder) -> None:
    """lore tokenizes with the Rust tokenizer itself (transformers' call was two thirds of a
    GPU's pass): the vectors must stay sentence-transformers' own, truncation included."""
    texts = [*TEXTS, "A long text past the model's 256 tokens, to be truncated. " * 40]
    ours = np.array(torch_embedder.embed(texts, batch_size=4))
    library = torch_embedder._model.encode(texts, normalize_embeddings=True)  # type: ignore[attr-defined]
    assert np.abs(ours - library).max() < 1e-5


@pytest.mark.slow
def test_bf16_vectors_match_fp32_and_do_not_depend_on_the_batch(torch_embedder: Embedder) -> None:
    bf16 = SentenceTransformerEmbedder(precision="bf16")
    assert bf16.name == "all-MiniLM-L6-v2-bf16" and bf16.dim == 384
    ours = np.array(bf16.embed(TEXTS * 2, batch_size=6))[:3]
    reference = np.array(torch_embedder.embed(TEXTS))
    cosines = np.sum(ours * reference, axis=1)
    assert cosines.min() > 0.999, cosines
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # in a batch padded to 32 tokens or to 128: the same vector
    padded = np.array(bf16.embed([TEXTS[0], TEXTS[0], TEXTS[0], TEXTS[1]], batch_size=4))
    assert float(padded[0] @ ours[0]) > 0.9999


def test_split_embedder_sends_queries_to_one_runtime_and_batches_to_the_other() -> None:
    small, large = Recorder("small"), Recorder("large")
    split = SplitEmbedder(small, large, min_batch=4)
    split.embed_query("one query")
    split.embed(["a", "b", "c"])
    split.embed([f"text {i}" for i in range(10)], batch_size=8)  # a batch of 8, then of 2
    assert small.calls == [1, 3, 2] and large.calls == [8]
    assert split.dim == 384 and split.name == "large (queries: small)"
    with pytest.raises(EmbeddingError, match="different spaces"):
        SplitEmbedder(HashEmbedder(128), large)


class Recorder(HashEmbedder):
    """A deterministic fake that records the size of each call."""

    def __init__(self, name: str) -> None:
        super().__init__(384)
        self.name, self.calls = name, []

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return super().embed_batch(texts)


class Made:
    def __init__(self, kind: str, *args: Any) -> None:
        self.kind, self.args, self.name, self.dim = kind, args, kind, 384


def describe(embedder: object) -> str:
    if isinstance(embedder, SplitEmbedder):
        return f"queries {describe(embedder.small)}, batches {describe(embedder.large)}"
    assert isinstance(embedder, Made)
    return " ".join(str(x) for x in (embedder.kind, *embedder.args))


@pytest.mark.parametrize(
    ("amx", "backend", "precision", "expected"),
    [
        (True, "auto", "auto", "onnx int8"),  # faster and half the memory with AMX too
        (True, "auto", "bf16", "queries onnx int8, batches torch bf16"),
        (False, "auto", "auto", "onnx int8"),
        (False, "auto", "fp32", "queries onnx int8, batches torch fp32"),
        (True, "sentence-transformers", "auto", "torch bf16"),
        (False, "sentence-transformers", "auto", "torch fp32"),
        (True, "sentence-transformers", "fp32", "torch fp32"),
        (False, "sentence-transformers", "bf16", "torch bf16"),
        (True, "onnx-int8", "auto", "onnx int8"),
    ],
)
def test_auto_is_int8_onnx_and_pytorch_runs_bf16_only_where_the_cpu_multiplies_bf16(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    amx: bool,
    backend: str,
    precision: str,
    expected: str,
) -> None:
    # Constructors replaced by recorders: this checks the choice, not the models.
    monkeypatch.setattr(service, "bf16_matrix_units", lambda: amx)
    monkeypatch.setattr(service, "SentenceTransformerEmbedder", lambda *a: Made("torch", a[-1]))
    monkeypatch.setattr(
        service,
        "OnnxEmbedder",
        lambda *a, quantize=True: Made("onnx", "int8" if quantize else "fp32"),
    )
    settings = Settings(data_dir=tmp_path, embedding={"backend": backend, "precision": precision})  # type: ignore[arg-type]
    assert describe(service.make_embedder(settings)) == expected


def test_precision_is_refused_where_it_would_be_ignored(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="precision=bf16 applies to the sentence"):
        Settings(data_dir=tmp_path, embedding={"backend": "onnx-int8", "precision": "bf16"})  # type: ignore[arg-type]


@pytest.mark.slow
def test_token_counting_and_embedding_from_many_threads_at_once() -> None:
    # A crawl prepares pages (counting tokens) while it embeds others: the tokenizer they shared
    # switched padding off under a running batch ("Unable to create tensor").
    bf16 = SentenceTransformerEmbedder(precision="bf16")
    texts = [f"{'word ' * (5 + 13 * i)}end" for i in range(12)]
    stop = threading.Event()
    counts: list[int] = []

    def count() -> None:
        while not stop.is_set():
            counts.extend(bf16.count_tokens(t) for t in texts)

    counters = [threading.Thread(target=count) for _ in range(3)]
    for thread in counters:
        thread.start()
    try:
        for _ in range(5):
            assert len(bf16.embed(texts, batch_size=12)) == len(texts)
    finally:
        stop.set()
        for thread in counters:
            thread.join()
    assert counts and set(counts) == {bf16.count_tokens(t) for t in texts}
