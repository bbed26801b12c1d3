"""End to end through the HTTP API with the real model and engine, against a local website."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.conftest import Page, Site, wait_for_job

pytestmark = pytest.mark.slow

NAV = """<header><nav class="site-nav"><a href="/">Acme Docs</a> <a href="/pricing">Pricing</a>
<a href="/install">Install</a> <a href="/security">Security</a>
<a href="/login">Sign in to your account</a></nav></header>"""
FOOTER = """<footer><p>Copyright 2026 Acme Corporation. All rights reserved.</p>
<p><a href="/privacy">Privacy policy</a> | <a href="/terms">Terms of service</a> |
<a href="/careers">We are hiring engineers</a></p></footer>"""


def page(title: str, article: str) -> bytes:
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title} - Acme Docs</title><link rel="stylesheet" href="/style.css">
<script>window.analytics = {{track: function() {{}}}};</script></head>
<body>{NAV}<div class="layout"><aside class="sidebar"><ul><li><a href="/pricing">Pricing</a></li>
<li><a href="/install">Install</a></li><li><a href="/security">Security</a></li></ul></aside>
<main><article>{article}</article></main></div>{FOOTER}</body></html>""".encode()


PRICING = page(
    "Pricing",
    """<h1>Pricing plans</h1>
<p>Acme offers three subscription plans for teams of every size. Every plan includes unlimited
projects, automatic backups and email support during business hours.</p>
<h2>Plan comparison</h2>
<table><caption>Monthly prices in euros</caption>
<thead><tr><th>Plan</th><th>Monthly price</th><th>Seats included</th></tr></thead>
<tbody><tr><td>Starter</td><td>9</td><td>3</td></tr>
<tr><td>Team</td><td>49</td><td>25</td></tr>
<tr><td>Enterprise</td><td>399</td><td>unlimited</td></tr></tbody></table>
<h2>Billing</h2><p>Invoices are issued on the first day of each month. You can pay by credit
card or by bank transfer; annual billing gives two months free.</p>""",
)

INSTALL = page(
    "Installing the CLI",
    """<h1>Installing the command-line tool</h1>
<p>The acme command-line tool manages deployments from your terminal. It runs on Linux, macOS
and Windows and needs Python 3.10 or newer.</p>
<h2>Install with pip</h2><p>Install the package from PyPI, then log in once with your
personal access token:</p>
<pre><code>pip install acme-cli
acme login --token "$ACME_TOKEN"
acme deploy --env staging</code></pre>
<h2>Upgrading</h2><p>Run the install command again with the upgrade flag to get the newest
release. Release notes are published on the changelog page.</p>""",
)

SECURITY = page(
    "Security",
    """<h1>Security and access tokens</h1>
<p>Personal access tokens authenticate the command-line tool and the REST API. Treat them like
passwords and never commit them to a repository.</p>
<h2>Token lifetime</h2><p>Access tokens expire ninety days after they are created. Rotate a
token from the account settings page before it expires to avoid failed deployments.</p>
<h2>Two-factor authentication</h2><p>Organisation owners can require two-factor authentication
for every member. Members without it are blocked until they enrol an authenticator app.</p>""",
)

BOILERPLATE = (
    "Sign in to your account",
    "All rights reserved",
    "We are hiring",
    "Privacy policy",
    "window.analytics",
)


@pytest.fixture
def docs_site(site: Site) -> Site:
    site.pages["/pricing"] = Page(PRICING)
    site.pages["/install"] = Page(INSTALL)
    site.pages["/security"] = Page(SECURITY)
    return site


def index(client: TestClient, url: str) -> dict[str, object]:
    response = client.post("/knowledge/index-link", json={"url": url, "strategy": "single"})
    assert response.status_code == 202, response.text
    return wait_for_job(client, response.json()["jobId"])


def resolve(client: TestClient, url: str, query: str, k: int = 5) -> dict[str, object]:
    response = client.get("/knowledge/resolve", params={"url": url, "query": query, "k": k})
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def all_chunks(client: TestClient, site: Site) -> list[dict[str, object]]:
    chunks: list[dict[str, object]] = []
    for path in ("/pricing", "/install", "/security"):
        response = client.get("/knowledge/resolve", params={"url": site.url(path), "k": 100})
        chunks.extend(response.json()["chunks"])
    return chunks


