"""The ONNX Runtime embedder: exported once from the bundled model files (no download), cached,
and close to the PyTorch model's vectors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ingest import Embedder, OnnxEmbedder
from ingest.errors import EmbeddingError

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


def test_the_export_runs_in_a_child_so_pytorch_never_loads_in_the_server(tmp_path: Path) -> None:
    """A first start exports the model; PyTorch, which the export needs, stays out of the
    process that serves (it held 400 MB more for the process's whole life). Checked in a fresh
    interpreter: this test process has PyTorch loaded by other tests."""
    code = (
        "import sys; from pathlib import Path; from ingest import OnnxEmbedder; "
        "e = OnnxEmbedder(Path(sys.argv[1])); assert e.dim == 384; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.stdout.strip() == "[]", done.stderr[-2000:]
    assert len(list(tmp_path.rglob("model-int8.onnx"))) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no scratch left


def test_a_model_that_cannot_be_exported_is_an_embedding_error(tmp_path: Path) -> None:
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(EmbeddingError, match=r"cannot export .* to ONNX: "):
        OnnxEmbedder(tmp_path / "cache", model_path=broken)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []  # nothing half-made is kept
