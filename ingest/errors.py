"""Errors raised while turning bytes into chunks.

IngestError
 ├── UnsupportedTypeError    the content is of a type lore does not ingest (HTTP 415)
 ├── DocumentTooLargeError   the content is over the configured size limit (HTTP 413)
 ├── EmptyDocumentError      the content is empty or has no extractable text (HTTP 422)
 ├── ExtractionError         the file is damaged or its extractor failed (HTTP 422)
 │    ├── UnsafeDocumentError     a decompression bomb, XML entities, … (HTTP 422)
 │    ├── ProtectedDocumentError  encrypted or password-protected (HTTP 422)
 │    └── ExtractionTimeoutError  extraction ran past its time limit (HTTP 422)
 ├── ToolMissingError        the type needs a program that is not installed (HTTP 422)
 └── EmbeddingError          the embedding model failed (HTTP 503 / failed job)
"""


class IngestError(Exception):
    """Root of every error the ingest package raises."""


class UnsupportedTypeError(IngestError):
    pass


class DocumentTooLargeError(IngestError):
    pass


class EmptyDocumentError(IngestError):
    pass


class ExtractionError(IngestError):
    pass


class UnsafeDocumentError(ExtractionError):
    pass


class ProtectedDocumentError(ExtractionError):
    pass


class ExtractionTimeoutError(ExtractionError):
    pass


class ToolMissingError(IngestError):
    pass


class EmbeddingError(IngestError):
    pass
