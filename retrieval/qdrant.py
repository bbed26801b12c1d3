"""The server store: the same collection layout as the embedded store on a Qdrant server through
qdrant-client (`url=`), or qdrant-client's in-process `:memory:` engine for tests.

Sparse vectors come from the same BM25 encoder as the embedded store (qdrant-edge's `Bm25`) with
IDF applied by the engine, so both stores rank the same data the same way."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import qdrant_edge as qe
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from retrieval.edge import DENSE, FLOAT_FIELDS, INDEXED_FIELDS, SPARSE
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
_SCROLL_PAGE = 1024
_UPSERT_BATCH = 256


def build_filter(flt: ChunkFilter) -> models.Filter | None:
    must: list[Any] = []
    for key, values in filter_terms(flt):
        match: Any = (
            models.MatchValue(value=values[0])
            if len(values) == 1
            else models.MatchAny(any=list(values))
        )
        must.append(models.FieldCondition(key=key, match=match))
    if flt.fetched_after is not None or flt.fetched_before is not None:
        bounds = models.Range(gte=flt.fetched_after, lt=flt.fetched_before)
        must.append(models.FieldCondition(key="fetched_ts", range=bounds))
    return models.Filter(must=must) if must else None


def open_collection(
    *,
    url: str | None,
    location: str | None,
    api_key: str | None,
    timeout_s: float,
    collection: str,
    vector: str,
    dim: int,
    keyword_fields: Sequence[str],
    float_fields: Sequence[str],
    what: str,
    sparse: bool = False,
) -> QdrantClient:
    """A client on `collection` of the Qdrant server at `url` (or of qdrant-client's local engine
    at `location`, default `:memory:`): the collection is made with a `dim`-d cosine `vector`
    (and the BM25 `sparse` vector) if new, its vector size checked if not, and on a server
    it gets these payload indexes (the local engine has none: it filters by scanning)."""
    where = url or location or ":memory:"
    try:
        if url:
            client = QdrantClient(url=url, api_key=api_key, timeout=int(timeout_s))
        else:
            client = QdrantClient(location=where)
        if not client.collection_exists(collection):
            client.create_collection(
                collection,
                vectors_config={
                    vector: models.VectorParams(size=dim, distance=models.Distance.COSINE)
                },
                sparse_vectors_config={
                    SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)
                }
                if sparse
                else None,
            )
        else:
            vectors = client.get_collection(collection).config.params.vectors
            size = vectors[vector].size if isinstance(vectors, dict) and vector in vectors else None
            if size != dim:
                raise StoreUnavailableError(
                    f"collection {collection!r} holds {size}-d '{vector}' vectors; "
                    f"the embedding model makes {dim}-d vectors"
                )
        if url:
            for name in keyword_fields:
                client.create_payload_index(collection, name, models.PayloadSchemaType.KEYWORD)
            for name in float_fields:
                client.create_payload_index(collection, name, models.PayloadSchemaType.FLOAT)
    except (ResponseHandlingException, UnexpectedResponse, OSError) as exc:
        raise StoreUnavailableError(
            f"cannot reach the Qdrant server at {where} for the {what}: {exc}"
        ) from exc
    return client


@contextmanager
def server_calls(lock: threading.RLock, where: str) -> Iterator[None]:
    """Calls to qdrant-client under `lock`; a server that stopped answering (a connection error,
    a timeout, a 5xx) is StoreUnavailableError, as it is at start."""
    with lock:
        try:
            yield
        except ResponseHandlingException as exc:
            raise StoreUnavailableError(
                f"the Qdrant server at {where} did not answer: {exc}"
            ) from exc
        except UnexpectedResponse as exc:
            if exc.status_code is not None and exc.status_code >= 500:
                raise StoreUnavailableError(
                    f"the Qdrant server at {where} failed: {exc.status_code} {exc.reason_phrase}"
                ) from exc
            raise


def scroll_all(
    client: QdrantClient, collection: str, qfilter: models.Filter | None, with_payload: bool
) -> list[models.Record]:
    """Every point `qfilter` selects, a page at a time, without vectors."""
    records: list[models.Record] = []
    offset: Any = None
    while True:
        page, offset = client.scroll(
            collection,
            scroll_filter=qfilter,
            limit=_SCROLL_PAGE,
            offset=offset,
            with_payload=with_payload,
            with_vectors=False,
        )
        records.extend(page)
        if offset is None:
            return records


def _sparse(vector: Any) -> models.SparseVector:
    return models.SparseVector(indices=list(vector.indices), values=list(vector.values))


class QdrantStore:
    """`VectorStore` on a Qdrant server (`url`) or qdrant-client's local engine (`location`)."""

    def __init__(
        self,
        dim: int,
        url: str | None = None,
        location: str | None = None,
        collection: str = "lore_chunks",
        api_key: str | None = None,
        fusion: Fusion = "dbsf",
        rrf_k: int = 60,
        timeout_s: float = 30.0,
    ) -> None:
        if fusion not in ("dbsf", "rrf"):
            raise ValueError(f"unknown fusion {fusion!r}; choose 'dbsf' or 'rrf'")
        self._dim = dim
        self._collection = collection
        self._fusion = fusion
        self._rrf_k = rrf_k
        self._bm25 = qe.Bm25()
        self._lock = threading.RLock()  # the local engine is not thread-safe
        self._where = url or location or ":memory:"
        self._client = open_collection(
            url=url,
            location=location,
            api_key=api_key,
            timeout_s=timeout_s,
            collection=collection,
            vector=DENSE,
            dim=dim,
            keyword_fields=INDEXED_FIELDS,
            float_fields=FLOAT_FIELDS,
            what="vector store",
            sparse=True,
        )

    def _calls(self) -> AbstractContextManager[None]:
        return server_calls(self._lock, self._where)

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        points = []
        for chunk in chunks:
            vectors: dict[str, Any] = {
                DENSE: check_vector(chunk, self._dim),
                SPARSE: _sparse(self._bm25.embed_document(chunk.search_text)),
            }
            points.append(models.PointStruct(id=chunk.id, vector=vectors, payload=chunk.payload()))
        with self._calls():
            for start in range(0, len(points), _UPSERT_BATCH):
                self._client.upsert(self._collection, points[start : start + _UPSERT_BATCH])

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._calls():
                self._client.delete(self._collection, models.PointIdsList(points=list(ids)))

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        if ids:
            with self._calls():
                self._client.set_payload(self._collection, payload, points=list(ids))

    def delete_where(self, flt: ChunkFilter) -> None:
        qfilter = build_filter(flt)
        if qfilter is None or flt.selects_all():
            raise ValueError("refusing to delete with an empty filter")
        with self._calls():
            self._client.delete(self._collection, models.FilterSelector(filter=qfilter))

    def _records(self, flt: ChunkFilter, with_payload: bool) -> list[models.Record]:
        with self._calls():
            return scroll_all(self._client, self._collection, build_filter(flt), with_payload)

    def ids_where(self, flt: ChunkFilter) -> set[str]:
        return {str(r.id) for r in self._records(flt, with_payload=False)}

    def scroll(self, flt: ChunkFilter, limit: int) -> list[Chunk]:
        chunks = [Chunk.from_payload(str(r.id), r.payload or {}) for r in self._records(flt, True)]
        chunks.sort(key=lambda c: (c.document_id, c.position))
        return chunks[:limit]

    def count(self, flt: ChunkFilter) -> int:
        with self._calls():
            return self._client.count(
                self._collection, count_filter=build_filter(flt), exact=True
            ).count

    def search(self, query: SearchQuery) -> list[Hit]:
        if query.mode == "hybrid" and (query.fusion or self._fusion) == "rrf":
            return rrf_search(self.search, query, self._rrf_k)
        qfilter = build_filter(query.filter)
        dense = [float(x) for x in query.vector]
        sparse = _sparse(self._bm25.embed_query(query.text))
        fetch = query.limit + TIE_MARGIN
        with self._calls():
            if query.mode == "dense":
                result = self._client.query_points(
                    self._collection, query=dense, using=DENSE, query_filter=qfilter,
                    limit=fetch, with_payload=True,
                )  # fmt: skip
            elif query.mode == "sparse":
                result = self._client.query_points(
                    self._collection, query=sparse, using=SPARSE, query_filter=qfilter,
                    limit=fetch, with_payload=True,
                )  # fmt: skip
            else:
                depth = prefetch_depth(query.limit)
                result = self._client.query_points(
                    self._collection,
                    prefetch=[
                        models.Prefetch(query=dense, using=DENSE, filter=qfilter, limit=depth),
                        models.Prefetch(query=sparse, using=SPARSE, filter=qfilter, limit=depth),
                    ],
                    query=models.FusionQuery(fusion=models.Fusion.DBSF),
                    query_filter=qfilter,
                    limit=fetch,
                    with_payload=True,
                )
        return ranked(
            [
                Hit(Chunk.from_payload(str(p.id), p.payload or {}), float(p.score))
                for p in result.points
            ]
        )[: query.limit]

    def close(self) -> None:
        with self._calls():
            self._client.close()
