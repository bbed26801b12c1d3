"""Storage and search: the vector store seam, its embedded Qdrant Edge implementation, the
relational catalog of documents and jobs, and deterministic ids. The bottom layer: imports no
other lore package."""

from typing import TYPE_CHECKING, Any

from retrieval.catalog import (
    URL_STATES,
    ApiKey,
    Catalog,
    CatalogStats,
    CrawlUrl,
    Document,
    DocumentQuery,
    Job,
    Schedule,
    SiteModel,
    SkillStat,
    Tenant,
    utcnow,
)
from retrieval.edge import EdgeStore
from retrieval.errors import NotFoundError, RerankerError, RetrievalError, StoreUnavailableError
from retrieval.ids import bytes_hash, chunk_id, content_hash, document_id
from retrieval.remote import (
    RemoteStore,
    StoreAddress,
    StoreProcess,
    StoreServer,
    ranked_search,
    supervise,
)
from retrieval.rerank import CrossEncoderReranker, Reranker
from retrieval.store import VectorStore
from retrieval.types import (
    Chunk,
    ChunkFilter,
    Fusion,
    Hit,
    Phase,
    SearchMode,
    SearchQuery,
    check_metadata,
    search_text,
)

if TYPE_CHECKING:
    from retrieval.qdrant import QdrantStore

__all__ = [
    "URL_STATES",
    "ApiKey",
    "Catalog",
    "CatalogStats",
    "Chunk",
    "ChunkFilter",
    "CrawlUrl",
    "CrossEncoderReranker",
    "Document",
    "DocumentQuery",
    "EdgeStore",
    "Fusion",
    "Hit",
    "Job",
    "NotFoundError",
    "Phase",
    "QdrantStore",
    "RemoteStore",
    "Reranker",
    "RerankerError",
    "RetrievalError",
    "Schedule",
    "SearchMode",
    "SearchQuery",
    "SiteModel",
    "SkillStat",
    "StoreAddress",
    "StoreProcess",
    "StoreServer",
    "StoreUnavailableError",
    "Tenant",
    "VectorStore",
    "bytes_hash",
    "check_metadata",
    "chunk_id",
    "content_hash",
    "document_id",
    "ranked_search",
    "search_text",
    "supervise",
    "utcnow",
]


def __getattr__(name: str) -> Any:
    """QdrantStore on first use: qdrant-client costs 85 MB resident per process and the embedded
    default never needs it."""
    if name == "QdrantStore":
        from retrieval.qdrant import QdrantStore  # noqa: PLC0415

        return QdrantStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
