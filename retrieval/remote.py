"""A vector store used from another process: `RemoteStore` forwards every call over a
connection (a `multiprocessing` pipe or socket) to `StoreServer`, a thread in the process that
owns the store. Qdrant Edge opens a shard from one process only, so lore's job process
(crawling, extraction, embedding, below the API's priority) writes through the process that
owns it.

`StoreProcess` is such an owner with nothing else to do: the store in a process of its own,
serving every connection made to it. `lore serve` keeps its shard there because a shard's
search holds the interpreter lock of the process that calls it (2.6 ms of every answer): in
the API process it took turns with HTTP, ranking and the embedding's Python, and one process
answered at most ~130 times a second on two cores (docs/serving.md).

Calls are serialised on each connection (a `RemoteStore` with several takes a free one); an
exception raised by the store is raised again in the caller; a connection that breaks is
`StoreUnavailableError`."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.util
import os
import pickle
import queue
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import (
    Client,
    Connection,
    Listener,
    answer_challenge,
    deliver_challenge,
    wait,
)
from typing import Any

from retrieval.errors import StoreUnavailableError
from retrieval.ranking import Freshness, rerank
from retrieval.store import VectorStore
from retrieval.types import Chunk, ChunkFilter, Hit, SearchQuery

log = logging.getLogger(__name__)

RECONNECT_S = 10.0  # how long a call waits for a store process that is being started again
_METHODS = frozenset(
    {"upsert", "delete", "set_payload", "delete_where", "ids_where", "scroll", "count", "search"}
)


def ranked_search(store: VectorStore, query: SearchQuery, policy: Freshness, k: int) -> list[Hit]:
    """The engine's candidates for `query` re-ranked by `policy` (freshness, the phrase and
    section boosts, the duplicate collapse), the best `k`. With a `RemoteStore` the ranking
    runs in the store's process: k hits cross the connection instead of the whole pool
    (pickling ~58 chunks there and back cost 1 ms of an answer)."""
    if isinstance(store, RemoteStore):
        return store.ranked(query, policy, k)
    return rerank(store.search(query), policy, k, query=query.text)


def _ask(connection: Connection, method: str, args: tuple[Any, ...]) -> tuple[bool, Any]:
    connection.send((method, args))
    answer: tuple[bool, Any] = connection.recv()
    return answer


class RemoteStore:
    """The `VectorStore` of another process, over `connections` (as many calls at once as
    there are connections; a caller waits for a free one). With `reconnect`, a connection
    that broke is made again (for up to `reconnect_wait_s` while the owner is started again)
    and the call asked once more."""

    def __init__(
        self,
        *connections: Connection,
        reconnect: Callable[[], Connection] | None = None,
        reconnect_wait_s: float = RECONNECT_S,
    ) -> None:
        if not connections:
            raise ValueError("a RemoteStore needs at least one connection")
        self._reconnect = reconnect
        self._reconnect_wait_s = reconnect_wait_s
        self._lock = threading.Lock()
        self._connections = set(connections)
        self._free: queue.SimpleQueue[Connection] = queue.SimpleQueue()
        for connection in connections:
            self._free.put(connection)

    def _call(self, method: str, *args: Any) -> Any:
        connection = self._free.get()
        try:
            try:
                ok, value = _ask(connection, method, args)
            except (EOFError, OSError):
                if self._reconnect is None:
                    raise
                # Being started again: ask the new process once it listens (every store call
                # is idempotent: an upsert or a delete that reached the old one does the same
                # again). A crawl's page or an agent's question waits a second or two instead
                # of failing.
                connection = self._replace(connection, self._reconnect_wait_s)
                ok, value = _ask(connection, method, args)
        except (EOFError, OSError) as exc:
            connection = self._replace(connection)
            raise StoreUnavailableError(
                f"the process that owns the store is gone ({exc or type(exc).__name__})"
            ) from exc
        except (KeyboardInterrupt, SystemExit):  # an answer may still come: not reused
            connection = self._replace(connection)
            raise
        finally:
            self._free.put(connection)
        if not ok:
            raise value
        return value

    def _replace(self, broken: Connection, wait_s: float = 0.0) -> Connection:
        """A new connection in place of `broken`, trying for up to `wait_s`; `broken` itself,
        closed, while none can be made (the next call tries again)."""
        broken.close()
        if self._reconnect is None:
            return broken
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fresh = self._reconnect()
                break
            except StoreUnavailableError:
                if time.monotonic() >= deadline:
                    return broken
                time.sleep(0.1)
        with self._lock:
            self._connections.discard(broken)
            self._connections.add(fresh)
        return fresh

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

    def ranked(self, query: SearchQuery, policy: Freshness, k: int) -> list[Hit]:
        """`ranked_search` in the store's process."""
        result: list[Hit] = self._call("ranked", query, policy, k)
        return result

    def close(self) -> None:
        """The owner closes the store; this only lets go of the connections."""
        with self._lock:
            for connection in self._connections:
                connection.close()


