"""The skills library's rules on both vector backends (the embedded Qdrant Edge shard and
qdrant-client, here its in-process engine): duplicate merging, tenant and domain isolation, the
TTL and the cap (with an injectable clock), the 50 % rule and the ranking. The hash embedder (a
deterministic bag-of-words fake) stands in for the model where only the rules are under test;
the ranking by meaning uses the real model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ingest import Embedder, HashEmbedder
from retrieval import NotFoundError
from retrieval.skills import (
    EdgeSkillIndex,
    FailedState,
    QdrantSkillIndex,
    SkillIndex,
    SkillLibrary,
    SkillRules,
    SuccessfulAction,
)

DOMAIN = "ehr.clinic.test"
FAILED = FailedState("click(68)", "Patient menu", "wrong_element")
WORKED = SuccessfulAction("click(79)", "New/Search", "menu")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 6, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, days: float) -> None:
        self.now += timedelta(days=days)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["edge", "qdrant-client"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def library(
    tmp_path: Path, clock: Clock, backend: str, embedder: Embedder | None = None, **rules: object
) -> SkillLibrary:
    embedder = embedder or HashEmbedder()
    index: SkillIndex = (
        EdgeSkillIndex(tmp_path / f"skills-{id(clock)}-{len(rules)}", embedder.dim)
        if backend == "edge"
        else QdrantSkillIndex(embedder.dim)
    )
    return SkillLibrary(index, embedder.embed_query, SkillRules(**rules), clock)  # type: ignore[arg-type]


@pytest.fixture
def skills(tmp_path: Path, clock: Clock, backend: str) -> Iterator[SkillLibrary]:
    made = library(tmp_path, clock, backend)
    yield made
    made.close()


def test_recording_the_same_goal_and_failure_updates_one_skill(
    skills: SkillLibrary, clock: Clock
) -> None:
    first = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    clock.advance(1)
    better = SuccessfulAction("click(80)", "New patient button", "toolbar")
    again = skills.record("acme", DOMAIN, "add a new  patient", FAILED, better)
    assert again.id == first.id
    assert again.success_count == 2 and again.successful_action == better
    assert again.last_used == clock.now and again.created_at == first.created_at
    assert skills.index.count("acme") == 1
    other_failure = FailedState("click(12)", "Search box", "not_found")
    assert skills.record("acme", DOMAIN, "Add a new patient", other_failure, WORKED).id != first.id


def test_tenants_and_domains_are_isolated(skills: SkillLibrary) -> None:
    mine = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    assert skills.search("acme", DOMAIN, "Add a new patient")
    assert skills.search("globex", DOMAIN, "Add a new patient") == []
    assert skills.search("acme", "other.clinic.test", "Add a new patient") == []
    with pytest.raises(NotFoundError):
        skills.outcome("globex", mine.id, success=False)
    skills.index.delete("globex", [mine.id])  # another tenant cannot delete it either
    assert skills.index.count("acme") == 1


def test_skills_below_half_success_are_never_returned(skills: SkillLibrary) -> None:
    skill = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    skills.outcome("acme", skill.id, success=False)  # 1 of 2: still returned
    assert [h.skill.id for h in skills.search("acme", DOMAIN, "Add a new patient")] == [skill.id]
    worse = skills.outcome("acme", skill.id, success=False)  # 1 of 3
    assert worse.success_rate < 0.5
    assert skills.search("acme", DOMAIN, "Add a new patient") == []
    skills.outcome("acme", skill.id, success=True)
    skills.outcome("acme", skill.id, success=True)  # 3 of 5: back
    assert skills.search("acme", DOMAIN, "Add a new patient")


def test_skills_expire_ninety_days_after_their_last_use(skills: SkillLibrary, clock: Clock) -> None:
    old = skills.record("acme", DOMAIN, "Export the visit list", FAILED, WORKED)
    kept = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    clock.advance(60)
    skills.outcome("acme", kept.id, success=True)  # used again: its 90 days start over
    clock.advance(31)
    assert skills.search("acme", DOMAIN, "Export the visit list") == []
    assert skills.search("acme", DOMAIN, "Add a new patient")
    skills.record("acme", DOMAIN, "Print a prescription", FAILED, WORKED)  # purges the expired
    assert {s.id for s in skills.index.scan("acme")} >= {kept.id}
    assert old.id not in {s.id for s in skills.index.scan("acme")}


def test_the_cap_evicts_the_least_useful_skill_first(
    tmp_path: Path, clock: Clock, backend: str
) -> None:
    skills = library(tmp_path, clock, backend, max_per_tenant=3)
    try:
        a = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
        b = skills.record("acme", DOMAIN, "Export the visit list", FAILED, WORKED)
        c = skills.record("acme", DOMAIN, "Print a prescription", FAILED, WORKED)
        skills.outcome("acme", b.id, success=False)
        skills.outcome("acme", b.id, success=False)  # b: 1 of 3, the least useful
        skills.record("globex", DOMAIN, "Add a new patient", FAILED, WORKED)  # other tenant
        d = skills.record("acme", DOMAIN, "Book an appointment", FAILED, WORKED)
        assert {s.id for s in skills.index.scan("acme")} == {a.id, c.id, d.id}
        assert skills.index.count("globex") == 1
    finally:
        skills.close()


def test_ranking_is_similarity_times_success_rate_times_recency(
    tmp_path: Path, clock: Clock, backend: str, real_embedder: Embedder
) -> None:
    skills = library(tmp_path, clock, backend, real_embedder)
    try:
        exact = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
        close = skills.record(
            "acme", DOMAIN, "Register a new patient record", FailedState("click(3)"), WORKED
        )
        unrelated = skills.record(
            "acme", DOMAIN, "Change the printer paper size", FailedState("click(9)"), WORKED
        )
        hits = skills.search("acme", DOMAIN, "add a new patient", k=5)
        assert [h.skill.id for h in hits][:2] == [exact.id, close.id]
        assert unrelated.id not in [h.skill.id for h in hits]  # below the similarity floor
        # A worse success rate and an older last use both push a skill down.
        skills.outcome("acme", exact.id, success=False)  # 1 of 2
        clock.advance(45)
        skills.outcome("acme", close.id, success=True)  # 2 of 2, used today
        hits = skills.search("acme", DOMAIN, "add a new patient", k=5)
        assert [h.skill.id for h in hits][:2] == [close.id, exact.id]
        assert hits[0].score == pytest.approx(hits[0].similarity)  # rate 1, recency 1
        assert hits[1].score < hits[1].similarity * 0.5  # rate 0.5 and 45 days old
    finally:
        skills.close()


def test_a_hint_is_a_sentence_for_the_prompt(skills: SkillLibrary) -> None:
    skill = skills.record("acme", DOMAIN, "Add a new patient", FAILED, WORKED)
    assert skill.hint() == (
        "Last time 'click(68)' (Patient menu) failed for 'Add a new patient'; "
        "'click(79)' (New/Search) worked (1 of 1 times)."
    )
    with pytest.raises(ValueError, match="goal"):
        skills.record("acme", DOMAIN, "  ", FAILED, WORKED)
