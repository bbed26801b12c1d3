"""The optional reranking stage: the engine's fused candidates re-scored by a model that reads the
query and each chunk together, before freshness and duplicate collapse. Off unless a model is
configured; lore ships none (see the README)."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from retrieval.errors import RerankerError
from retrieval.types import Hit, ranked, search_text


class Reranker(ABC):
    """Re-scores candidates for a query. Implementers write `scores`; scores must be
    non-negative and comparable across queries (freshness multiplies them)."""

    name: str

    @abstractmethod
    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, higher is better. Never called with no texts."""

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        """`hits` ordered by this reranker's scores, which replace the engine's."""
        if not hits:
            return hits
        texts = [search_text(h.chunk.title, h.chunk.heading_path, h.chunk.text) for h in hits]
        try:
            scores = self.scores(query, texts)
        except RerankerError:
            raise
        except Exception as exc:
            raise RerankerError(f"reranker {self.name} failed: {exc}") from exc
        if len(scores) != len(hits):
            raise RerankerError(
                f"reranker {self.name} returned {len(scores)} scores for {len(hits)} texts"
            )
        return ranked([replace(h, score=float(s)) for h, s in zip(hits, scores, strict=True)])


class CrossEncoderReranker(Reranker):
    """A sentence-transformers cross-encoder from a local directory (never downloaded), e.g. a
    copy of cross-encoder/ms-marco-MiniLM-L6-v2. Scores are the model's sigmoid outputs."""

    def __init__(self, model_path: Path, device: str = "cpu", batch_size: int = 32) -> None:
        if not model_path.is_dir():
            raise RerankerError(f"reranker model directory {model_path} does not exist")
        try:
            import torch  # noqa: PLC0415 - heavy import, only with a reranker configured
            from sentence_transformers import CrossEncoder  # noqa: PLC0415

            self._model = CrossEncoder(
                str(model_path),
                device=device,
                local_files_only=True,
                activation_fn=torch.nn.Sigmoid(),
            )
        except Exception as exc:
            raise RerankerError(f"cannot load the reranker from {model_path}: {exc}") from exc
        if self._model.num_labels != 1:
            raise RerankerError(
                f"{model_path} is not a relevance cross-encoder: it has "
                f"{self._model.num_labels} output labels, a reranker has 1"
            )
        self.name = model_path.name
        self._batch_size = batch_size
        self._lock = threading.Lock()

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        with self._lock:
            out = self._model.predict(
                [(query, t) for t in texts],
                batch_size=self._batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [float(x) for x in out]
