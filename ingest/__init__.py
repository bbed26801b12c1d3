"""Bytes in, chunks out: type detection, HTML extraction, heading-aware chunking, embedding and
indexing into the store. Depends only on `retrieval`."""

from ingest.chunker import Section, TextChunk, chunk_markdown, count_words, split_sections
from ingest.detect import SUPPORTED, DocType, decode_text, detect_type
from ingest.embed import Embedder, HashEmbedder, SentenceTransformerEmbedder
from ingest.errors import (
    DocumentTooLargeError,
    EmbeddingError,
    EmptyDocumentError,
    IngestError,
    UnsupportedTypeError,
)
from ingest.html import ExtractedHtml, extract_html
from ingest.pipeline import (
    ChunkingOptions,
    Indexer,
    IndexResult,
    PreparedDocument,
    SourceDocument,
    prepare,
)
from ingest.tables import repair_tables

__all__ = [
    "SUPPORTED",
    "ChunkingOptions",
    "DocType",
    "DocumentTooLargeError",
    "Embedder",
    "EmbeddingError",
    "EmptyDocumentError",
    "ExtractedHtml",
    "HashEmbedder",
    "IndexResult",
    "Indexer",
    "IngestError",
    "PreparedDocument",
    "Section",
    "SentenceTransformerEmbedder",
    "SourceDocument",
    "TextChunk",
    "UnsupportedTypeError",
    "chunk_markdown",
    "count_words",
    "decode_text",
    "detect_type",
    "extract_html",
    "prepare",
    "repair_tables",
    "split_sections",
]