def _serve_one(store: VectorStore, connection: Connection) -> bool:
    """Read one call from `connection`, answer it; False when the connection is gone."""
    try:
        method, args = connection.recv()
    except (EOFError, OSError):
        return False
    try:
        if method == "ranked":
            reply: tuple[bool, Any] = (True, ranked_search(store, *args))
        elif method not in _METHODS:
            raise ValueError(f"not a store method: {method!r}")
        else:
            reply = (True, getattr(store, method)(*args))
    except Exception as exc:  # sent back and raised in the caller
        reply = (False, _portable(exc, method))
    try:
        connection.send(reply)
    except (OSError, ValueError):
        return False
    except Exception as exc:  # an answer that does not pickle
        log.warning("store call %s: cannot send the answer back: %s", method, exc)
        try:
            connection.send((False, StoreUnavailableError(f"{method} failed: {exc}")))
        except Exception:
            return False
    return True


def _portable(exc: Exception, method: str) -> Exception:
    """`exc`, or a `StoreUnavailableError` saying what it was when it would not arrive whole
    (an exception whose class cannot be pickled, or rebuilt from its arguments)."""
    try:
        pickle.loads(pickle.dumps(exc))  # noqa: S301 - our own bytes, made just above
    except Exception:
        return StoreUnavailableError(f"{method} failed: {type(exc).__name__}: {exc}")
    return exc


class StoreServer(threading.Thread):
    """Serves `store` to one `RemoteStore` until its connection closes."""

    def __init__(self, store: VectorStore, connection: Connection) -> None:
        super().__init__(name="lore-store-server", daemon=True)
        self._store = store
        self._connection = connection

    def run(self) -> None:
        while _serve_one(self._store, self._connection):
            pass


STORE_START_S = 120.0  # opening a large shard reads its segments
RESTART_MAX_S = 60.0  # the longest wait before starting a process that keeps dying again


@dataclass(frozen=True)
class StoreAddress:
    """Where a store process listens (a Unix socket in a private directory) and its key:
    what another process needs to call it."""

    path: str
    authkey: bytes

    def connect(self) -> Connection:
        try:
            return Client(self.path, "AF_UNIX", authkey=self.authkey)
        except (OSError, EOFError, multiprocessing.AuthenticationError) as exc:
            reason = exc or type(exc).__name__
            raise StoreUnavailableError(f"cannot reach the store process: {reason}") from exc

    def store(self, connections: int = 1, reconnect_wait_s: float = RECONNECT_S) -> RemoteStore:
        """A `RemoteStore` over `connections` connections, made again when they break."""
        made = [self.connect() for _ in range(connections)]
        return RemoteStore(*made, reconnect=self.connect, reconnect_wait_s=reconnect_wait_s)