def test_index_resolve_and_restart(make_client: Callable[..., TestClient], docs_site: Site) -> None:
    client = make_client()
    for path in ("/pricing", "/install", "/security"):
        job = index(client, docs_site.url(path))
        assert job["status"] == "completed", job
        counts = job["counts"]
        assert isinstance(counts, dict)
        assert counts["fetched"] == 1 and counts["ingested"] == 1 and counts["chunks"] >= 2

    questions = {
        "How much does the Team plan cost per month?": "/pricing",
        "How do I install the command-line tool with pip?": "/install",
        "When do access tokens expire?": "/security",
        "Can owners require two-factor authentication?": "/security",
    }
    expected_text = {
        "How much does the Team plan cost per month?": "| Team | 49 | 25 |",
        "How do I install the command-line tool with pip?": "pip install acme-cli",
        "When do access tokens expire?": "ninety days",
        "Can owners require two-factor authentication?": "two-factor",
    }
    for question, path in questions.items():
        body = resolve(client, docs_site.url("/"), question)
        assert body["hasOrgKnowledge"] is True
        chunks = body["chunks"]
        assert isinstance(chunks, list) and chunks
        top = chunks[0]
        assert top["url"] == docs_site.url(path), (question, top)
        assert expected_text[question] in top["text"], (question, top["text"])
        assert top["title"] and top["headingPath"] and top["fetchedAt"]
        assert top["phase"] == "static"

    stored = all_chunks(client, docs_site)
    assert len(stored) >= 6
    for chunk in stored:
        for junk in BOILERPLATE:
            assert junk not in chunk["text"], (junk, chunk["text"])

    [table] = [c for c in stored if "| Plan |" in str(c["text"])]
    lines = str(table["text"]).splitlines()
    header = lines.index("| Plan | Monthly price | Seats included |")
    assert lines[header + 1] == "|---|---|---|"
    assert "| Enterprise | 399 | unlimited |" in lines
    assert "Monthly prices in euros" in str(table["text"])  # caption kept as a paragraph
    assert table["headingPath"] == ["Pricing plans", "Plan comparison"]

    [code] = [c for c in stored if "pip install acme-cli" in str(c["text"])]
    assert "```" in str(code["text"])

    docs = client.get("/knowledge/documents").json()
    assert docs["total"] == 3

    # Restart on the same data directory: everything is still there, answers unchanged.
    client = make_client()
    assert client.get("/knowledge/documents").json()["total"] == 3
    assert sorted(c["id"] for c in all_chunks(client, docs_site)) == sorted(c["id"] for c in stored)
    body = resolve(client, docs_site.url("/"), "When do access tokens expire?")
    assert "ninety days" in body["chunks"][0]["text"]

    # Re-indexing an unchanged page embeds nothing and duplicates nothing.
    job = index(client, docs_site.url("/security"))
    assert job["counts"]["embedded"] == 0 and job["counts"]["unchanged"] == 1, job["error"]
    assert job["counts"]["chunks"] >= 2  # the page's chunks, all kept
    assert len(all_chunks(client, docs_site)) == len(stored)


def test_resolve_is_scoped_to_the_page_domain(
    make_client: Callable[..., TestClient], docs_site: Site
) -> None:
    client = make_client()
    index(client, docs_site.url("/security"))
    body = resolve(client, "https://elsewhere.example/", "When do access tokens expire?")
    assert body == {"chunks": [], "hasOrgKnowledge": False}
    # localhost and 127.0.0.1 are different domains too
    other = docs_site.url("/").replace("127.0.0.1", "localhost")
    assert resolve(client, other, "tokens")["chunks"] == []


def test_changed_page_replaces_its_chunks(
    make_client: Callable[..., TestClient], docs_site: Site
) -> None:
    client = make_client()
    index(client, docs_site.url("/security"))
    docs_site.pages["/security"] = Page(
        SECURITY.replace(b"ninety days", b"thirty days").replace(
            b"<h2>Two-factor authentication</h2>", b"<h2>Single sign-on</h2>"
        )
    )
    job = index(client, docs_site.url("/security"))
    assert job["status"] == "completed"
    assert job["counts"]["embedded"] >= 1
    texts = " ".join(str(c["text"]) for c in all_chunks(client, docs_site))
    assert "thirty days" in texts and "ninety days" not in texts


