"""Errors raised by the storage layer.

RetrievalError
 ├── StoreUnavailableError   the vector store cannot be opened (locked by another process, corrupt)
 ├── NotFoundError           a document or job that does not exist
 └── RerankerError           the reranking model cannot be loaded or failed
"""


class RetrievalError(Exception):
    """Root of every error the retrieval package raises."""


class StoreUnavailableError(RetrievalError):
    """The store cannot be opened or used."""


class NotFoundError(RetrievalError):
    """The requested record does not exist."""


class RerankerError(RetrievalError):
    """The configured reranker cannot be loaded or failed on a query."""
