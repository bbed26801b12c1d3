"""The ONNX Runtime embedder: exported once from the bundled model files (no download), cached,
and close to the PyTorch model's vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ingest import Embedder, OnnxEmbedder

pytestmark = pytest.mark.slow

TEXTS = [
    "How do I reset my password?",
    "Invoices can be downloaded as PDF from the billing tab of the account settings.",
    "The json module encodes Python objects as JSON strings and decodes them again. " * 6,
]


@pytest.mark.parametrize("quantize", [True, False])
def test_onnx_vectors_match_pytorch(
    tmp_path: Path, torch_embedder: Embedder, quantize: bool
) -> None:
    onnx = OnnxEmbedder(tmp_path, quantize=quantize)
    assert onnx.dim == torch_embedder.dim == 384
    assert onnx.count_tokens(TEXTS[1]) == torch_embedder.count_tokens(TEXTS[1])
    ours = np.array(onnx.embed(TEXTS, batch_size=2))
    reference = np.array(torch_embedder.embed(TEXTS))
    cosines = np.sum(ours * reference, axis=1)
    assert cosines.min() > (0.98 if quantize else 0.9999), cosines
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-4)
    # the export is cached: a second embedder reuses the file
    exported = sorted(tmp_path.rglob("*.onnx"))
    assert len(exported) == 1
    OnnxEmbedder(tmp_path, quantize=quantize)
    assert sorted(tmp_path.rglob("*.onnx")) == exported
    # a text's vector does not depend on the batch it was embedded in
    assert onnx.embed_query(TEXTS[0]) == pytest.approx(ours[0].tolist(), abs=1e-5)
