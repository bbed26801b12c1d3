"""A Qdrant server that goes away after lore started: both qdrant-client indexes (chunks and
skills) answer with StoreUnavailableError, which the API turns into 503 store_unavailable, rather
than an internal error. The server is a stand-in on 127.0.0.1 that answers the three calls of
start-up (collection lookup, creation, payload indexes) the way Qdrant does, then stops."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ingest import HashEmbedder
from retrieval import ChunkFilter, QdrantStore, SearchQuery, StoreUnavailableError
from retrieval.skills import QdrantSkillIndex


class QdrantStandIn:
    def __init__(self) -> None:
        self.paths: list[str] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, result: Any) -> None:
                stand_in.paths.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                body = json.dumps({"result": result, "status": "ok", "time": 0.0}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.endswith("/exists"):
                    self._answer({"exists": False})
                else:  # the version probe
                    self._answer({"title": "qdrant", "version": "1.15.0"})

            def do_PUT(self) -> None:
                if "/index" in self.path:
                    self._answer({"operation_id": 1, "status": "completed"})
                else:
                    self._answer(True)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def qdrant() -> Iterator[QdrantStandIn]:
    stand_in = QdrantStandIn()
    yield stand_in
    stand_in.stop()


def test_a_qdrant_server_that_goes_away_is_store_unavailable(qdrant: QdrantStandIn) -> None:
    dim = HashEmbedder().dim
    store = QdrantStore(dim, url=qdrant.url, timeout_s=2)
    skills = QdrantSkillIndex(dim, url=qdrant.url, timeout_s=2)
    assert any(p.startswith("PUT /collections/lore_skills") for p in qdrant.paths)
    qdrant.stop()
    query = SearchQuery(
        vector=[0.1] * dim, text="opening hours", filter=ChunkFilter(tenant_ids=("acme",))
    )
    with pytest.raises(StoreUnavailableError, match="Qdrant server"):
        store.search(query)
    with pytest.raises(StoreUnavailableError, match="Qdrant server"):
        store.count(ChunkFilter(tenant_ids=("acme",)))
    with pytest.raises(StoreUnavailableError, match="Qdrant server"):
        skills.count("acme")
    with pytest.raises(StoreUnavailableError, match="Qdrant server"):
        skills.nearest("acme", "clinic.test", "add a patient", [0.1] * dim, 0.0, 3)


def test_the_api_answers_503_when_the_qdrant_server_goes_away(
    qdrant: QdrantStandIn, make_client: Callable[..., TestClient]
) -> None:
    client = make_client(qdrant={"url": qdrant.url, "timeout_s": 2})
    qdrant.stop()
    response = client.post("/knowledge/query", json={"query": "opening hours"})
    assert response.status_code == 503, response.text
    assert response.json()["error"] == "store_unavailable"
    context = client.post(
        "/agent/context", json={"url": "https://clinic.test/", "goal": "add a patient"}
    )
    assert context.status_code == 503 and "Qdrant server" in context.json()["message"]
