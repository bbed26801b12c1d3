"""A vector store used from another process: `RemoteStore` forwards every call over a
connection (a `multiprocessing` pipe) to `StoreServer`, a thread in the process that owns the
store. Qdrant Edge opens a shard from one process only, so lore's job process (crawling,
extraction, embedding, below the API's priority) writes through the API process, which owns it.

Calls are serialised on the connection; an exception raised by the store is raised again in
the caller; a connection that breaks is `StoreUnavailableError`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from retrieval.errors import StoreUnavailableError
from retrieval.store import VectorStore
from retrieval.types import Chunk, ChunkFilter, Hit, SearchQuery

log = logging.getLogger(__name__)

_METHODS = frozenset(
    {"upsert", "delete", "set_payload", "delete_where", "ids_where", "scroll", "count", "search"}
)


class RemoteStore:
    """The `VectorStore` of another process, over `connection`."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._lock = threading.Lock()

    def _call(self, method: str, *args: Any) -> Any:
        with self._lock:
            try:
                self._connection.send((method, args))
                ok, value = self._connection.recv()
            except (EOFError, OSError) as exc:
                raise StoreUnavailableError(
                    f"the process that owns the store is gone ({exc or type(exc).__name__})"
                ) from exc
        if not ok:
            raise value
        return value

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        self._call("upsert", list(chunks))

    def delete(self, ids: Sequence[str]) -> None:
        self._call("delete", list(ids))

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        self._call("set_payload", list(ids), payload)

    def delete_where(self, flt: ChunkFilter) -> None:
        self._call("delete_where", flt)

    def ids_where(self, flt: ChunkFilter) -> set[str]:
        result: set[str] = self._call("ids_where", flt)
        return result

    def scroll(self, flt: ChunkFilter, limit: int) -> list[Chunk]:
        result: list[Chunk] = self._call("scroll", flt, limit)
        return result

    def count(self, flt: ChunkFilter) -> int:
        result: int = self._call("count", flt)
        return result

    def search(self, query: SearchQuery) -> list[Hit]:
        result: list[Hit] = self._call("search", query)
        return result

    def close(self) -> None:
        """The owner closes the store; this only lets go of the connection."""
        self._connection.close()


class StoreServer(threading.Thread):
    """Serves `store` to one `RemoteStore` until its connection closes."""

    def __init__(self, store: VectorStore, connection: Connection) -> None:
        super().__init__(name="lore-store-server", daemon=True)
        self._store = store
        self._connection = connection

    def run(self) -> None:
        while True:
            try:
                method, args = self._connection.recv()
            except (EOFError, OSError):
                return
            try:
                if method not in _METHODS:
                    raise ValueError(f"not a store method: {method!r}")
                reply: tuple[bool, Any] = (True, getattr(self._store, method)(*args))
            except Exception as exc:  # sent back and raised in the caller
                reply = (False, exc)
            try:
                self._connection.send(reply)
            except (OSError, ValueError):
                return
            except Exception as exc:  # an exception that does not pickle
                log.warning("store call %s: cannot send the answer back: %s", method, exc)
                self._connection.send((False, StoreUnavailableError(f"{method} failed: {exc}")))
