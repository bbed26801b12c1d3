"""Bytes in, chunks out: type detection, HTML extraction, heading-aware chunking, embedding and
indexing into the store. Depends only on `retrieval`."""

from ingest.chunker import Section, TextChunk, chunk_markdown, count_words, split_sections
from ingest.detect import SUPPORTED, DocType, decode_text, detect_type
from ingest.embed import (
    Embedder,
    HashEmbedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    SplitEmbedder,
    bf16_matrix_units,
    usable_cores,
)
from ingest.errors import (
    DocumentTooLargeError,
    EmbeddingError,
    EmptyDocumentError,
    ExtractionError,
    ExtractionTimeoutError,
    IngestError,
    ProtectedDocumentError,
    ToolMissingError,
    UnsafeDocumentError,
    UnsupportedTypeError,
)
from ingest.formats import EXTRACTORS, Extracted, ExtractRequest, Limits, Tools, extract
from ingest.html import (
    ExtractedHtml,
    collapse,
    extract_html,
    hidden_from_readers,
    is_button,
    is_permalink,
    pager,
    title_line,
)
from ingest.html import to_markdown as html_to_markdown
from ingest.pipeline import (
    ChunkingOptions,
    Indexer,
    IndexResult,
    PreparedDocument,
    SourceDocument,
    prepare,
)
from ingest.sandbox import Sandbox

__all__ = [
    "EXTRACTORS",
    "SUPPORTED",
    "ChunkingOptions",
    "DocType",
    "DocumentTooLargeError",
    "Embedder",
    "EmbeddingError",
    "EmptyDocumentError",
    "ExtractRequest",
    "Extracted",
    "ExtractedHtml",
    "ExtractionError",
    "ExtractionTimeoutError",
    "HashEmbedder",
    "IndexResult",
    "Indexer",
    "IngestError",
    "Limits",
    "OnnxEmbedder",
    "PreparedDocument",
    "ProtectedDocumentError",
    "Sandbox",
    "Section",
    "SentenceTransformerEmbedder",
    "SourceDocument",
    "SplitEmbedder",
    "TextChunk",
    "ToolMissingError",
    "Tools",
    "UnsafeDocumentError",
    "UnsupportedTypeError",
    "bf16_matrix_units",
    "chunk_markdown",
    "collapse",
    "count_words",
    "decode_text",
    "detect_type",
    "extract",
    "extract_html",
    "hidden_from_readers",
    "html_to_markdown",
    "is_button",
    "is_permalink",
    "pager",
    "prepare",
    "split_sections",
    "title_line",
    "usable_cores",
]
