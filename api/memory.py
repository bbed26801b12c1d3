"""Keeping a long-running process's resident memory to what it uses, with glibc's malloc.

glibc keeps what a process frees for later reuse, and gives memory back to the system only from
the top of a heap. A crawl allocates and frees a page's worth of trees, texts and tensors from
several threads, page after page: in a 150-page crawl in one process, 413 MB of the 1,003 MB
resident had been freed and was still held (585 MB after one `malloc_trim`). Nothing here is
needed for correctness; on a C library without these calls it does nothing."""

from __future__ import annotations

import ctypes
import functools
import threading

M_ARENA_MAX = -8  # glibc's mallopt parameter


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def few_malloc_arenas(arenas: int = 2) -> None:
    """glibc gives each thread that allocates at once an arena of its own (up to 8 per core),
    and a crawl's threads (fetching, extraction, ONNX Runtime) leave them fragmented: two
    arenas took the job process's peak from 918 to 727 MB in a 120-page crawl at the same
    speed."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_ARENA_MAX, arenas)


def give_back_freed_memory() -> bool:
    """Return the free pages of every malloc arena to the system; False where not glibc."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


class MemoryTrimmer:
    """A daemon thread that gives freed memory back every `interval_s` (a few milliseconds
    each time, while it holds each arena's lock)."""

    def __init__(self, interval_s: float = 2.0) -> None:
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lore-malloc-trim", daemon=True)

    def start(self) -> MemoryTrimmer:
        if _libc() is not None:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            give_back_freed_memory()


def lean_child() -> None:
    """What lore's child processes (jobs, the store) do first: two malloc arenas, and freed
    memory given back every 2 s."""
    few_malloc_arenas()
    MemoryTrimmer().start()
