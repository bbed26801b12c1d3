"""Extraction in a child process with a time and memory limit, so that one hostile or broken file
cannot hang or exhaust the server. Children fork from a forkserver that has the extractors
imported, so each file costs a fork, not an interpreter start."""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from ingest.errors import ExtractionError, ExtractionTimeoutError, IngestError, UnsafeDocumentError
from ingest.formats import Extracted, ExtractRequest, extract

log = logging.getLogger(__name__)
_MIB = 1024 * 1024


def _child(
    conn: Connection,
    request: ExtractRequest,
    memory_mb: int | None,
    target: Callable[[ExtractRequest], Extracted],
) -> None:
    os.setsid()  # its own process group: a timeout also ends LibreOffice, ffmpeg, tesseract
    if memory_mb:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * _MIB, memory_mb * _MIB))
    result: tuple[str, Any]
    try:
        result = ("ok", target(request))
    except MemoryError:
        result = (
            "error",
            UnsafeDocumentError(
                f"{request.name} needs more than {memory_mb} MiB to extract "
                "(LORE_DOCUMENTS__MEMORY_MB)"
            ),
        )
    except IngestError as exc:
        result = ("error", exc)
    except Exception as exc:  # a library's own error: report it, never crash the server
        result = ("error", ExtractionError(f"{request.name}: {type(exc).__name__}: {exc}"[:500]))
    try:
        conn.send(result)
    except Exception as exc:  # an exception that does not pickle
        conn.send(("error", ExtractionError(f"{request.name}: {exc}"[:500])))
    finally:
        conn.close()


class Sandbox:
    """Runs `extract` in a child process; raises `ExtractionTimeoutError` past `timeout_s`."""

    def __init__(
        self,
        timeout_s: float = 180.0,
        memory_mb: int | None = 4096,
        target: Callable[[ExtractRequest], Extracted] = extract,
    ) -> None:
        """`target` must be a module-level function (it is pickled into the child)."""
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.target = target
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(["ingest.formats"])

    def extract(self, request: ExtractRequest) -> Extracted:
        receiver, sender = self._ctx.Pipe(duplex=False)
        process = self._ctx.Process(
            target=_child, args=(sender, request, self.memory_mb, self.target), daemon=True
        )
        process.start()
        sender.close()
        try:
            if not receiver.poll(self.timeout_s):
                raise ExtractionTimeoutError(
                    f"extracting {request.name} took longer than {self.timeout_s:g} s "
                    "(LORE_DOCUMENTS__TIMEOUT_S)"
                )
            kind, value = receiver.recv()
        except EOFError:
            process.join(5)
            raise ExtractionError(
                f"the extractor for {request.name} crashed (exit code {process.exitcode})"
            ) from None
        finally:
            receiver.close()
            _end(process)
        if kind == "error":
            raise value
        assert isinstance(value, Extracted)
        return value


def _end(process: Any) -> None:
    process.join(0.5)
    if process.is_alive() or process.exitcode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
        process.join(5)
    try:
        process.close()
    except ValueError:
        log.warning("extractor process %s did not exit", process.pid)
