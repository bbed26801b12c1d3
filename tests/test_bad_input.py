"""Bad input gets a clear 4xx (or a failed job that says why) and the store is unchanged."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Page, Site, wait_for_job

pytestmark = pytest.mark.slow

GOOD = b"# Handbook\n\nExpense reports are due on the fifth working day of each month.\n"


def snapshot(client: TestClient) -> tuple[int, int]:
    health = client.get("/healthz").json()
    return health["documents"], health["chunks"]


@pytest.fixture
def seeded(make_client: Callable[..., TestClient]) -> TestClient:
    client = make_client(max_upload_bytes=64 * 1024)
    response = client.post("/knowledge/ingest", files={"files": ("handbook.md", GOOD)})
    assert response.status_code == 201
    return client


@pytest.mark.parametrize(
    ("filename", "data", "status", "code", "says"),
    [
        ("empty.md", b"", 422, "empty_document", "empty"),
        ("blank.txt", b"  \n\n\t ", 422, "empty_document", "empty"),
        ("garbage.html", os.urandom(2048) + b"\x00\x00", 415, "unsupported_type", "binary"),
        ("photo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, 415, "unsupported_type", "binary"),
        ("report.xyz", b"plain words in an unknown container", 415, "unsupported_type", ".xyz"),
        (
            "app-shell.html",
            b"<html><head><script>boot()</script></head><body><div id='root'>"
            b"</div><script src='/app.js'></script></body></html>",
            422,
            "empty_document",
            "no text",
        ),
        ("big.txt", b"word " * 20000, 413, "too_large", "limit"),
    ],
)
def test_bad_upload_is_refused_and_changes_nothing(
    seeded: TestClient, filename: str, data: bytes, status: int, code: str, says: str
) -> None:
    before = snapshot(seeded)
    response = seeded.post("/knowledge/ingest", files={"files": (filename, data)})
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == code
    assert says in body["message"] and filename in body["message"]
    assert snapshot(seeded) == before


def test_a_batch_reports_each_file_and_stores_only_the_good_ones(seeded: TestClient) -> None:
    documents, chunks = snapshot(seeded)
    response = seeded.post(
        "/knowledge/ingest",
        files=[
            ("files", ("ok.md", b"# Fine\n\nThis one is fine on its own.")),
            ("files", ("bad.html", b"\x00\x01\x02\x03" * 100)),
        ],
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["indexed"], body["failed"]) == (1, 1)
    ok, bad = body["files"]
    assert ok["status"] == "indexed" and ok["document"]["docType"] == "markdown"
    assert bad["status"] == "failed" and bad["error"] == "unsupported_type"
    assert "bad.html" in bad["message"] and bad["document"] is None
    assert snapshot(seeded) == (documents + 1, chunks + ok["chunks"])


def test_a_batch_where_every_file_fails_is_a_422_that_lists_them(seeded: TestClient) -> None:
    before = snapshot(seeded)
    response = seeded.post(
        "/knowledge/ingest",
        files=[
            ("files", ("a.json", b"{not json")),
            ("files", ("b.txt", b"")),
        ],
    )
    assert response.status_code == 422
    body = response.json()
    assert [f["error"] for f in body["files"]] == ["extraction_failed", "empty_document"]
    assert body["indexed"] == 0 and body["failed"] == 2
    assert body["error"] == "ingest_failed" and "none of the 2 files" in body["message"]
    assert snapshot(seeded) == before


def test_malformed_requests(seeded: TestClient) -> None:
    assert seeded.post("/knowledge/ingest", json={"files": []}).status_code == 415
    response = seeded.post(
        "/knowledge/ingest", data={"title": "x"}, files={"other": ("a.md", b"# A\n\ntext")}
    )
    assert response.status_code == 422 and "files" in response.json()["message"]
    response = seeded.get("/knowledge/resolve", params={"url": "not a url", "query": "x"})
    assert response.status_code == 422 and "absolute URL" in response.json()["message"]
    response = seeded.get("/knowledge/resolve", params={"query": "x"})
    assert response.status_code == 422 and "url" in response.json()["message"]
    response = seeded.get("/knowledge/resolve", params={"url": "http://a.test/", "k": 0})
    assert response.status_code == 422
    response = seeded.post("/knowledge/query", json={"query": ""})
    assert response.status_code == 422
    response = seeded.post("/knowledge/index-link", json={"url": "ftp://example.com/x"})
    assert response.status_code == 422 and "http" in response.json()["message"]
    response = seeded.post(
        "/knowledge/index-link", json={"url": "https://a.test", "strategy": "everything"}
    )
    assert response.status_code == 422 and "strategy" in response.json()["message"]
    assert seeded.get("/knowledge/jobs/nope").status_code == 404
    assert seeded.delete("/knowledge/documents/nope").status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [  # each once a 500 under schema fuzzing (an integer SQLite cannot hold, a UUID parse)
        ("GET", "/knowledge/documents?offset=9223372036854775808", None, "offset"),
        ("GET", "/knowledge/jobs/any/urls?offset=9223372036854775808", None, "offset"),
        ("POST", "/skills/0/outcome", {"success": True}, "skill_id"),
        ("POST", "/knowledge/query", {"query": "x", "includePublic": 0}, "includePublic"),
        ("POST", "/skills/00000000-0000-0000-0000-000000000000/outcome", {"success": 1}, "success"),
    ],
)
def test_out_of_range_and_loosely_typed_parameters_are_422_naming_the_field(
    seeded: TestClient, method: str, path: str, body: object, field: str
) -> None:
    response = seeded.request(method, path, json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == "invalid_request"
    assert field in response.json()["message"], response.json()


@pytest.mark.parametrize(
    ("path", "page", "reason"),
    [
        ("/missing", None, "http_404"),
        ("/slow", Page(b"<html><body><p>late</p></body></html>", delay_s=5.0), "timeout"),
        ("/server-error", Page(b"oops", status=500), "http_500"),
        (
            "/image",
            Page(b"\x89PNG\r\n\x1a\n" + b"\x00" * 300, content_type="image/png"),
            "unsupported_type",
        ),
        ("/empty", Page(b""), "empty_document"),
    ],
)
def test_failed_link_says_why_and_changes_nothing(
    seeded: TestClient, site: Site, path: str, page: Page | None, reason: str
) -> None:
    if page is not None:
        site.pages[path] = page
    before = snapshot(seeded)
    response = seeded.post("/knowledge/index-link", json={"url": site.url(path)})
    assert response.status_code == 202
    job = wait_for_job(seeded, response.json()["jobId"])
    assert job["status"] == "failed"
    assert str(job["error"]).startswith(reason), job
    assert job["counts"]["failed"] == 1
    assert snapshot(seeded) == before


def test_private_addresses_are_refused_unless_allowed(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    site.pages["/internal"] = Page(b"<html><body><p>secret admin page</p></body></html>")
    client = make_client(fetch={"allow_private_addresses": False})
    response = client.post("/knowledge/index-link", json={"url": site.url("/internal")})
    job = wait_for_job(client, response.json()["jobId"])
    assert job["status"] == "failed"
    assert "blocked_address" in str(job["error"]) and "ALLOW_PRIVATE" in str(job["error"])
    assert site.requests == []


def test_unknown_routes_and_methods_answer_in_lores_shape(seeded: TestClient) -> None:
    missing = seeded.get("/knowledge/nowhere")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    wrong = seeded.put("/healthz")
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"
    assert "detail" not in missing.json() and "detail" not in wrong.json()


def test_every_request_body_has_an_example_that_lore_accepts(seeded: TestClient) -> None:
    from api import schemas

    document = seeded.get("/openapi.json").json()
    checked = 0
    for path, operations in document["paths"].items():
        for operation in operations.values():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            name = content["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
            examples = document["components"]["schemas"][name].get("examples")
            assert examples, f"{path}: {name} has no example"
            for example in examples:
                getattr(schemas, name).model_validate(example)  # raises if lore would refuse it
            checked += 1
    assert checked >= 9


def test_the_openapi_document_declares_the_key_and_lores_errors(seeded: TestClient) -> None:
    document = seeded.get("/openapi.json").json()
    assert document["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for path, operations in document["paths"].items():
        for operation in operations.values():
            assert ("security" in operation) == (path not in ("/healthz", "/metrics")), path
            for status in ("401", "404", "422", "429"):
                schema = operation["responses"][status]["content"]["application/json"]["schema"]
                assert schema["$ref"].rsplit("/", 1)[1] in ("ErrorBody", "IngestFailed"), path
