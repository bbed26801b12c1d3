"""Records the storage layer reads and writes, independent of any engine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Phase = Literal["static", "initial", "post_interaction"]
SearchMode = Literal["hybrid", "dense", "sparse"]
Fusion = Literal["dbsf", "rrf"]


def search_text(title: str, heading_path: Sequence[str], text: str) -> str:
    context = " > ".join(h for h in (title, *heading_path) if h)
    return f"{context}\n\n{text}" if context else text


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a document: a Qdrant point's payload plus its dense vector."""

    id: str
    tenant_id: str
    source_id: str
    document_id: str
    url: str
    domain: str
    title: str
    heading_path: tuple[str, ...]
    text: str
    content_hash: str
    doc_type: str
    position: int
    fetched_at: str
    ingested_at: str
    phase: Phase = "static"
    trigger_action: str | None = None
    scope: str | None = None
    last_modified: str | None = None
    superseded_by: str | None = None
    superseded_at: str | None = None
    vector: Sequence[float] = field(default=(), repr=False, compare=False)

    @property
    def search_text(self) -> str:
        """What the dense and lexical encoders see: the heading context, then the text."""
        return search_text(self.title, self.heading_path, self.text)

    def payload(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "source_id": self.source_id,
            "document_id": self.document_id,
            "url": self.url,
            "domain": self.domain,
            "title": self.title,
            "heading_path": list(self.heading_path),
            "text": self.text,
            "content_hash": self.content_hash,
            "doc_type": self.doc_type,
            "position": self.position,
            "phase": self.phase,
            "trigger_action": self.trigger_action,
            "scope": self.scope,
            "superseded_by": self.superseded_by,
            # An indexed keyword: a null check on an unindexed field, or a bool index, makes
            # the engine read payloads from disk (measured: 10-15 ms vs 0.5 ms at 2.5k points).
            "state": "superseded" if self.superseded_by else "current",
            "superseded_at": self.superseded_at,
            "fetched_at": self.fetched_at,
            "ingested_at": self.ingested_at,
            "last_modified": self.last_modified,
        }

    @classmethod
    def from_payload(cls, point_id: str, payload: dict[str, Any]) -> Chunk:
        return cls(
            id=point_id,
            tenant_id=payload["tenant_id"],
            source_id=payload.get("source_id", ""),
            document_id=payload["document_id"],
            url=payload.get("url", ""),
            domain=payload.get("domain", ""),
            title=payload.get("title", ""),
            heading_path=tuple(payload.get("heading_path") or ()),
            text=payload.get("text", ""),
            content_hash=payload.get("content_hash", ""),
            doc_type=payload.get("doc_type", ""),
            position=int(payload.get("position", 0)),
            phase=payload.get("phase", "static"),
            trigger_action=payload.get("trigger_action"),
            scope=payload.get("scope"),
            superseded_by=payload.get("superseded_by"),
            superseded_at=payload.get("superseded_at"),
            fetched_at=payload.get("fetched_at", ""),
            ingested_at=payload.get("ingested_at", ""),
            last_modified=payload.get("last_modified"),
        )


@dataclass(frozen=True)
class ChunkFilter:
    """Conditions every returned chunk must meet; an empty tuple means 'any'."""

    tenant_ids: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    doc_types: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    include_superseded: bool = False


@dataclass(frozen=True)
class SearchQuery:
    text: str
    vector: Sequence[float]
    filter: ChunkFilter
    limit: int = 10
    mode: SearchMode = "hybrid"
    fusion: Fusion | None = None  # hybrid only; None: the store's default


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    score: float
