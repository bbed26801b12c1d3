"""Domain errors to HTTP responses, in one place. Every error body is
`{"error": <code>, "message": <what went wrong and what to do>}`."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from api.observe import REQUEST_ID
from api.schemas import ErrorBody
from crawl import BlockedAddressError, BrowserUnavailableError, FetchError
from ingest import (
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
from retrieval import NotFoundError, RerankerError, StoreUnavailableError
from spa_phases import (
    CaptureError,
    InvalidDomError,
    ScanError,
    SnapshotError,
    SnapshotTooLargeError,
    SpaError,
)

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error raised by a route with its status and code."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


_STATUS: list[tuple[type[Exception], int, str]] = [
    (UnsupportedTypeError, 415, "unsupported_type"),
    (DocumentTooLargeError, 413, "too_large"),
    (EmptyDocumentError, 422, "empty_document"),
    (ProtectedDocumentError, 422, "protected_document"),
    (UnsafeDocumentError, 422, "unsafe_document"),
    (ExtractionTimeoutError, 422, "extraction_timeout"),
    (ExtractionError, 422, "extraction_failed"),
    (ToolMissingError, 422, "tool_missing"),
    (EmbeddingError, 503, "embedding_failed"),
    (IngestError, 422, "ingest_failed"),
    (NotFoundError, 404, "not_found"),
    (StoreUnavailableError, 503, "store_unavailable"),
    (RerankerError, 503, "reranker_failed"),
    (BlockedAddressError, 422, "blocked_address"),
    (FetchError, 502, "fetch_failed"),
    (BrowserUnavailableError, 503, "browser_unavailable"),
    (SnapshotTooLargeError, 413, "too_large"),
    (InvalidDomError, 422, "invalid_dom"),
    (SnapshotError, 422, "invalid_snapshot"),
    (CaptureError, 502, "capture_failed"),
    (ScanError, 502, "scan_failed"),
]


# The error answers every operation may give, for the OpenAPI document (all in `ErrorBody`).
ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "The request could not be read (e.g. too many files in one upload)."),
        (401, "No API key, or an unknown or revoked one."),
        (403, "The key's tenant may not read or write that domain."),
        (404, "No such job, document, skill or route."),
        (405, "The route does not take that method."),
        (409, "The request conflicts with the resource's state."),
        (413, "The upload or snapshot is too large."),
        (415, "The file's type is not supported."),
        (422, "A field is missing, of the wrong type or out of range; the message names it."),
        (429, "The key's rate limit: retry after the Retry-After header's seconds."),
        (502, "A page or webhook target did not answer as it should."),
        (500, "A bug in lore: quote the requestId (the server's log has the details)."),
        (503, "The store, the embedder, the reranker or the browser is unavailable."),
    )
}
_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}


def status_for(exc: Exception) -> tuple[int, str]:
    for kind, status, code in _STATUS:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal_error"


def error_body(code: str, message: str) -> dict[str, str]:
    """lore's error answer; `requestId` is the one in the answer's X-Request-Id and the logs."""
    return {"error": code, "message": message, "requestId": REQUEST_ID.get()}


def unexpected(exc: Exception) -> dict[str, str]:
    """The body of a bug's 500 (api.observe.Observed answers it, where the request id is
    known): logged with its traceback; the caller gets lore's shape and the id to quote."""
    log.error("request failed unexpectedly: %r", exc, exc_info=exc)
    message = "lore failed to answer; the server's log has the details under this requestId"
    return error_body("internal_error", message)


def install(app: FastAPI) -> None:
    async def api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return JSONResponse(
            error_body(exc.code, exc.message), status_code=exc.status, headers=exc.headers
        )

    async def domain_error(_: Request, exc: Exception) -> JSONResponse:
        status, code = status_for(exc)
        if status >= 500:
            log.error("request failed: %s", exc, exc_info=exc)
        return JSONResponse(error_body(code, str(exc)), status_code=status)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            problems.append(f"{where}: {err.get('msg')}")
        return JSONResponse(error_body("invalid_request", "; ".join(problems)), status_code=422)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        """Starlette's own answers (an unknown route, a wrong method, a multipart form it could
        not read) in lore's shape."""
        assert isinstance(exc, HTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = str(exc.detail)
        if exc.status_code in (404, 405):
            message = f"{message}: {request.method} {request.url.path} (see /docs)"
        return JSONResponse(
            error_body(code, message), status_code=exc.status_code, headers=exc.headers
        )

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    for kind in (
        IngestError,
        NotFoundError,
        StoreUnavailableError,
        RerankerError,
        FetchError,
        BrowserUnavailableError,
        SpaError,
    ):
        app.add_exception_handler(kind, domain_error)
