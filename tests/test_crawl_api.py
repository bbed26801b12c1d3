"""Crawl jobs through the HTTP API with the real model and engine: incremental re-crawls,
pages that disappear, a crawl that mostly fails, the per-URL report, cancel and the webhook."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from api.auth import Authenticator
from tests.conftest import Page, Site, wait_for_job

TOPICS = {
    "/": ("Handbook", "Welcome to the handbook of the Acme company."),
    "/leave": ("Leave policy", "Employees get thirty days of paid leave every year."),
    "/expenses": ("Expenses", "Travel expenses are reimbursed within fourteen days."),
    "/security": ("Security", "Laptops must use full-disk encryption at all times."),
}


def page(title: str, text: str, links: tuple[str, ...] = (), version: str = "v1") -> Page:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    body = (
        f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
        f"<p>{text}</p><p>{text} This paragraph explains the details at length.</p>"
        f"</main><nav><ul>{anchors}</ul></nav></body></html>"
    ).encode()
    return Page(body, etag=f'"{title}-{version}"')


def handbook(site: Site) -> None:
    links = tuple(p for p in TOPICS if p != "/")
    for path, (title, text) in TOPICS.items():
        site.pages[path] = page(title, text, links if path == "/" else ("/",))


def crawl(client: TestClient, site: Site, **extra: object) -> dict[str, object]:
    body = {"url": site.url("/"), "strategy": "spider", "maxPages": 20, **extra}
    response = client.post("/knowledge/index-link", json=body)
    assert response.status_code == 202, response.text
    return wait_for_job(client, response.json()["jobId"])


def urls(client: TestClient, job: dict[str, object], **params: object) -> dict[str, dict]:
    response = client.get(f"/knowledge/jobs/{job['id']}/urls", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    return {u["url"]: u for u in response.json()["urls"]}


def top_text(client: TestClient, site: Site, query: str) -> str:
    response = client.get("/knowledge/resolve", params={"url": site.url("/"), "query": query})
    chunks = response.json()["chunks"]
    return str(chunks[0]["text"]) if chunks else ""


def test_incremental_recrawl_embeds_only_what_changed(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    handbook(site)
    first = crawl(client, site)
    assert first["status"] == "completed", first
    counts = first["counts"]
    assert counts["ingested"] == 4 and counts["embedded"] >= 4, urls(client, first)

    # Nothing changed: every page answers 304 to its ETag; nothing is extracted or embedded.
    site.not_modified.clear()
    second = crawl(client, site)
    assert second["counts"]["unchanged"] == 4
    assert second["counts"]["embedded"] == 0 and second["counts"]["ingested"] == 0
    assert sorted(site.not_modified) == sorted(TOPICS)
    assert {u["reason"] for u in urls(client, second).values()} == {"not_modified"}

    # One page changes, one disappears, one is new.
    links = ("/leave", "/expenses", "/travel")
    site.pages["/"] = page(*TOPICS["/"], links=links, version="v2")
    site.pages["/leave"] = page(
        "Leave policy", "Employees get thirty-five days of paid leave every year.", ("/",), "v2"
    )
    del site.pages["/security"]
    site.pages["/travel"] = page("Travel", "Book trains for trips under five hours.", ("/",))
    third = crawl(client, site)
    assert third["status"] == "completed", third
    report = urls(client, third)
    assert report[site.url("/leave")]["state"] == "ingested"
    assert report[site.url("/travel")]["state"] == "ingested"
    assert report[site.url("/expenses")]["state"] == "unchanged"
    assert report[site.url("/security")]["state"] == "removed"
    assert third["counts"]["removed"] == 1
    # Only the changed chunks were embedded: fewer than all the pages' chunks.
    assert 0 < third["counts"]["embedded"] < third["counts"]["chunks"]
    assert "thirty-five days" in top_text(client, site, "How many days of paid leave?")
    assert "encryption" not in top_text(client, site, "full-disk encryption of laptops")
    documents = client.get("/knowledge/documents").json()
    assert sorted(d["url"] for d in documents["documents"]) == sorted(
        site.url(p) for p in ("/", "/leave", "/expenses", "/travel")
    )


def test_a_crawl_that_mostly_fails_removes_nothing(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client(crawl={"retries": 0})
    handbook(site)
    assert crawl(client, site)["counts"]["ingested"] == 4
    for path in ("/leave", "/expenses", "/security"):
        site.pages[path] = Page(b"down for maintenance", status=503)
    site.pages["/"] = page(*TOPICS["/"], links=tuple(p for p in TOPICS if p != "/"), version="v2")
    job = crawl(client, site)
    assert job["counts"]["failed"] == 3
    assert job["counts"]["removed"] == 0 and "nothing removed" in str(job["message"])
    assert client.get("/knowledge/documents").json()["total"] == 4
    assert "thirty days" in top_text(client, site, "How many days of paid leave?")


def test_job_report_validation_and_cancel(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client(crawl={"per_host_delay_s": 0.2})
    for n in range(30):
        site.pages[f"/p{n}"] = Page(
            f"<html><body><h1>Page {n}</h1><p>Topic number {n} explained.</p>"
            f'<a href="/p{n + 1}">next</a></body></html>'.encode()
        )
    bad = [
        {"url": site.url("/p0"), "strategy": "crawl-everything"},
        {"url": "ftp://example.com/", "strategy": "spider"},
        {"url": site.url("/p0"), "strategy": "spider", "maxPages": 0},
        {"url": site.url("/p0"), "strategy": "spider", "maxPages": 10**9},
        {"url": site.url("/p0"), "render": "x"},
        {"url": site.url("/p0"), "webhook": {"url": "not a url"}},
        {"url": site.url("/p0"), "webhook": {"url": site.url("/hook"), "headers": {"Host": "x"}}},
    ]
    for body in bad:
        response = client.post("/knowledge/index-link", json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["message"]
    response = client.post(
        "/knowledge/index-link",
        json={"url": site.url("/p0"), "strategy": "spider", "maxPages": 30, "maxDepth": 30},
    )
    job_id = response.json()["jobId"]
    deadline = time.monotonic() + 30
    while client.get(f"/knowledge/jobs/{job_id}").json()["counts"].get("ingested", 0) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    running = client.get(f"/knowledge/jobs/{job_id}").json()
    assert running["status"] == "running" and 0 < running["progress"] < 1
    assert client.post(f"/knowledge/jobs/{job_id}/cancel").json()["status"] == "cancelled"
    job = wait_for_job(client, job_id)
    assert job["status"] == "cancelled"
    time.sleep(0.5)
    fetched = len(site.requests)
    time.sleep(1.0)
    assert len(site.requests) == fetched  # nothing more is fetched
    report = client.get(f"/knowledge/jobs/{job_id}/urls", params={"state": "skipped"}).json()
    assert report["total"] >= 1 and {u["reason"] for u in report["urls"]} == {"cancelled"}
    assert (
        client.get(f"/knowledge/jobs/{job_id}/urls", params={"state": "bogus"}).status_code == 422
    )
    assert client.get("/knowledge/jobs/nope/urls").status_code == 404


@pytest.mark.parametrize("answers", [[500, 200], [500, 500, 500, 500]])
def test_webhook_is_retried_with_backoff(
    make_client: Callable[..., TestClient], site: Site, answers: list[int]
) -> None:
    client = make_client(crawl={"webhook_backoff_s": 0.1, "webhook_attempts": 4})
    handbook(site)
    site.post_statuses = list(answers)
    job = crawl(
        client,
        site,
        strategy="single",
        webhook={"url": site.url("/hook"), "headers": {"X-Token": "s3cret"}},
    )
    deadline = time.monotonic() + 10
    while "webhook" not in client.get(f"/knowledge/jobs/{job['id']}").json()["message"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    delivered = answers[-1] == 200
    assert len(site.posts) == len(answers)
    payload = json.loads(site.posts[-1].body)
    assert payload["jobId"] == job["id"] and payload["status"] == "completed"
    assert payload["counts"]["ingested"] == 1
    assert site.posts[0].headers["X-Token"] == "s3cret"
    message = client.get(f"/knowledge/jobs/{job['id']}").json()["message"]
    assert message.endswith("webhook delivered" if delivered else "webhook failed")


def webhook_message(client: TestClient, job_id: str, key: str) -> str:
    """The job's message once it says what became of its webhook."""
    headers = {"Authorization": f"Bearer {key}"}
    deadline = time.monotonic() + 20
    while True:
        message = str(client.get(f"/knowledge/jobs/{job_id}", headers=headers).json()["message"])
        if "webhook" in message:
            return message
        assert time.monotonic() < deadline, message
        time.sleep(0.05)


