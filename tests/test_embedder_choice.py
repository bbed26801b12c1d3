"""The bf16 PyTorch embedder (the default on CPUs with AMX) against fp32 PyTorch, and which
embedder `auto` picks on which CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from api import Settings, service
from ingest import Embedder, SentenceTransformerEmbedder

TEXTS = [
    "How do I reset my password?",
    "Invoices can be downloaded as PDF from the billing tab of the account settings.",
    "The json module encodes Python objects as JSON strings and decodes them again. " * 6,
]


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
    # a query alone runs in fp32: exactly the plain model's vector
    assert bf16.embed_query(TEXTS[0]) == pytest.approx(reference[0].tolist(), abs=1e-6)


class Made:
    def __init__(self, kind: str, *args: Any) -> None:
        self.kind, self.args, self.name = kind, args, kind


@pytest.mark.parametrize(
    ("amx", "backend", "precision", "expected"),
    [
        (True, "auto", "auto", ("torch", "bf16")),
        (False, "auto", "auto", ("onnx",)),
        (True, "sentence-transformers", "auto", ("torch", "bf16")),
        (False, "sentence-transformers", "auto", ("torch", "fp32")),
        (True, "sentence-transformers", "fp32", ("torch", "fp32")),
        (False, "sentence-transformers", "bf16", ("torch", "bf16")),
        (True, "onnx-int8", "auto", ("onnx",)),
    ],
)
def test_auto_picks_bf16_pytorch_only_where_the_cpu_multiplies_bf16(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    amx: bool,
    backend: str,
    precision: str,
    expected: tuple[str, ...],
) -> None:
    # Constructors replaced by recorders: this checks the choice, not the models.
    monkeypatch.setattr(service, "bf16_matrix_units", lambda: amx)
    monkeypatch.setattr(service, "SentenceTransformerEmbedder", lambda *a: Made("torch", a[-1]))
    monkeypatch.setattr(service, "OnnxEmbedder", lambda *a, **k: Made("onnx"))
    settings = Settings(data_dir=tmp_path, embedding={"backend": backend, "precision": precision})  # type: ignore[arg-type]
    made = service.make_embedder(settings)
    assert isinstance(made, Made)
    assert (made.kind, *made.args) == expected


def test_precision_is_refused_where_it_would_be_ignored(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="precision=bf16 applies to the sentence"):
        Settings(data_dir=tmp_path, embedding={"backend": "onnx-int8", "precision": "bf16"})  # type: ignore[arg-type]
