"""API keys, tenants and rate limits through the HTTP API with real keys (and the real model):
401s that say why, isolation of two tenants' chunks, skills and jobs, allowedDomains enforced
with 403, per-key rate limits with 429 and Retry-After, revocation."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient

from api.auth import Authenticator

A_PAGE = "https://portal.acme.test/help"
B_PAGE = "https://portal.globex.test/help"


def dom(text: str) -> str:
    return f"<html><body><h1>Help</h1><section id='help'><p>{text}</p></section></body></html>"


def keyed(client: TestClient, key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def make_key(client: TestClient, tenant: str, domains: list[str], **extra: object) -> str:
    auth: Authenticator = client.app.state.auth  # type: ignore[attr-defined]
    key, _ = auth.create_key(tenant, "test", domains, **extra)  # type: ignore[arg-type]
    return key


def test_requests_without_a_valid_key_get_401_that_says_why(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    anonymous = TestClient(client.app)
    assert anonymous.get("/healthz").status_code == 200  # the one open route
    cases = [
        ({}, "Authorization: Bearer"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "Authorization: Bearer"),
        ({"Authorization": "Bearer lore_not-a-key-of-this-server-at-all"}, "unknown or revoked"),
    ]
    for headers, words in cases:
        response = anonymous.get(
            "/knowledge/resolve", params={"url": A_PAGE, "query": "x"}, headers=headers
        )
        assert response.status_code == 401, response.text
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert words in response.json()["message"]
    for method, path in (
        ("post", "/agent/context"),
        ("post", "/skills"),
        ("get", "/knowledge/documents"),
    ):
        assert getattr(anonymous, method)(path).status_code == 401
    key = make_key(client, "acme", ["*.acme.test"])
    auth: Authenticator = client.app.state.auth  # type: ignore[attr-defined]
    [record] = [k for k in client.app.state.lore.catalog.api_keys("acme")]  # type: ignore[attr-defined]
    ok = anonymous.get("/knowledge/documents", headers=keyed(client, key))
    assert ok.status_code == 200
    auth.revoke(record.id)
    revoked = anonymous.get("/knowledge/documents", headers=keyed(client, key))
    assert revoked.status_code == 401 and "revoked" in revoked.json()["message"]


def test_two_tenants_never_see_each_others_knowledge_skills_or_jobs(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    a = keyed(client, make_key(client, "acme", ["*"]))
    b = keyed(client, make_key(client, "globex", ["*"]))
    secret = "The acme vault code is 4471 and only the night shift may open it."
    assert (
        client.post(
            "/knowledge/spa/snapshots",
            json={"url": A_PAGE, "phase": "initial", "dom": dom(secret)},
            headers=a,
        ).status_code
        == 201
    )
    skill = {
        "url": A_PAGE,
        "goal": "Open the vault",
        "failedState": {"action": "click(1)"},
        "successfulAction": {"action": "click(2)"},
    }
    made = client.post("/skills", json=skill, headers=a).json()
    job = client.post("/knowledge/index-link", json={"url": A_PAGE}, headers=a).json()
    question = "what is the vault code?"
    mine = client.get("/knowledge/resolve", params={"url": A_PAGE, "query": question}, headers=a)
    assert "4471" in mine.json()["chunks"][0]["text"]
    leaks = [
        client.get("/knowledge/resolve", params={"url": A_PAGE, "query": question}, headers=b),
        client.post("/knowledge/query", json={"query": question, "k": 50}, headers=b),
        client.post(
            "/agent/context",
            json={"url": A_PAGE, "query": question, "goal": "Open the vault"},
            headers=b,
        ),
    ]
    for response in leaks:
        assert response.status_code == 200, response.text
        body = response.json()
        assert "4471" not in str(body["chunks"])
        assert not body.get("skills")
    assert client.get("/knowledge/documents", headers=b).json()["total"] == 0
    assert client.get(f"/knowledge/jobs/{job['jobId']}", headers=b).status_code == 404
    assert (
        client.post(f"/skills/{made['id']}/outcome", json={"success": False}, headers=b).status_code
        == 404
    )
    search = client.get(
        "/skills/search", params={"url": A_PAGE, "goal": "Open the vault"}, headers=b
    )
    assert search.json()["skills"] == []


def test_allowed_domains_are_enforced(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    acme = keyed(client, make_key(client, "acme", ["*.acme.test"]))
    everyone = keyed(client, make_key(client, "public", ["*"]))  # shared knowledge
    client.post(
        "/knowledge/spa/snapshots",
        json={"url": B_PAGE, "phase": "initial", "dom": dom("Globex invoices are due in 30 days.")},
        headers=everyone,
    )
    refused = [
        client.post(
            "/knowledge/spa/snapshots",
            json={"url": B_PAGE, "phase": "initial", "dom": dom("x y z")},
            headers=acme,
        ),
        client.get("/knowledge/resolve", params={"url": B_PAGE, "query": "invoices"}, headers=acme),
        client.post("/agent/context", json={"url": B_PAGE, "query": "invoices"}, headers=acme),
        client.post("/knowledge/index-link", json={"url": B_PAGE}, headers=acme),
        client.post("/knowledge/spa/capture", json={"url": B_PAGE}, headers=acme),
    ]
    for response in refused:
        assert response.status_code == 403, response.text
        assert response.json()["error"] == "domain_not_allowed"
        assert "portal.globex.test" in response.json()["message"]
    # Public knowledge of a domain the tenant may not use is left out of its searches too.
    found = client.post("/knowledge/query", json={"query": "when are invoices due?"}, headers=acme)
    assert found.status_code == 200 and found.json()["chunks"] == []
    ok = client.post(
        "/knowledge/spa/snapshots",
        json={"url": A_PAGE, "phase": "initial", "dom": dom("Acme pays invoices weekly.")},
        headers=acme,
    )
    assert ok.status_code == 201


def test_each_key_is_rate_limited_with_retry_after(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    slow = keyed(client, make_key(client, "acme", ["*"], rate_limit=3))
    other = keyed(client, make_key(client, "acme", ["*"]))
    answers = [client.get("/knowledge/documents", headers=slow).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    limited = client.get("/knowledge/documents", headers=slow)
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    assert "3 requests per minute" in limited.json()["message"]
    assert client.get("/knowledge/documents", headers=other).status_code == 200  # per key
