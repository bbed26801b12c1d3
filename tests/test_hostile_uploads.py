"""Hostile and broken uploads through the HTTP API and the extraction sandbox: each gets a 4xx
with a reason, nothing is stored, and the server keeps serving."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from api import Lore, create_app
from api.app import serve_in_thread
from api.auth import Authenticator
from ingest import (
    Embedder,
    ExtractionError,
    ExtractionTimeoutError,
    ExtractRequest,
    Sandbox,
    UnsafeDocumentError,
)
from ingest.formats import Extracted
from tests.conftest import make_settings
from tests.test_documents import BILLION_LAUGHS, YAML_BOMB, make_pdf, zip_bomb_docx

pytestmark = pytest.mark.slow

EXTENSIONS = [
    "pdf", "docx", "doc", "xlsx", "xls", "pptx", "ppt", "odt", "rtf", "epub", "txt", "md",
    "html", "csv", "tsv", "json", "ndjson", "yaml", "xml", "mp3", "wav", "m4a", "mp4", "webm",
]  # fmt: skip


def snapshot(client: TestClient) -> tuple[int, int]:
    health = client.get("/healthz").json()
    return health["documents"], health["chunks"]


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    client = make_client(documents={"timeout_s": 60})
    response = client.post(
        "/knowledge/ingest", files={"files": ("ok.md", b"# Ok\n\nThe canteen opens at noon.")}
    )
    assert response.status_code == 201
    return client


def test_hostile_files_get_a_reason_and_the_server_keeps_serving(client: TestClient) -> None:
    cases = [
        ("invoice.docx", zip_bomb_docx(), "unsafe_document", "decompression bomb"),
        ("feed.xml", BILLION_LAUGHS, "unsafe_document", "entities"),
        ("config.yaml", YAML_BOMB, "unsafe_document", "alias"),
        ("cut.pdf", make_pdf()[:1500], "extraction_failed", "not a readable PDF"),
        ("locked.pdf", make_pdf(encrypt="pw"), "protected_document", "password"),
    ]
    before = snapshot(client)
    for filename, data, code, says in cases:
        response = client.post("/knowledge/ingest", files={"files": (filename, data)})
        assert response.status_code == 422, (filename, response.text)
        body = response.json()
        assert body["error"] == code and says in body["message"], body
        assert filename in body["message"]
    response = client.post(
        "/knowledge/ingest", files={"files": ("js.pdf", make_pdf(javascript=True))}
    )
    assert response.status_code == 201
    assert any("JavaScript" in w for w in response.json()["files"][0]["document"]["warnings"])
    assert snapshot(client) == (before[0] + 1, before[1] + response.json()["files"][0]["chunks"])
    hits = client.post("/knowledge/query", json={"query": "when does the canteen open"}).json()
    assert "noon" in hits["chunks"][0]["text"]


def test_random_bytes_with_every_extension_are_refused(client: TestClient) -> None:
    before = snapshot(client)
    noise = os.urandom(4096)
    files = [("files", (f"noise.{ext}", noise)) for ext in EXTENSIONS]
    response = client.post("/knowledge/ingest", files=files)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["indexed"] == 0 and body["failed"] == len(EXTENSIONS)
    for result in body["files"]:
        assert result["status"] == "failed" and result["message"], result
        assert result["error"] in ("unsupported_type", "extraction_failed"), result
    assert snapshot(client) == before


@pytest.fixture
def live_server(
    tmp_path: os.PathLike[str], real_embedder: Embedder
) -> Iterator[tuple[str, int, str]]:
    settings = make_settings(tmp_path / "live", max_upload_bytes=1024 * 1024)  # type: ignore[operator]
    lore = Lore(settings, embedder=real_embedder)
    key, _ = Authenticator(lore.catalog, 600).create_key(settings.tenant, "uploads")
    url, server = serve_in_thread(create_app(settings, lore=lore))
    port = int(url.rsplit(":", 1)[1])
    yield "127.0.0.1", port, key
    server.should_exit = True
    lore.close()


def test_a_2gb_declared_upload_is_refused_before_the_body(
    live_server: tuple[str, int, str],
) -> None:
    host, port, key = live_server
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(
            b"POST /knowledge/ingest HTTP/1.1\r\nHost: x\r\n"
            + f"Authorization: Bearer {key}\r\n".encode()
            + b"Content-Type: multipart/form-data; boundary=b\r\n"
            b"Content-Length: 2147483648\r\n\r\n--b\r\n"
        )
        reply = conn.recv(4096).decode()
    assert reply.startswith("HTTP/1.1 413"), reply
    assert "too_large" in reply
    with socket.create_connection((host, port), timeout=10) as conn:  # still serving
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert conn.recv(4096).startswith(b"HTTP/1.1 200")


# the sandbox ----------------------------------------------------------------------------------


def hang(request: ExtractRequest) -> Extracted:
    time.sleep(60)
    raise AssertionError("not reached")


def hog(request: ExtractRequest) -> Extracted:
    blocks = [bytearray(64 * 1024 * 1024) for _ in range(64)]  # 4 GiB
    return Extracted("", str(len(blocks)), "hog")


def crash(request: ExtractRequest) -> Extracted:
    os._exit(3)


def test_sandbox_kills_an_extraction_past_its_time_limit() -> None:
    sandbox = Sandbox(timeout_s=1.0, target=hang)
    started = time.monotonic()
    with pytest.raises(ExtractionTimeoutError, match="longer than 1 s"):
        sandbox.extract(ExtractRequest(b"x", "text", filename="slow.txt"))
    assert time.monotonic() - started < 10


def test_sandbox_memory_limit_and_crashes_become_errors() -> None:
    with pytest.raises(UnsafeDocumentError, match="more than 512 MiB"):
        Sandbox(memory_mb=512, target=hog).extract(ExtractRequest(b"x", "text", filename="h.txt"))
    with pytest.raises(ExtractionError, match="crashed"):
        Sandbox(target=crash).extract(ExtractRequest(b"x", "text", filename="c.txt"))


def test_sandbox_returns_what_the_extractor_returns() -> None:
    result = Sandbox().extract(ExtractRequest(b"# Title\n\nbody", "markdown", filename="a.md"))
    assert result.title == "Title" and "body" in result.markdown
