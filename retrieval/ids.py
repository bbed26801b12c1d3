"""Deterministic identifiers: re-running an ingestion upserts instead of duplicating."""

from __future__ import annotations

import hashlib
import re
import uuid

_NAMESPACE = uuid.UUID("6f1c2a4e-7d0b-4c59-9a57-2b1f0e6c9d31")
_SPACE = re.compile(r"\s+")


def content_hash(text: str) -> str:
    """sha256 of the text with whitespace normalised."""
    return hashlib.sha256(_SPACE.sub(" ", text).strip().encode("utf-8")).hexdigest()


def bytes_hash(data: bytes) -> str:
    """sha256 of raw bytes: a fetched body, an uploaded file."""
    return hashlib.sha256(data).hexdigest()


def document_id(tenant_id: str, locator: str) -> str:
    """A document is identified by its tenant and its URL (or upload locator)."""
    return str(uuid.uuid5(_NAMESPACE, f"doc\x1f{tenant_id}\x1f{locator}"))


def chunk_id(
    tenant_id: str,
    doc_id: str,
    phase: str,
    trigger_action: str | None,
    chunk_hash: str,
    occurrence: int = 0,
) -> str:
    """UUID5 over tenant, document, phase, trigger and content hash (plus the occurrence number
    when the same text appears more than once in one document)."""
    key = "\x1f".join((tenant_id, doc_id, phase, trigger_action or "", chunk_hash, str(occurrence)))
    return str(uuid.uuid5(_NAMESPACE, key))
