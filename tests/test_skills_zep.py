"""The Zep skills backend (zep-python) against a local stand-in of Zep's v2 API: skills are
written as Zep memory and read back, with the library's rules on top; and through the HTTP API
with LORE_SKILLS__BACKEND=zep. No Zep server can run here (see README)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from retrieval import NotFoundError
from retrieval.skills import FailedState, SkillLibrary, SuccessfulAction, ZepSkillIndex
from tests.zep_standin import ZepStandIn

DOMAIN = "ehr.clinic.test"
FAILED = FailedState("click(68)", "Patient menu", "wrong_element")
WORKED = SuccessfulAction("click(79)", "New/Search", "menu")


@pytest.fixture
def zep() -> Iterator[ZepStandIn]:
    server = ZepStandIn()
    yield server
    server.close()


def test_skills_round_trip_through_zep_memory(zep: ZepStandIn) -> None:
    skills = SkillLibrary(ZepSkillIndex(zep.url, zep.api_key), embed=None)
    skill = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    again = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    assert again.id == skill.id and again.success_count == 2
    [stored] = zep.messages["lore-skills-acme"]  # one Zep message, updated in place
    assert stored["content"] == "Add a new patient"
    assert stored["metadata"]["success_count"] == 2
    # A fresh index reads everything back from Zep.
    reread = SkillLibrary(ZepSkillIndex(zep.url, zep.api_key), embed=None)
    [hit] = reread.search("acme", DOMAIN, "add a new patient")
    assert hit.skill.hint() == (
        "Last time 'click(68)' (Patient menu) failed for 'Add a new patient'; "
        "'click(79)' (New/Search) worked (2 of 2 times)."
    )
    assert reread.search("globex", DOMAIN, "add a new patient") == []
    assert reread.search("acme", "other.test", "add a new patient") == []
    with pytest.raises(NotFoundError):
        reread.outcome("globex", skill.id, success=True)
    for _ in range(3):
        reread.outcome("acme", skill.id, success=False)  # 2 of 5: below the floor
    assert reread.search("acme", DOMAIN, "add a new patient") == []
    assert ("POST", "/api/v2/sessions/search") in zep.requests
    assert any(m == "PATCH" for m, _ in zep.requests)


def test_eviction_marks_zep_messages_deleted(zep: ZepStandIn) -> None:
    skills = SkillLibrary(ZepSkillIndex(zep.url, zep.api_key), embed=None)
    skills.rules = type(skills.rules)(max_per_tenant=2)
    first = skills.record("acme", DOMAIN, "Export the visit list", FAILED, WORKED)
    skills.outcome("acme", first.id, success=False)
    skills.outcome("acme", first.id, success=False)
    skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    skills.record("acme", DOMAIN, "Print a prescription", FAILED, WORKED)
    assert first.id not in {s.id for s in skills.index.scan("acme")}
    assert skills.index.count("acme") == 2
    deleted = [m for m in zep.messages["lore-skills-acme"] if m["metadata"].get("deleted")]
    assert [m["content"] for m in deleted] == ["Export the visit list"]


def test_the_api_uses_zep_when_the_settings_say_so(
    make_client: Callable[..., TestClient], zep: ZepStandIn
) -> None:
    client = make_client(skills={"backend": "zep", "zep_url": zep.url, "zep_api_key": zep.api_key})
    body = {
        "url": f"https://{DOMAIN}/patients",
        "goal": "Add a new patient",
        "failedState": {"action": "click(68)", "elementDescription": "Patient menu"},
        "successfulAction": {"action": "click(79)", "elementDescription": "New/Search"},
    }
    assert client.post("/skills", json=body).status_code == 201
    context = client.post(
        "/agent/context", json={"url": body["url"], "goal": "add a new patient"}
    ).json()
    assert context["skills"][0]["hint"].startswith("Last time 'click(68)'")
    assert zep.messages["lore-skills-default"]
