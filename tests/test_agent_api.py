"""/agent/context and /skills through the HTTP API with the real model and engine: knowledge,
skill hints and the page's site model in one call, the targeted parameter variant, outcomes
and the 4xx answers."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient

PAGE = "https://ehr.clinic.test/patients"
DOM = """<html><body><h1>Patients</h1>
<section id="help"><h2>Adding patients</h2><p>New patients are added from the New/Search entry
of the Patient menu; the Add button on the dashboard only opens appointments.</p></section>
<section id="billing"><h2>Billing</h2><p>The clinic's invoice number prefix is INV-2291 and
invoices are sent on the first working day of each month.</p></section>
</body></html>"""
SKILL = {
    "url": PAGE,
    "goal": "Add a new patient",
    "failedState": {"action": "click(68)", "elementDescription": "Patient menu"},
    "successfulAction": {"action": "click(79)", "elementDescription": "New/Search"},
}


def test_one_call_gives_knowledge_skill_hints_and_the_site_model(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    snapshot = {"url": PAGE, "phase": "initial", "dom": DOM}
    assert client.post("/knowledge/spa/snapshots", json=snapshot).status_code == 201
    recorded = client.post("/skills", json=SKILL)
    assert recorded.status_code == 201, recorded.text
    skill = recorded.json()
    again = client.post("/skills", json=SKILL).json()  # the same goal and failure: one skill
    assert again["id"] == skill["id"] and again["successCount"] == 2
    lore = client.app.state.lore  # type: ignore[attr-defined]
    lore.catalog.put_site_model(  # as a finished capture of the page leaves it
        lore.tenant,
        PAGE,
        "ehr.clinic.test",
        {
            "understanding": {
                "pageType": "list_detail",
                "keyElements": [{"kind": "list_item", "selector": "#patients > li"}],
                "behaviours": [
                    {"pattern": "tab", "effect": "replaced", "seen": 1, "confirmed": False},
                    {"pattern": "list_item", "effect": "replaced", "seen": 3, "confirmed": True},
                ],
                "bindings": {"LIST_ITEM": "#patients > li", "DETAILS_PANEL": "#details"},
            }
        },
    )
    response = client.post(
        "/agent/context",
        json={"url": PAGE, "query": "how do I add a patient?", "goal": "add a new patient"},
    )
    assert response.status_code == 200, response.text
    context = response.json()
    assert "New/Search" in context["chunks"][0]["text"]
    assert context["hasOrgKnowledge"] is True
    [hint] = context["skills"]
    assert hint["hint"] == (
        "Last time 'click(68)' (Patient menu) failed for 'Add a new patient'; "
        "'click(79)' (New/Search) worked (2 of 2 times)."
    )
    model = context["siteModel"]
    assert model["pageType"] == "list_detail" and model["bindings"]["LIST_ITEM"]
    assert model["behaviours"][0]["confirmed"]  # confirmed behaviours first
    other = client.post("/agent/context", json={"url": "https://other.test/", "goal": "x"})
    assert other.json() == {
        "chunks": [],
        "hasOrgKnowledge": False,
        "skills": [],
        "siteModel": None,
        "scan": None,  # no dom sent
        "snapshot": None,
    }


def test_the_parameter_variant_finds_the_chunk_holding_the_value(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    client.post("/knowledge/spa/snapshots", json={"url": PAGE, "phase": "initial", "dom": DOM})
    response = client.post("/agent/context", json={"url": PAGE, "parameter": "invoice number"})
    assert response.status_code == 200, response.text
    assert "INV-2291" in response.json()["chunks"][0]["text"]


def test_outcomes_move_a_skill_below_the_floor_and_bad_requests_are_refused(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    skill = client.post("/skills", json=SKILL).json()
    for _ in range(2):
        client.post(f"/skills/{skill['id']}/outcome", json={"success": False})
    found = client.get("/skills/search", params={"url": PAGE, "goal": "add a new patient"})
    assert found.json()["skills"] == []  # 1 of 3 worked: below 50 %
    missing = client.post(
        "/skills/00000000-0000-0000-0000-000000000000/outcome", json={"success": True}
    )
    assert missing.status_code == 404
    for body in (
        {**SKILL, "url": "not a url"},
        {**SKILL, "goal": ""},
        {**SKILL, "successfulAction": {"action": ""}},
        {k: v for k, v in SKILL.items() if k != "failedState"},
    ):
        response = client.post("/skills", json=body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["message"]
    assert client.post("/agent/context", json={"url": "nope"}).status_code == 422