class StoreProcess:
    """The store that `factory` opens, in a process of its own that serves every connection
    made to `address` (`setup`, a module's function, runs there first). Started by the
    constructor: raises `StoreUnavailableError` with the child's reason when the store cannot
    be opened (another process holds it). A process that dies is started again (at once, then
    after up to RESTART_MAX_S while it keeps dying), and `RemoteStore`s made by
    `address.store` reconnect. `stop` closes the store (flushed) and ends the process; one
    whose parent died does the same."""

    def __init__(
        self,
        factory: Callable[[], VectorStore],
        name: str = "lore-store",
        setup: Callable[[], None] | None = None,
    ) -> None:
        self._factory = factory
        self._setup = setup
        self._name = name
        self._directory = tempfile.mkdtemp(prefix="lore-store-")
        self.address = StoreAddress(os.path.join(self._directory, "socket"), os.urandom(32))
        self._context = multiprocessing.get_context("spawn")
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # a restart and `stop` do not cross
        self.restarts = 0
        try:
            self._start()
        except BaseException:
            shutil.rmtree(self._directory, ignore_errors=True)
            raise
        self._watcher = threading.Thread(target=self._watch, name=f"{name}-watch", daemon=True)
        self._watcher.start()
        # Stopped before multiprocessing's exit handler would SIGTERM and then join it (a
        # `Lore` never closed): that join would wait for a stop nobody sends.
        self._finalizer = multiprocessing.util.Finalize(None, self.stop, exitpriority=10)

    def _start(self) -> None:
        control, child = self._context.Pipe()
        process = self._context.Process(
            target=_serve_store,
            args=(self._factory, self._setup, self.address, child),
            name=self._name,
            daemon=True,
        )
        process.start()
        child.close()  # the child holds it now: its death closes the pipe here
        try:
            if not control.poll(STORE_START_S):
                raise StoreUnavailableError(f"the store did not open within {STORE_START_S} s")
            state, message = control.recv()
            if state != "ready":
                raise StoreUnavailableError(message)
        except EOFError:
            process.join(5)
            control.close()
            raise StoreUnavailableError(
                f"the store process exited while opening the store (code {process.exitcode})"
            ) from None
        except BaseException:
            _end(process, control, 5.0)
            raise
        self._process, self._control = process, control

    def _watch(self) -> None:
        supervise("store process", lambda: self._process, self._stopping, self._restart)

    def _restart(self) -> None:
        with self._lock:
            if not self._stopping.is_set():
                self._start()
                self.restarts += 1

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def alive(self) -> bool:
        return self._process.is_alive()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Close the store and end the process (killed after `timeout_s`)."""
        self._stopping.set()
        self._finalizer.cancel()
        with self._lock:
            _end(self._process, self._control, timeout_s)
        # The watcher waits on the same process: when its wait reaps the process first, the
        # process reads as alive until that thread has recorded the exit code. Let it finish.
        if threading.current_thread() is not self._watcher:
            self._watcher.join(timeout_s)
        shutil.rmtree(self._directory, ignore_errors=True)


def supervise(
    what: str,
    current: Callable[[], multiprocessing.process.BaseProcess],
    stopping: threading.Event,
    restart: Callable[[], None],
) -> None:
    """Wait for the `current()` process to die and `restart` it, until `stopping` is set: at
    once the first time, then after up to RESTART_MAX_S between attempts while it keeps dying
    (a process that ran RESTART_MAX_S is not a crash loop). Failed starts are logged and tried
    again."""
    delay = 0.0
    while True:
        process, started = current(), time.monotonic()
        process.join()
        if stopping.is_set():
            return
        if time.monotonic() - started > RESTART_MAX_S:
            delay = 0.0
        log.error(
            "%s %s died (exit code %s); starting it again in %.0f s",
            what,
            process.pid,
            process.exitcode,
            delay,
        )
        if stopping.wait(delay):
            return
        try:
            restart()
        except Exception:  # e.g. out of memory or processes: try again later
            log.exception("the %s could not be started", what)
        delay = min(max(1.0, delay * 2), RESTART_MAX_S)


def _end(process: multiprocessing.process.BaseProcess, control: Connection, wait_s: float) -> None:
    with contextlib.suppress(OSError):
        control.send("stop")
    process.join(wait_s)
    if process.is_alive():
        log.warning("the store process did not stop within %.0f s: killed", wait_s)
        process.kill()
        process.join(5)
    control.close()


def _serve_store(
    factory: Callable[[], VectorStore],
    setup: Callable[[], None] | None,
    address: StoreAddress,
    control: Connection,
) -> None:
    """The store process: open the store, answer every connection until the parent says stop
    (or is gone), then close the store."""
    # Ctrl-C and a service manager's SIGTERM reach the whole group: the parent decides, and
    # stops this process after its own work (a SIGTERM here would make the parent start it
    # again in the middle of its shutdown).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        if setup is not None:
            setup()
        store = factory()
    except Exception as exc:
        control.send(("failed", str(exc)))
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(address.path)  # left by a process that died
        listener = Listener(address.path, "AF_UNIX")  # the key is checked on a thread of its own
        os.chmod(address.path, 0o600)
    except OSError as exc:  # e.g. a socket path longer than the system allows
        store.close()
        control.send(("failed", f"cannot listen at {address.path}: {exc}"))
        return
    arrived: queue.SimpleQueue[Connection] = queue.SimpleQueue()
    wake_read, wake_write = os.pipe()
    closing = threading.Event()

    def greet(connection: Connection) -> None:
        """The key's challenge both ways, off the accept loop: a client that never answers
        holds up only itself."""
        try:
            deliver_challenge(connection, address.authkey)
            answer_challenge(connection, address.authkey)
        except Exception as exc:  # the wrong key, or it went away
            log.warning("store process: refused a connection: %s", exc or type(exc).__name__)
            connection.close()
            return
        arrived.put(connection)
        os.write(wake_write, b"!")

    def accept() -> None:
        while not closing.is_set():
            try:
                connection = listener.accept()
            except OSError as exc:  # closed (stopping), or out of descriptors for a while
                if closing.is_set():
                    return
                log.warning("store process: accept failed: %s", exc)
                time.sleep(0.1)
                continue
            threading.Thread(target=greet, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, name="lore-store-accept", daemon=True).start()
    control.send(("ready", None))
    # One thread answers every connection in turn: the store's calls hold the interpreter lock
    # (a thread per connection only passed it around: 177 instead of 200 answers/s).
    connections: list[Connection] = []
    serving = True
    while serving:
        for ready in wait([control, wake_read, *connections]):
            if ready is control:  # a stop, or the parent is gone
                serving = False
                break
            if ready == wake_read:
                os.read(wake_read, 512)
                while not arrived.empty():
                    connections.append(arrived.get())
            elif not _serve_one(store, ready):  # type: ignore[arg-type]
                connections.remove(ready)  # type: ignore[arg-type]
                ready.close()  # type: ignore[union-attr]
    closing.set()
    listener.close()
    store.close()
    # Its socket's directory too: a parent that was killed cannot remove it.
    shutil.rmtree(os.path.dirname(address.path), ignore_errors=True)
