"""Finding and managing what lore holds through the HTTP API (real model, engine and catalog):
the list of jobs, a document whole (Markdown and chunks), filters on the document list,
deleting by filter, and listing and deleting skills; each scoped to the key's tenant."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from retrieval import Catalog, Document, DocumentQuery, utcnow
from tests.conftest import Page, Site, wait_for_job
from tests.test_agent_api import SKILL
from tests.test_auth import keyed, make_key
from tests.test_e2e_api import INSTALL, PRICING, SECURITY

pytestmark = pytest.mark.slow


@pytest.fixture
def docs_site(site: Site) -> Site:
    site.pages["/docs/pricing"] = Page(PRICING)
    site.pages["/docs/install"] = Page(INSTALL)
    site.pages["/blog/security"] = Page(SECURITY)
    return site


def index(client: TestClient, url: str) -> str:
    response = client.post("/knowledge/index-link", json={"url": url, "strategy": "single"})
    assert response.status_code == 202, response.text
    job_id: str = response.json()["jobId"]
    assert wait_for_job(client, job_id)["status"] == "completed"
    return job_id


def upload(client: TestClient, name: str, text: str) -> str:
    response = client.post(
        "/knowledge/ingest", files=[("files", (name, text.encode(), "text/markdown"))]
    )
    assert response.status_code == 201, response.text
    document_id: str = response.json()["files"][0]["document"]["id"]
    return document_id


def test_jobs_are_listed_newest_first_filtered_and_per_tenant(
    make_client: Callable[..., TestClient], docs_site: Site
) -> None:
    client = make_client()
    first = index(client, docs_site.url("/docs/pricing"))
    second = index(client, docs_site.url("/docs/install"))
    listed = client.get("/knowledge/jobs").json()
    assert [j["id"] for j in listed["jobs"]] == [second, first] and listed["total"] == 2
    assert listed["jobs"][0]["request"]["url"] == docs_site.url("/docs/install")
    page = client.get("/knowledge/jobs", params={"limit": 1, "offset": 1}).json()
    assert [j["id"] for j in page["jobs"]] == [first] and page["total"] == 2
    done = client.get("/knowledge/jobs", params={"status": ["completed", "failed"]}).json()
    assert done["total"] == 2
    assert client.get("/knowledge/jobs", params={"status": "running"}).json()["total"] == 0
    assert client.get("/knowledge/jobs", params={"kind": "spa-capture"}).json()["total"] == 0

    other = keyed(client, make_key(client, "other", []))
    assert client.get("/knowledge/jobs", headers=other).json() == {"jobs": [], "total": 0}

    wrong = client.get("/knowledge/jobs", params={"status": "finished"})
    assert wrong.status_code == 422 and "status" in wrong.json()["message"], wrong.text


def test_a_document_reads_whole_with_its_chunks_in_order(
    make_client: Callable[..., TestClient], docs_site: Site
) -> None:
    client = make_client()
    index(client, docs_site.url("/docs/install"))
    (listed,) = client.get("/knowledge/documents").json()["documents"]
    detail = client.get(f"/knowledge/documents/{listed['id']}").json()
    assert detail["document"] == listed
    markdown = detail["markdown"]
    assert "# Installing the command-line tool" in markdown
    assert "## Install with pip" in markdown and "pip install acme-cli" in markdown
    assert markdown.index("## Install with pip") < markdown.index("## Upgrading")
    chunks = detail["chunks"]
    assert detail["chunksTotal"] == len(chunks) == listed["chunkCount"] >= 2
    assert [c["position"] for c in chunks] == sorted(c["position"] for c in chunks)
    assert any(c["headingPath"][-1:] == ["Upgrading"] for c in chunks), chunks
    assert all(c["phase"] == "static" and c["supersededBy"] is None for c in chunks)

    missing = client.get("/knowledge/documents/no-such-document")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    other = keyed(client, make_key(client, "other", []))
    assert client.get(f"/knowledge/documents/{listed['id']}", headers=other).status_code == 404


def test_the_document_list_filters_and_deleting_by_filter(
    make_client: Callable[..., TestClient], docs_site: Site
) -> None:
    client = make_client()
    for path in ("/docs/pricing", "/docs/install", "/blog/security"):
        index(client, docs_site.url(path))
    notes = upload(client, "release-notes.md", "# Release notes\n\nVersion 2 adds dark mode.\n")

    def urls(**params: str) -> set[str]:
        body = client.get("/knowledge/documents", params=params).json()
        assert body["total"] == len(body["documents"])
        return {d["url"] for d in body["documents"]}

    base = docs_site.url("")
    assert urls(urlPrefix=f"{base}/docs/") == {f"{base}/docs/pricing", f"{base}/docs/install"}
    crawled = {f"{base}{p}" for p in ("/docs/pricing", "/docs/install", "/blog/security")}
    assert urls(domain="127.0.0.1") == crawled
    assert urls(domain="0.0.1") == set()  # a host's tail is not a domain
    assert urls(source="upload") == {"upload://release-notes.md"}
    assert urls(type="markdown") == {"upload://release-notes.md"}
    assert urls(title="PRICING") == {f"{base}/docs/pricing"}
    assert urls(urlPrefix=f"{base}/docs/", title="install") == {f"{base}/docs/install"}
    assert client.get("/knowledge/documents", params={"source": "email"}).status_code == 422

    refused = client.delete("/knowledge/documents")
    assert refused.status_code == 422 and "urlPrefix" in refused.json()["message"], refused.text
    other = keyed(client, make_key(client, "other", []))
    gone = client.delete("/knowledge/documents", params={"urlPrefix": base}, headers=other)
    assert gone.json() == {"deleted": 0}  # another tenant's documents are out of reach

    gone = client.delete("/knowledge/documents", params={"urlPrefix": f"{base}/docs/"})
    assert gone.status_code == 200 and gone.json() == {"deleted": 2}, gone.text
    assert urls() == {f"{base}/blog/security", "upload://release-notes.md"}
    left = client.get("/knowledge/resolve", params={"url": f"{base}/docs/pricing"}).json()
    assert all("/docs/" not in c["url"] for c in left["chunks"]), left
    assert client.get(f"/knowledge/documents/{notes}").json()["markdown"].startswith("# Release")


def test_skills_are_listed_per_domain_and_deleted(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    kept = client.post("/skills", json=SKILL).json()
    elsewhere = {**SKILL, "url": "https://shop.example.test/cart", "goal": "Empty the cart"}
    dropped = client.post("/skills", json=elsewhere).json()

    listed = client.get("/skills").json()
    assert {s["id"] for s in listed["skills"]} == {kept["id"], dropped["id"]}
    assert listed["total"] == 2 and listed["skills"][0]["id"] == dropped["id"]  # newest use first
    shop = client.get("/skills", params={"domain": "shop.example.test"}).json()
    assert [s["id"] for s in shop["skills"]] == [dropped["id"]] and "hint" in shop["skills"][0]

    other = keyed(client, make_key(client, "other", []))
    assert client.delete(f"/skills/{dropped['id']}", headers=other).status_code == 404
    assert client.delete(f"/skills/{dropped['id']}").status_code == 204
    assert client.delete(f"/skills/{dropped['id']}").status_code == 404
    assert [s["id"] for s in client.get("/skills").json()["skills"]] == [kept["id"]]
    search = client.get("/skills/search", params={"url": elsewhere["url"], "goal": "Empty cart"})
    assert search.json()["skills"] == []
    assert client.delete("/skills/not-a-uuid").status_code == 422


# The PostgreSQL database is shared (other tests, other runs): every row here is this test's own.
def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def filled(catalog: Catalog) -> Iterator[tuple[Catalog, str, list[str]]]:
    now, tenant = utcnow(), unique("t")
    ids = [unique(f"d{n}") for n in range(5)]
    urls = (
        "https://a.test/x",
        "https://docs.a.test/guide/y",
        "https://nota.test/z",
        "http://A.TEST:8080/100%_sure",
        "upload://notes.md",
    )
    for n, url in enumerate(urls):
        doc = Document(ids[n], tenant, url, f"Title {n}", "html", "link", "h", 1, 1, now, now)
        catalog.put_document(doc)
    other = Document(
        unique("o"), unique("other"), "https://a.test/o", "", "html", "link", "h", 1, 1, now, now
    )
    catalog.put_document(other)
    yield catalog, tenant, ids


def test_catalog_document_filters_on_every_database(
    filled: tuple[Catalog, str, list[str]],
) -> None:
    catalog, tenant, made = filled

    def ids(**where: str) -> list[int]:
        query = DocumentQuery(**where)
        found = sorted(d.id for d in catalog.list_documents(tenant, 100, 0, query))
        assert catalog.count_documents(tenant, query) == len(found)
        assert sorted(catalog.document_ids(tenant, query)) == found
        return sorted(made.index(i) for i in found)

    assert ids(domain="a.test") == [0, 1, 3]  # subdomains and ports; not nota.test
    assert ids(domain="docs.a.test") == [1]
    assert ids(url_prefix="http://A.TEST:8080/100%") == [3]  # % and _ are literal
    assert ids(url_prefix="https://a.test/%") == []
    assert ids(title="title 4") == [4]
    assert ids(title="_") == []
    assert ids() == [0, 1, 2, 3, 4]


def test_catalog_keeps_a_documents_text_until_it_is_deleted(catalog: Catalog) -> None:
    now, tenant, doc_id = utcnow(), unique("t"), unique("d")
    doc = Document(doc_id, tenant, "https://a.test/", "", "html", "link", "h", 1, 1, now, now)
    catalog.put_document(doc)
    assert catalog.document_text(tenant, doc_id) is None
    catalog.put_document_text(doc_id, "# Title\n\nü" * 1000)
    catalog.put_document_text(doc_id, "# Title\n\nnewer")
    assert catalog.document_text(tenant, doc_id) == "# Title\n\nnewer"
    catalog.delete_document(tenant, doc_id)
    catalog.put_document(doc)
    assert catalog.document_text(tenant, doc_id) is None


def test_jobs_list_in_the_catalog(catalog: Catalog) -> None:
    tenant = unique("t")
    made = [catalog.create_job(tenant, "index-link", {"n": n}) for n in range(3)]
    catalog.create_job(unique("other"), "index-link", {})
    catalog.update_job(made[1].id, status="completed")
    jobs, total = catalog.list_jobs(tenant)
    assert total == 3 and {j.id for j in jobs} == {j.id for j in made}
    assert [j.created_at for j in jobs] == sorted((j.created_at for j in jobs), reverse=True)
    done, total = catalog.list_jobs(tenant, statuses=("completed",))
    assert [j.id for j in done] == [made[1].id] and total == 1
    assert catalog.list_jobs(tenant, kinds=("spa-capture",)) == ([], 0)
    assert timedelta(0) <= utcnow() - jobs[0].created_at < timedelta(minutes=5)


def test_a_url_turns_into_markdown_without_being_stored(
    make_client: Callable[..., TestClient], docs_site: Site
) -> None:
    client = make_client()
    url = docs_site.url("/docs/install")
    converted = client.post("/knowledge/convert", json={"url": url})
    assert converted.status_code == 200, converted.text
    body = converted.json()
    assert body["url"] == url and body["statusCode"] == 200 and body["title"]
    assert body["markdown"].startswith("# Installing the command-line tool")
    assert "```" in body["markdown"] and "pip install acme-cli" in body["markdown"]
    assert "Sign in to your account" not in body["markdown"]  # the page's chrome is left out
    assert client.get("/knowledge/documents").json()["total"] == 0  # stored nowhere
    assert client.get("/knowledge/jobs").json()["total"] == 0

    missing = client.post("/knowledge/convert", json={"url": docs_site.url("/nope")})
    assert missing.status_code == 502 and "404" in missing.json()["message"], missing.text
    bad = client.post("/knowledge/convert", json={"url": "ftp://example.test/x"})
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_url", bad.text
    limited = keyed(client, make_key(client, "other", ["other.test"]))
    refused = client.post("/knowledge/convert", json={"url": url}, headers=limited)
    assert refused.status_code == 403, refused.text

    guarded = make_client(fetch={"allow_private_addresses": False, "timeout_s": 2.0})
    blocked = guarded.post("/knowledge/convert", json={"url": url})
    assert blocked.status_code == 422 and blocked.json()["error"] == "blocked_address", blocked.text
