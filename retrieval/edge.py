"""The embedded store: Qdrant's own engine in-process through qdrant-edge-py.

One shard holds every tenant's chunks with a named dense vector and a BM25 sparse vector (Qdrant's
built-in encoder, IDF applied by the engine). Payload indexes on the fields every query filters by.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from retrieval.errors import StoreUnavailableError
from retrieval.types import Chunk, ChunkFilter, Fusion, Hit, SearchQuery

log = logging.getLogger(__name__)

DENSE = "dense"
SPARSE = "bm25"
INDEXED_FIELDS = ("tenant_id", "domain", "url", "phase", "document_id", "doc_type", "state")
_SCROLL_PAGE = 1024


def _condition(key: str, values: tuple[str, ...]) -> qe.FieldCondition:
    if len(values) == 1:
        return qe.FieldCondition(key, match=qe.MatchValue(values[0]))
    return qe.FieldCondition(key, match=qe.MatchAny(list(values)))


def build_filter(flt: ChunkFilter) -> qe.Filter | None:
    must: list[Any] = []
    for key, values in (
        ("tenant_id", flt.tenant_ids),
        ("domain", flt.domains),
        ("url", flt.urls),
        ("document_id", flt.document_ids),
        ("doc_type", flt.doc_types),
        ("phase", flt.phases),
    ):
        if values:
            must.append(_condition(key, values))
    if not flt.include_superseded:
        must.append(qe.FieldCondition("state", match=qe.MatchValue("current")))
    return qe.Filter(must=must) if must else None


class EdgeStore:
    """`VectorStore` on an in-process Qdrant Edge shard stored under `path`."""

    def __init__(self, path: Path, dim: int, fusion: Fusion = "dbsf", rrf_k: int = 60) -> None:
        if fusion not in ("dbsf", "rrf"):
            raise ValueError(f"unknown fusion {fusion!r}; choose 'dbsf' or 'rrf'")
        self._path = path
        self._dim = dim
        self._fusion = fusion
        self._rrf_k = rrf_k
        self._lock = threading.RLock()
        self._bm25 = qe.Bm25()
        path.mkdir(parents=True, exist_ok=True)
        try:
            if (path / "edge_config.json").exists():
                self._shard = qe.EdgeShard.load(str(path))
            else:
                config = qe.EdgeConfig(
                    vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
                    sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
                )
                self._shard = qe.EdgeShard.create(str(path), config)
                for name in INDEXED_FIELDS:
                    self._shard.update(
                        qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword)
                    )

        except Exception as exc:
            raise StoreUnavailableError(
                f"cannot open the vector store at {path}: {exc}. Another lore process (a server "
                "or a CLI command) may hold it; stop it or talk to it through its HTTP API."
            ) from exc

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            return
        points = []
        for chunk in chunks:
            if len(chunk.vector) != self._dim:
                raise ValueError(
                    f"chunk {chunk.id} has a {len(chunk.vector)}-d vector; the store holds "
                    f"{self._dim}-d vectors"
                )
            vectors: dict[str, Any] = {
                DENSE: [float(x) for x in chunk.vector],
                SPARSE: self._bm25.embed_document(chunk.search_text),
            }
            points.append(qe.Point(chunk.id, vectors, chunk.payload()))
        with self._lock:
            self._shard.update(qe.UpdateOperation.upsert_points(points))

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._lock:
                self._shard.update(qe.UpdateOperation.delete_points(list(ids)))

    def delete_where(self, flt: ChunkFilter) -> None:
        qfilter = build_filter(flt)
        if qfilter is None:
            raise ValueError("refusing to delete with an empty filter")
        with self._lock:
            self._shard.update(qe.UpdateOperation.delete_points_by_filter(qfilter))

    def _records(self, flt: ChunkFilter, limit: int, with_payload: bool) -> list[qe.Record]:
        records: list[qe.Record] = []
        offset: Any = None
        qfilter = build_filter(flt)
        with self._lock:
            while len(records) < limit:
                page, offset = self._shard.scroll(
                    qe.ScrollRequest(
                        offset=offset,
                        limit=min(_SCROLL_PAGE, limit - len(records)),
                        filter=qfilter,
                        with_payload=with_payload,
                    )
                )
                records.extend(page)
                if offset is None:
                    break
        return records

    def ids_where(self, flt: ChunkFilter) -> set[str]:
        return {str(r.id) for r in self._records(flt, 10**9, with_payload=False)}

    def scroll(self, flt: ChunkFilter, limit: int) -> list[Chunk]:
        chunks = [
            Chunk.from_payload(str(r.id), r.payload or {})
            for r in self._records(flt, 10**9, with_payload=True)
        ]
        chunks.sort(key=lambda c: (c.document_id, c.position))
        return chunks[:limit]

    def count(self, flt: ChunkFilter) -> int:
        with self._lock:
            return int(self._shard.count(qe.CountRequest(filter=build_filter(flt), exact=True)))

    def search(self, query: SearchQuery) -> list[Hit]:
        qfilter = build_filter(query.filter)
        dense = qe.Query.Nearest([float(x) for x in query.vector], using=DENSE)
        sparse = qe.Query.Nearest(self._bm25.embed_query(query.text), using=SPARSE)
        if query.mode == "dense":
            request = qe.QueryRequest(
                limit=query.limit, query=dense, filter=qfilter, with_payload=True
            )
        elif query.mode == "sparse":
            request = qe.QueryRequest(
                limit=query.limit, query=sparse, filter=qfilter, with_payload=True
            )
        else:
            depth = max(query.limit * 4, 40)
            request = qe.QueryRequest(
                limit=query.limit,
                prefetches=[
                    qe.Prefetch(limit=depth, query=dense, filter=qfilter),
                    qe.Prefetch(limit=depth, query=sparse, filter=qfilter),
                ],
                query=self._fusion_query(query.fusion or self._fusion),
                filter=qfilter,
                with_payload=True,
            )
        with self._lock:
            points = self._shard.query(request)
        return [Hit(Chunk.from_payload(str(p.id), p.payload or {}), float(p.score)) for p in points]

    def _fusion_query(self, fusion: Fusion) -> Any:
        # The stub types the query as `Fusion`, the engine takes its inner classes.
        if fusion == "rrf":
            return qe.Fusion.Rrf(k=self._rrf_k)
        return qe.Fusion.Dbsf()

    def close(self) -> None:
        with self._lock:
            try:
                self._shard.flush()
            finally:
                self._shard.close()
        log.debug("closed vector store at %s", self._path)
