"""The vector-store seam: what lore needs from a Qdrant-like engine, nothing more."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from retrieval.types import Chunk, ChunkFilter, Hit, SearchQuery


class VectorStore(Protocol):
    """Stores chunks with a dense and a lexical (BM25) vector; searches them with filters."""

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        """Insert or replace chunks by id. Every chunk must carry its dense vector."""

    def delete(self, ids: Sequence[str]) -> None:
        """Delete chunks by id; unknown ids are ignored."""

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Set these payload keys on the chunks with these ids (supersession marks)."""

    def delete_where(self, flt: ChunkFilter) -> None:
        """Delete every chunk matching the filter."""

    def ids_where(self, flt: ChunkFilter) -> set[str]:
        """Ids of every chunk matching the filter."""

    def scroll(self, flt: ChunkFilter, limit: int) -> list[Chunk]:
        """Chunks matching the filter, in document order (by document, then position)."""

    def count(self, flt: ChunkFilter) -> int:
        """Number of chunks matching the filter."""

    def search(self, query: SearchQuery) -> list[Hit]:
        """Best chunks for the query, best first."""

    def close(self) -> None:
        """Flush and release the store."""
