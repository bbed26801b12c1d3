"""Errors raised while turning bytes into chunks.

IngestError
 ├── UnsupportedTypeError   the content is of a type lore does not ingest (HTTP 415)
 ├── DocumentTooLargeError  the content is over the configured size limit (HTTP 413)
 ├── EmptyDocumentError     the content is empty or has no extractable text (HTTP 422)
 └── EmbeddingError         the embedding model failed (HTTP 500 / failed job)
"""


class IngestError(Exception):
    """Root of every error the ingest package raises."""


class UnsupportedTypeError(IngestError):
    pass


class DocumentTooLargeError(IngestError):
    pass


class EmptyDocumentError(IngestError):
    pass


class EmbeddingError(IngestError):
    pass
