"""Documents through the HTTP API: uploads of several formats at once, a linked PDF, and the
agent finding a table cell and a JSON value by asking."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Page, Site, wait_for_job
from tests.test_documents import make_docx, make_pdf, make_xlsx

pytestmark = pytest.mark.slow


def test_mixed_batch_upload_then_query_finds_cells_and_key_paths(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    spec = {"servers": [{"url": "https://billing.example.com/v2"}], "info": {"title": "Billing"}}
    response = client.post(
        "/knowledge/ingest",
        files=[
            ("files", ("manual.docx", make_docx())),
            ("files", ("prices.xlsx", make_xlsx())),
            ("files", ("billing.json", json.dumps(spec).encode())),
            ("files", ("policy.pdf", make_pdf())),
        ],
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["indexed"] == 4 and body["failed"] == 0
    types = {f["filename"]: f["document"]["docType"] for f in body["files"]}
    assert types == {
        "manual.docx": "docx",
        "prices.xlsx": "xlsx",
        "billing.json": "json",
        "policy.pdf": "pdf",
    }

    def top(question: str, doc_type: str) -> dict[str, object]:
        hits = client.post(
            "/knowledge/query", json={"query": question, "docTypes": [doc_type], "k": 1}
        ).json()["chunks"]
        return hits[0]  # type: ignore[no-any-return]

    ports = top("which port does the api service use", "docx")
    assert "| api | 8741 | TCP |" in str(ports["text"])
    assert ports["headingPath"] == ["Operations manual", "Installation", "Ports"]
    server = top("billing server url", "json")
    assert "servers[0].url: https://billing.example.com/v2" in str(server["text"])
    shipping = top("shipping fee to the US", "pdf")
    assert "| US | 6 | 20 EUR |" in str(shipping["text"])
    listed = client.get("/knowledge/documents").json()["documents"]
    assert {d["extractor"] for d in listed} == {"python-docx", "openpyxl", "json", "pdfplumber"}


def test_two_versions_of_one_file_in_one_upload_leave_only_the_second(
    make_client: Callable[..., TestClient],
) -> None:
    # Uploads embed documents together; a document's second version must still replace the
    # first, as two uploads one after the other would.
    client = make_client()
    first = b"# Opening hours\n\nThe shop opens at nine on weekdays."
    second = b"# Returns\n\nRefunds are paid within fourteen days."
    response = client.post(
        "/knowledge/ingest",
        files=[("files", ("notes.md", first)), ("files", ("notes.md", second))],
    )
    assert response.status_code == 201, response.text
    assert [f["removed"] for f in response.json()["files"]] == [0, 1]
    [document] = client.get("/knowledge/documents").json()["documents"]
    assert document["chunkCount"] == 1
    hits = client.post("/knowledge/query", json={"query": "when does the shop open", "k": 5})
    assert [c["text"] for c in hits.json()["chunks"]] == ["Refunds are paid within fourteen days."]


def test_index_link_to_a_pdf(make_client: Callable[..., TestClient], site: Site) -> None:
    site.pages["/files/policy.pdf"] = Page(make_pdf(), content_type="application/pdf")
    client = make_client()
    response = client.post("/knowledge/index-link", json={"url": site.url("/files/policy.pdf")})
    job = wait_for_job(client, response.json()["jobId"])
    assert job["status"] == "completed", job
    hits = client.get(
        "/knowledge/resolve",
        params={"url": site.url("/"), "query": "how long do orders take to ship", "k": 1},
    ).json()["chunks"]
    assert "Rotterdam" in hits[0]["text"] and hits[0]["docType"] == "pdf"
