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
from retrieval.types import (
    TIE_MARGIN,
    Chunk,
    ChunkFilter,
    Fusion,
    Hit,
    SearchQuery,
    check_vector,
    filter_terms,
    prefetch_depth,
    ranked,
    rrf_search,
)

log = logging.getLogger(__name__)

DENSE = "dense"
SPARSE = "bm25"
INDEXED_FIELDS = (
    "tenant_id",
    "domain",
    "url",
    "url_prefixes",
    "phase",
    "document_id",
    "doc_type",
    "source",
    "state",
    "meta",
)
FLOAT_FIELDS = ("fetched_ts",)
_DBSF: Any = qe.Fusion.Dbsf()  # the stub types the query as `Fusion`, the engine takes this
_SCROLL_PAGE = 1024
# A shard's searches run on the calling thread. With a pool (the default: one thread per CPU)
# the caller waits for the pool's threads while it holds Python's interpreter lock, and on a
# busy 2-core server that wait grew a 2.9 ms search to 5-6 ms of the lock held
# (docs/serving.md). lore's shards have one segment, which one thread searches alone.
SEARCH_THREADS = 1


def _condition(key: str, values: tuple[str, ...]) -> qe.FieldCondition:
    if len(values) == 1:
        return qe.FieldCondition(key, match=qe.MatchValue(values[0]))
    return qe.FieldCondition(key, match=qe.MatchAny(list(values)))


def build_filter(flt: ChunkFilter) -> qe.Filter | None:
    must: list[Any] = []
    for key, values in filter_terms(flt):
        must.append(_condition(key, values))
    if flt.fetched_after is not None or flt.fetched_before is not None:
        bounds = qe.RangeFloat(gte=flt.fetched_after, lt=flt.fetched_before)
        must.append(qe.FieldCondition("fetched_ts", range=bounds))
    return qe.Filter(must=must) if must else None


def open_shard(
    path: Path,
    config: qe.EdgeConfig,
    keyword_fields: Sequence[str],
    float_fields: Sequence[str],
    what: str,
) -> qe.EdgeShard:
    """The Qdrant Edge shard in `path` (made with `config` if new, else checked against it)
    with these payload indexes (idempotent: also adds the indexes a shard made by an older
    lore lacks)."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        if (path / "edge_config.json").exists():
            shard = qe.EdgeShard.load(str(path), config)
        else:
            shard = qe.EdgeShard.create(str(path), config)
        for name in keyword_fields:
            shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword))
        for name in float_fields:
            shard.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Float))
    except Exception as exc:
        raise StoreUnavailableError(
            f"cannot open the {what} at {path}: {exc}. Another lore process (a server "
            "or a CLI command) may hold it; stop it or talk to it through its HTTP API."
        ) from exc
    return shard


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
        config = qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            max_search_threads=SEARCH_THREADS,
        )
        self._shard = open_shard(path, config, INDEXED_FIELDS, FLOAT_FIELDS, "vector store")

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            return
        points = []
        for chunk in chunks:
            vectors: dict[str, Any] = {
                DENSE: check_vector(chunk, self._dim),
                SPARSE: self._bm25.embed_document(chunk.search_text),
            }
            points.append(qe.Point(chunk.id, vectors, chunk.payload()))
        with self._lock:
            self._shard.update(qe.UpdateOperation.upsert_points(points))

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._lock:
                self._shard.update(qe.UpdateOperation.delete_points(list(ids)))

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        if ids:
            with self._lock:
                self._shard.update(qe.UpdateOperation.set_payload(list(ids), payload))

    def delete_where(self, flt: ChunkFilter) -> None:
        qfilter = build_filter(flt)
        if qfilter is None or flt.selects_all():
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
        if query.mode == "hybrid" and (query.fusion or self._fusion) == "rrf":
            return rrf_search(self.search, query, self._rrf_k)
        qfilter = build_filter(query.filter)
        dense = qe.Query.Nearest([float(x) for x in query.vector], using=DENSE)
        sparse = qe.Query.Nearest(self._bm25.embed_query(query.text), using=SPARSE)
        fetch = query.limit + TIE_MARGIN
        if query.mode == "dense":
            request = qe.QueryRequest(limit=fetch, query=dense, filter=qfilter, with_payload=True)
        elif query.mode == "sparse":
            request = qe.QueryRequest(limit=fetch, query=sparse, filter=qfilter, with_payload=True)
        else:
            depth = prefetch_depth(query.limit)
            request = qe.QueryRequest(
                limit=fetch,
                prefetches=[
                    qe.Prefetch(limit=depth, query=dense, filter=qfilter),
                    qe.Prefetch(limit=depth, query=sparse, filter=qfilter),
                ],
                query=_DBSF,
                filter=qfilter,
                with_payload=True,
            )
        with self._lock:
            points = self._shard.query(request)
        return ranked(
            [Hit(Chunk.from_payload(str(p.id), p.payload or {}), float(p.score)) for p in points]
        )[: query.limit]

    def close(self) -> None:
        with self._lock:
            try:
                self._shard.flush()
            finally:
                self._shard.close()
        log.debug("closed vector store at %s", self._path)