def test_webhooks_go_only_to_the_tenants_own_domains(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    handbook(site)
    auth: Authenticator = client.app.state.auth  # type: ignore[attr-defined]
    narrow, _ = auth.create_key("narrow", "test", ["127.0.0.1"])
    wide, _ = auth.create_key("wide", "test", ["*"])
    outside = site.url("/hook").replace("127.0.0.1", "localhost")  # loopback, another name
    request = {"url": site.url("/"), "strategy": "single", "webhook": {"url": outside}}

    refused = client.post(
        "/knowledge/index-link", json=request, headers={"Authorization": f"Bearer {narrow}"}
    )
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"] == "domain_not_allowed"
    assert refused.json()["message"].startswith("webhook.url: localhost is not")

    accepted = client.post(
        "/knowledge/index-link", json=request, headers={"Authorization": f"Bearer {wide}"}
    )
    assert accepted.status_code == 202, accepted.text
    message = webhook_message(client, accepted.json()["jobId"], wide)
    assert message.endswith("webhook delivered") and len(site.posts) == 1


def test_a_webhook_outside_domains_narrowed_after_queueing_is_not_sent(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    handbook(site)
    site.pages["/"] = Page(site.pages["/"].body, delay_s=1.0)  # time to change the tenant
    auth: Authenticator = client.app.state.auth  # type: ignore[attr-defined]
    key, _ = auth.create_key("later", "test", ["127.0.0.1"])
    accepted = client.post(
        "/knowledge/index-link",
        json={"url": site.url("/"), "strategy": "single", "webhook": {"url": site.url("/hook")}},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert accepted.status_code == 202, accepted.text
    client.app.state.lore.catalog.put_tenant("later", ["other.test"])  # type: ignore[attr-defined]
    message = webhook_message(client, accepted.json()["jobId"], key)
    assert message.endswith("webhook not sent: 127.0.0.1 is not in allowedDomains")
    assert site.posts == []
