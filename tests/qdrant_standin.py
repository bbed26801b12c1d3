"""TEST ONLY: a Qdrant REST endpoint served by qdrant-client's own in-process engine.

No Qdrant server can run on this project's machines, yet the worker tier's tests need one
vector store that several processes (API instances, `lore worker`s) write to and search, as
they do a Qdrant server in the compose stack. This serves the REST routes lore's qdrant-client
stores call (collections, indexes, upsert, delete, payload, scroll, count, retrieve, query) on
127.0.0.1, each request body parsed into qdrant-client's own REST models and answered by its
local engine (`QdrantClient(":memory:")`), one request at a time (that engine is not
thread-safe). It is not Qdrant: no persistence, no payload indexes (the local engine filters
by scanning), scores as the local engine computes them. Set `LORE_TEST_QDRANT_URL` to run the
same tests against a real Qdrant server instead."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel
from qdrant_client import QdrantClient, models

Route = Callable[[QdrantClient, str, dict[str, Any]], Any]
VERSION = "1.20.0"  # the Qdrant the compose stack runs (docker-compose.yml)
_DONE = {"operation_id": 0, "status": "completed"}


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _selector(body: dict[str, Any]) -> models.PointIdsList | models.FilterSelector:
    if "points" in body:
        return models.PointIdsList(points=body["points"])
    return models.FilterSelector(filter=models.Filter.model_validate(body["filter"]))


def _create(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.CreateCollection.model_validate(body)
    return client.create_collection(
        name,
        vectors_config=request.vectors,  # type: ignore[arg-type]
        sparse_vectors_config=request.sparse_vectors,
    )


def _upsert(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    points = [models.PointStruct.model_validate(p) for p in body["points"]]
    client.upsert(name, points)
    return _DONE


def _payload(overwrite: bool) -> Route:
    def route(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
        request = models.SetPayload.model_validate(body)
        flt = request.filter
        points = request.points if request.points is not None else models.FilterSelector(filter=flt)  # type: ignore[arg-type]
        if overwrite:
            client.overwrite_payload(name, request.payload, points=points)
        else:
            client.set_payload(name, request.payload, points=points)
        return _DONE

    return route


def _reads(request: models.ScrollRequest | models.PointRequest) -> dict[str, Any]:
    """What a read returns of each point: Qdrant's REST defaults (payload yes, vectors no)."""
    return {
        "with_payload": request.with_payload if request.with_payload is not None else True,
        "with_vectors": request.with_vector or False,
    }


def _scroll(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.ScrollRequest.model_validate(body)
    records, offset = client.scroll(
        name,
        scroll_filter=request.filter,
        limit=request.limit or 10,
        offset=request.offset,
        **_reads(request),
    )
    return {"points": _dump(records), "next_page_offset": offset}


def _count(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.CountRequest.model_validate(body)
    return client.count(name, count_filter=request.filter, exact=True)


def _retrieve(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.PointRequest.model_validate(body)
    return client.retrieve(name, request.ids, **_reads(request))


def _query(client: QdrantClient, name: str, body: dict[str, Any]) -> Any:
    request = models.QueryRequest.model_validate(body)
    return client.query_points(
        name,
        query=request.query,  # type: ignore[arg-type]
        using=request.using,
        prefetch=request.prefetch,
        query_filter=request.filter,
        limit=request.limit or 10,
        offset=request.offset,
        with_payload=request.with_payload if request.with_payload is not None else False,
        score_threshold=request.score_threshold,
    )


# (method, path after /collections/{name}) -> route
ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "/exists"): lambda c, n, b: {"exists": c.collection_exists(n)},
    ("GET", ""): lambda c, n, b: c.get_collection(n),
    ("PUT", ""): _create,
    ("DELETE", ""): lambda c, n, b: c.delete_collection(n),
    ("PUT", "/index"): lambda c, n, b: _DONE,  # the local engine filters by scanning
    ("PUT", "/points"): _upsert,
    ("POST", "/points"): _retrieve,
    ("POST", "/points/delete"): lambda c, n, b: (c.delete(n, _selector(b)), _DONE)[1],
    ("POST", "/points/payload"): _payload(overwrite=False),
    ("PUT", "/points/payload"): _payload(overwrite=True),
    ("POST", "/points/scroll"): _scroll,
    ("POST", "/points/count"): _count,
    ("POST", "/points/query"): _query,
}
_PATH = re.compile(r"^/collections/([^/?]+)(/[^?]*)?(?:\?.*)?$")


class QdrantStandIn:
    """Serves until `close()`; `url` is where qdrant-client finds it."""

    def __init__(self) -> None:
        self.client = QdrantClient(":memory:")
        self.requests = 0
        lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}") if length else {}
                if self.path == "/":  # qdrant-client checks the server's version
                    return self._send(200, {"title": "qdrant stand-in", "version": VERSION})
                match = _PATH.match(self.path)
                route = match and ROUTES.get((self.command, match.group(2) or ""))
                if match is None or route is None:
                    return self._send(404, {"status": {"error": f"no route {self.path}"}})
                try:
                    with lock:
                        stand_in.requests += 1
                        result = route(stand_in.client, match.group(1), body)
                except (ValueError, KeyError) as exc:
                    return self._send(400, {"status": {"error": str(exc)}})
                return self._send(200, {"result": _dump(result), "status": "ok", "time": 0.0})

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.client.close()