def test_upload_query_and_delete(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    markdown = (
        b"# Runbook\n\n## Restarting the queue\n\nDrain the workers first, then restart the "
        b"broker with `systemctl restart rabbitmq`. Never restart during a deploy.\n\n"
        b"## Disk alerts\n\nWhen the disk is over 90 percent full, rotate the logs in "
        b"/var/log/app and page the on-call engineer.\n"
    )
    notes = b"Office wifi password changes every Monday. Ask the front desk for the new one.\n"
    response = client.post(
        "/knowledge/ingest",
        files=[
            ("files", ("runbook.md", markdown, "text/markdown")),
            ("files", ("notes.txt", notes, "text/plain")),
        ],
    )
    assert response.status_code == 201, response.text
    files = response.json()["files"]
    assert [f["filename"] for f in files] == ["runbook.md", "notes.txt"]
    assert files[0]["document"]["docType"] == "markdown" and files[0]["chunks"] == 2
    assert files[1]["document"]["docType"] == "text"

    hits = client.post(
        "/knowledge/query", json={"query": "what to do when the disk fills up", "k": 3}
    ).json()["chunks"]
    assert hits[0]["headingPath"] == ["Runbook", "Disk alerts"]
    assert hits[0]["url"] == "upload://runbook.md"

    filtered = client.post("/knowledge/query", json={"query": "disk", "docTypes": ["text"]})
    assert all(c["docType"] == "text" for c in filtered.json()["chunks"])

    doc_id = files[0]["document"]["id"]
    assert client.delete(f"/knowledge/documents/{doc_id}").status_code == 204
    assert client.delete(f"/knowledge/documents/{doc_id}").status_code == 404
    hits = client.post("/knowledge/query", json={"query": "disk alerts rotate logs"}).json()
    assert all(c["documentId"] != doc_id for c in hits["chunks"])
    assert client.get("/knowledge/documents").json()["total"] == 1


def test_health_and_openapi(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["embeddingModel"] == "all-MiniLM-L6-v2-onnx-int8"
    jobs = {"mode": "in-process", "alive": True, "restarts": 0, "pid": os.getpid()}
    assert health["jobs"] == jobs
    spec = client.get("/openapi.json").json()
    for path in (
        "/knowledge/index-link",
        "/knowledge/ingest",
        "/knowledge/resolve",
        "/knowledge/query",
        "/knowledge/documents",
        "/knowledge/jobs/{job_id}",
    ):
        assert path in spec["paths"]


def test_catalog_in_postgresql(make_client: Callable[..., TestClient]) -> None:
    """The server-stack catalog: documents and jobs in PostgreSQL, vectors in the engine."""
    from tests.conftest import postgres_url

    url = postgres_url()
    if url is None:
        pytest.skip("PostgreSQL is not running on 127.0.0.1:5432 (or psycopg is missing)")
    tenant = f"pg-{uuid.uuid4()}"  # the database outlives the test: isolate by tenant
    client = make_client(database_url=url, tenant=tenant)
    response = client.post(
        "/knowledge/ingest",
        files={"files": ("faq.md", b"# FAQ\n\nThe office closes at six on Fridays.\n")},
    )
    assert response.status_code == 201, response.text
    client = make_client(database_url=url, tenant=tenant)  # restart
    assert client.get("/knowledge/documents").json()["total"] == 1
    hits = client.post("/knowledge/query", json={"query": "when does the office close"}).json()
    assert "six on Fridays" in hits["chunks"][0]["text"]


def test_the_api_on_the_qdrant_client_store(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    """The server-store path end to end, skills included (qdrant-client's in-process engine
    stands in for a Qdrant server, which cannot run here)."""
    client = make_client(qdrant={"url": ":memory:"})
    response = client.post(
        "/knowledge/ingest",
        data={"url": "https://intranet.acme.test/handbook"},
        files={"files": ("handbook.md", b"# Handbook\n\nThe office closes at six on Fridays.\n")},
    )
    assert response.status_code == 201, response.text
    body = client.get(
        "/knowledge/resolve",
        params={"url": "https://intranet.acme.test/x", "query": "when does the office close"},
    ).json()
    assert body["hasOrgKnowledge"] and "six on Fridays" in body["chunks"][0]["text"]
    assert client.get("/healthz").json()["chunks"] == 1
    skill = {
        "url": "https://intranet.acme.test/rooms",
        "goal": "Book a meeting room",
        "failedState": {"action": "click(12)", "elementDescription": "Rooms tab"},
        "successfulAction": {"action": "click(30)", "elementDescription": "Book button"},
    }
    assert client.post("/skills", json=skill).status_code == 201
    context = client.post(
        "/agent/context", json={"url": skill["url"], "goal": "book a meeting room"}
    ).json()
    assert context["skills"][0]["hint"].startswith("Last time 'click(12)'")
    # On the server's collection, not in a shard of this instance's data directory.
    assert not (tmp_path / "data" / "skills").exists()


def test_skills_on_qdrant_need_a_server_and_their_own_collection(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from tests.conftest import make_settings

    assert make_settings(tmp_path).skills_backend == "embedded"
    assert make_settings(tmp_path, qdrant={"url": ":memory:"}).skills_backend == "qdrant"
    embedded = make_settings(tmp_path, qdrant={"url": ":memory:"}, skills={"backend": "embedded"})
    assert embedded.skills_backend == "embedded"
    with pytest.raises(ValidationError, match="needs LORE_QDRANT__URL"):
        make_settings(tmp_path, skills={"backend": "qdrant"})
    with pytest.raises(ValidationError, match="cannot share the Qdrant collection"):
        make_settings(tmp_path, qdrant={"url": ":memory:"}, skills={"collection": "lore_chunks"})


def test_an_unreachable_qdrant_server_is_a_clear_error(tmp_path: object) -> None:
    from api import Lore
    from ingest import HashEmbedder
    from retrieval import StoreUnavailableError
    from tests.conftest import make_settings

    settings = make_settings(tmp_path / "d", qdrant={"url": "http://127.0.0.1:9", "timeout_s": 2})  # type: ignore[operator]
    with pytest.raises(StoreUnavailableError, match="cannot reach the Qdrant server"):
        Lore(settings, embedder=HashEmbedder())
