"""index-link beyond one public URL, through the HTTP API with the real model and engine: pages
behind a login (headers and cookies sent to the crawl's own hosts only, never shown or kept
after the job), a batch of URLs in one job, and custom metadata that queries filter on."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from api import Lore
from tests.conftest import Page, Site, wait_for_job

TOKEN = "Bearer t0k-9f3a-secret"
COOKIE = "c00kie-77d1-secret"


def article(title: str, text: str, links: tuple[str, ...] = (), **extra: object) -> Page:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    body = (
        f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
        f"<p>{text}</p><p>{text} More about it follows here.</p><nav>{anchors}</nav>"
        "</main></body></html>"
    ).encode()
    return Page(body, **extra)  # type: ignore[arg-type]


def index_link(client: TestClient, body: dict[str, object]) -> dict[str, object]:
    response = client.post("/knowledge/index-link", json=body)
    assert response.status_code == 202, response.text
    return wait_for_job(client, response.json()["jobId"])


def test_a_crawl_behind_a_login_sends_it_only_to_its_hosts_and_never_shows_it(
    make_client: Callable[..., TestClient], site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client()
    lore: Lore = client.app.state.lore  # type: ignore[attr-defined]
    elsewhere = site.url("/landing").replace("127.0.0.1", "localhost")  # another host
    login = {"Authorization": TOKEN, "Cookie": f"session={COOKIE}"}
    site.pages["/"] = article("Members", "The members area lists the club rules.", ("/rules",))
    site.pages["/"].require = login
    site.pages["/rules"] = article(
        "Rules", "Guests must sign the visitor book at the gate.", require=login
    )
    site.pages["/away"] = Page(b"", status=302, headers={"Location": elsewhere})
    site.pages["/landing"] = article("Landing", "A page on another host.")
    caplog.set_level(logging.DEBUG)

    job = index_link(
        client,
        {
            "url": site.url("/"),
            "strategy": "spider",
            "maxPages": 10,
            "headers": {"Authorization": TOKEN},
            "cookies": {"session": COOKIE},
            "webhook": {"url": site.url("/hook"), "headers": {"X-Token": "hook-secret"}},
        },
    )
    assert job["status"] == "completed", job
    assert job["counts"]["ingested"] == 2  # type: ignore[index]
    hits = client.post("/knowledge/query", json={"query": "visitor book at the gate"}).json()
    assert "visitor book" in hits["chunks"][0]["text"]

    # A redirect to another host goes there without the login.
    job2 = index_link(
        client,
        {"url": site.url("/away"), "headers": {"Authorization": TOKEN}, "cookies": {"s": "1"}},
    )
    landing = [headers for path, headers in site.headers if path == "/landing"]
    assert landing, "the redirect was followed"
    assert all("Authorization" not in h and "Cookie" not in h for h in landing)

    # Job views show the names, never the values; the webhook carries none of them.
    deadline = time.monotonic() + 20
    while "webhook" not in str(client.get(f"/knowledge/jobs/{job['id']}").json()["message"]):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    view = client.get(f"/knowledge/jobs/{job['id']}").json()
    assert view["request"]["login"] == {"headers": ["Authorization"], "cookies": ["session"]}
    assert view["request"]["webhook"]["headers"] == ["X-Token"]
    [post] = site.posts
    assert post.headers["X-Token"] == "hook-secret"
    shown = [
        json.dumps(view),
        client.get("/knowledge/jobs").text,
        post.body.decode(),
        caplog.text,
    ]
    for secret in ("t0k-9f3a", COOKIE, "hook-secret"):
        assert not any(secret in text for text in shown), secret
    # ... and the catalog keeps them no longer than the job.
    assert lore.catalog.secrets(str(job["id"])) == {}
    assert lore.catalog.secrets(str(job2["id"])) == {}

    # Without the login the same pages are refused.
    job3 = index_link(client, {"url": site.url("/rules")})
    assert job3["status"] == "failed" and "http_401" in str(job3["error"])


def test_bad_login_batch_and_metadata_requests_are_refused(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    url = site.url("/")
    bad: list[tuple[dict[str, object], str]] = [
        ({"strategy": "single"}, "url"),
        ({"url": url, "urls": [url]}, "url"),
        ({"urls": [url, site.url("/b")], "strategy": "sitemap"}, "strategy"),
        ({"urls": ["ftp://x.test/"]}, "ftp"),
        ({"url": url, "headers": {"Host": "evil.test"}}, "headers"),
        ({"url": url, "headers": {"X-A": "1\r\nX-B: 2"}}, "line break"),
        ({"url": url, "headers": {"bad header": "1"}}, "header name"),
        ({"url": url, "metadata": {"team": 5}}, "metadata"),
        ({"url": url, "metadata": {"no spaces": "x"}}, "metadata"),
        ({"url": url, "metadata": {f"k{n}": "v" for n in range(33)}}, "metadata"),
    ]
    for body, word in bad:
        response = client.post("/knowledge/index-link", json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"] == "invalid_request"
        assert word in response.json()["message"], (body, response.json())
    for form, word in [({"metadata": "{not json"}, "not JSON"), ({"metadata": "[1]"}, "object")]:
        response = client.post(
            "/knowledge/ingest", files={"files": ("a.md", b"# A\n\nText.")}, data=form
        )
        assert response.status_code == 422 and word in response.json()["message"], response.text
    for bad_filter in ({"a": 1}, {"team": []}, {"a=b": "c"}):
        response = client.post("/knowledge/query", json={"query": "x", "metadata": bad_filter})
        assert response.status_code == 422, (bad_filter, response.text)


def test_a_batch_with_metadata_is_filtered_on_in_queries(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    topics = {
        "/tea": ("Tea", "Green tea steeps for two minutes at eighty degrees."),
        "/bread": ("Bread", "Sourdough bread rises overnight in a cool kitchen."),
        "/bikes": ("Bikes", "Bicycle chains want oil every few hundred kilometres."),
    }
    for path, (title, text) in topics.items():
        site.pages[path] = article(title, text)
    urls = [site.url(p) for p in topics] + [site.url("/missing")]
    job = index_link(client, {"urls": urls, "metadata": {"team": "kitchen", "v": "1"}})
    assert job["status"] == "completed", job
    assert job["counts"]["ingested"] == 3 and job["counts"]["failed"] == 1  # type: ignore[index]
    assert job["request"]["urls"] == urls  # type: ignore[index]
    upload = client.post(
        "/knowledge/ingest",
        files={"files": ("tea.md", b"# Tea at work\n\nThe office kettle makes green tea.")},
        data={"metadata": json.dumps({"team": "office"})},
    )
    assert upload.status_code == 201, upload.text
    assert upload.json()["files"][0]["document"]["metadata"] == {"team": "office"}

    def teams(metadata: dict[str, object]) -> list[str]:
        body = {"query": "green tea", "k": 10, "metadata": metadata}
        response = client.post("/knowledge/query", json=body)
        assert response.status_code == 200, response.text
        return [c["metadata"].get("team", "") for c in response.json()["chunks"]]

    assert set(teams({})) == {"kitchen", "office"}
    assert set(teams({"team": "office"})) == {"office"}
    assert set(teams({"team": ["kitchen"], "v": "1"})) == {"kitchen"}
    assert teams({"team": "kitchen", "v": "2"}) == []

    # The same pages crawled again with other metadata: stored again, the old tag gone.
    again = index_link(client, {"urls": urls[:3], "metadata": {"team": "bakery"}})
    assert again["counts"]["ingested"] == 3, again  # type: ignore[index]
    assert teams({"team": "kitchen"}) == []
    assert set(teams({"team": "bakery"})) == {"bakery"}
    docs = client.get("/knowledge/documents", params={"source": "link"}).json()["documents"]
    assert {d["metadata"].get("team") for d in docs} == {"bakery"}


def test_a_login_goes_only_to_the_crawls_own_origins() -> None:
    from crawl import Scope

    scope = Scope("https://wiki.acme.test/start", allow_subdomains=True)
    assert scope.login_allowed("https://wiki.acme.test/page")
    assert scope.login_allowed("https://eu.wiki.acme.test/page")  # a subdomain, same scheme
    assert not scope.login_allowed("http://wiki.acme.test/page")  # never in clear
    assert not scope.login_allowed("https://wiki.acme.test:8443/page")  # another port
    assert not scope.login_allowed("https://acme.test/page")
    assert not scope.login_allowed("https://wiki.acme.test.evil.test/page")
    narrow = Scope("http://127.0.0.1:8080/")
    assert narrow.login_allowed("http://127.0.0.1:8080/x")
    assert not narrow.login_allowed("http://127.0.0.1:8081/x")


def test_bad_login_values_are_refused_without_being_quoted(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    url = site.url("/")
    for body in (
        {"url": url, "cookies": {"session": "abc\u0000secret-77"}},
        {"url": url, "cookies": {"session": "a;b=secret-77"}},
        {"url": url, "headers": {"Authorization": "Bearer \u0001secret-77"}},
        {"urls": [url, url.replace("127.0.0.1", "localhost")], "headers": {"X-T": "secret-77"}},
    ):
        response = client.post("/knowledge/index-link", json=body)
        assert response.status_code == 422, (body, response.text)
        assert "secret-77" not in response.text


def test_an_expired_login_removes_nothing(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    login = {"Authorization": TOKEN}
    site.pages["/"] = article("Members", "The members area lists the club rules.", ("/rules",))
    site.pages["/"].require = login
    site.pages["/rules"] = article("Rules", "Guests sign the visitor book.", require=login)
    site.pages["/login"] = article("Sign in", "Sign in to the members area.")
    body = {"url": site.url("/"), "strategy": "spider", "headers": login}
    assert index_link(client, body)["counts"]["ingested"] == 2  # type: ignore[index]
    # The session expired: every member page now redirects to the sign-in form.
    for path in ("/", "/rules"):
        site.pages[path] = Page(b"", status=302, headers={"Location": "/login"})
    again = index_link(client, body)
    assert again["counts"]["removed"] == 0, again  # type: ignore[index]
    urls = {d["url"] for d in client.get("/knowledge/documents").json()["documents"]}
    assert {site.url("/"), site.url("/rules")} <= urls
