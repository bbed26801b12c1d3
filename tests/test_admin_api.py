"""/admin through the HTTP API: only an admin key manages keys and tenants, a key made there
works at once and shows only once, a revoked one stops working, the admin's own key cannot be
revoked by itself; and /skills/kpis reports the tenant's daily skill KPIs."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient

from api.auth import Authenticator


def test_only_an_admin_key_manages_keys_and_tenants(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()  # its key is not an admin key
    auth: Authenticator = client.app.state.auth  # type: ignore[attr-defined]
    refused = client.get("/admin/keys")
    assert refused.status_code == 403 and refused.json()["error"] == "admin_only"
    admin_key, admin_record = auth.create_key("default", "ops", admin=True)
    admin = {"Authorization": f"Bearer {admin_key}"}

    made = client.post(
        "/admin/keys",
        json={"tenant": "acme", "name": "agent", "allowedDomains": ["*.acme.test"]},
        headers=admin,
    )
    assert made.status_code == 201, made.text
    new_key, record = made.json()["key"], made.json()["record"]
    assert record["tenant"] == "acme" and not record["admin"]
    listed = client.get("/admin/keys", params={"tenant": "acme"}, headers=admin).json()["keys"]
    assert [k["id"] for k in listed] == [record["id"]] and new_key not in str(listed)
    tenants = {t["id"]: t for t in client.get("/admin/tenants", headers=admin).json()["tenants"]}
    assert tenants["acme"] == {"id": "acme", "allowedDomains": ["*.acme.test"], "activeKeys": 1}

    acme = {"Authorization": f"Bearer {new_key}"}
    assert client.get("/knowledge/documents", headers=acme).status_code == 200
    assert client.get("/admin/tenants", headers=acme).status_code == 403
    changed = client.put(
        "/admin/tenants/acme", json={"allowedDomains": ["docs.acme.test"]}, headers=admin
    )
    assert changed.json()["allowedDomains"] == ["docs.acme.test"]
    assert (
        client.put(
            "/admin/tenants/nobody", json={"allowedDomains": ["x"]}, headers=admin
        ).status_code
        == 404
    )

    assert client.delete(f"/admin/keys/{record['id']}", headers=admin).status_code == 204
    assert client.get("/knowledge/documents", headers=acme).status_code == 401
    own = client.delete(f"/admin/keys/{admin_record.id}", headers=admin)
    assert own.status_code == 409 and "another admin key" in own.json()["message"]
    second = client.post("/admin/keys", json={"tenant": "default", "admin": True}, headers=admin)
    other = {"Authorization": f"Bearer {second.json()['key']}"}
    assert client.delete(f"/admin/keys/{admin_record.id}", headers=other).status_code == 204
    # the last admin key: not by another admin either (there is none), nor by itself
    last = client.delete(f"/admin/keys/{second.json()['record']['id']}", headers=other)
    assert last.status_code == 409
    assert client.delete("/admin/keys/nope", headers=other).status_code == 404
    bad = client.post("/admin/keys", json={"tenant": "a b"}, headers=other)
    assert bad.status_code == 422 and "tenant" in bad.json()["message"]


def test_skill_kpis_by_day(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    page = "https://shop.example.test/cart"
    context = {"url": page, "goal": "empty the cart"}
    client.post("/agent/context", json=context)  # a lookup without a hit
    skill = client.post(
        "/skills",
        json={
            "url": page,
            "goal": "empty the cart",
            "failedState": {"action": "click(3)"},
            "successfulAction": {"action": "click(4)"},
        },
    ).json()
    client.post("/agent/context", json=context)  # a hit
    client.get("/skills/search", params={"url": page, "goal": "empty the cart"})  # a hit
    for success in (True, True, False):
        client.post(f"/skills/{skill['id']}/outcome", json={"success": success})
    kpis = client.get("/skills/kpis", params={"days": 7}).json()
    [today] = kpis["days"]
    assert today["lookups"] == 3 and today["hits"] == 2
    assert today["successes"] == 2 and today["failures"] == 1
    assert kpis["total"]["hitRate"] == 0.6667 and kpis["total"]["effectiveness"] == 0.6667
    assert client.get("/skills/kpis", params={"days": 0}).status_code == 422
