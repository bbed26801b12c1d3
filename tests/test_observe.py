"""What an operator sees, through the HTTP API with the real model and engine: /metrics adds up
to what a crawl, queries and skills did; every answer and log line carries a request id, a bug's
500 too; and `explain` says how each chunk's score was made."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from api import Lore
from api.observe import JsonFormatter, RequestIdFilter, SkillTally
from tests.conftest import Page, Site, wait_for_job

TOPICS = {
    "/tea": ("Tea", "Green tea steeps for two minutes at eighty degrees."),
    "/bread": ("Bread", "Sourdough bread rises overnight in a cool kitchen."),
    "/bikes": ("Bikes", "Bicycle chains want oil every few hundred kilometres."),
}


def article(title: str, text: str, links: tuple[str, ...] = ()) -> Page:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    return Page(
        f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p>"
        f"<p>{text} Here is more about it.</p><nav>{anchors}</nav></main></body></html>".encode()
    )


def samples(client: TestClient) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = client.get("/metrics", headers={"Authorization": ""})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def value(
    found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def test_metrics_add_up_to_a_crawl_queries_and_skills(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    lore: Lore = client.app.state.lore  # type: ignore[attr-defined]
    site.pages["/"] = article("Home", "Three topics and a broken link.", (*TOPICS, "/gone"))
    for path, (title, text) in TOPICS.items():
        site.pages[path] = article(title, text)
    response = client.post(
        "/knowledge/index-link", json={"url": site.url("/"), "strategy": "spider", "maxPages": 10}
    )
    job = wait_for_job(client, response.json()["jobId"])
    counts = job["counts"]
    assert job["status"] == "completed" and counts["failed"] == 1, job  # type: ignore[index]
    for query in ("green tea", "bread", "bicycle chain oil"):
        assert client.post("/knowledge/query", json={"query": query}).status_code == 200
    page = site.url("/bikes")
    context = {"url": page, "goal": "oil the bicycle chain"}
    assert client.post("/agent/context", json=context).json()["skills"] == []  # a lookup, no hit
    skill = client.post(
        "/skills",
        json={
            "url": page,
            "goal": "oil the bicycle chain",
            "failedState": {"action": "click(3)"},
            "successfulAction": {"action": "click(4)"},
        },
    ).json()
    assert client.post("/agent/context", json=context).json()["skills"]  # a hit
    for success in (True, False):
        client.post(f"/skills/{skill['id']}/outcome", json={"success": success})
    lore.kpis.flush(lore)  # what the app does every LORE_SKILL_KPI_FLUSH_S

    found = samples(client)
    query = {"method": "POST", "route": "/knowledge/query"}
    assert value(found, "lore_http_requests_total", **query, status="200") == 3
    assert value(found, "lore_http_request_duration_seconds_count", **query) == 3
    assert value(found, "lore_jobs", kind="index-link", status="completed") == 1
    for state in ("ingested", "unchanged", "skipped"):
        reasons = [v for (n, labels), v in found.items() if n == "lore_job_urls_total"
                   and ("state", state) in labels]  # fmt: skip
        assert sum(reasons) == counts[state], state  # type: ignore[index]
    assert value(found, "lore_job_urls_total", state="failed", reason="http_404") == 1
    assert value(found, "lore_job_embedded_chunks_total") == counts["embedded"]  # type: ignore[index]
    assert value(found, "lore_documents") == counts["ingested"]  # type: ignore[index]
    assert value(found, "lore_chunks") == counts["chunks"]  # type: ignore[index]
    assert value(found, "lore_queue_depth", what="jobs") == 0
    assert value(found, "lore_skill_lookups_total") == 2
    assert value(found, "lore_skill_hits_total") == 1
    assert value(found, "lore_skill_outcomes_total", result="failure") == 1
    assert value(found, "lore_skill_hit_rate") == 0.5
    assert value(found, "lore_skill_effectiveness") == 0.5


@pytest.fixture
def logged() -> Iterator[list[str]]:
    """Lines as `lore serve --log-format json` writes them (the handler configure_logging
    installs), for the api loggers."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Keep()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("api")
    logger.addHandler(handler)
    yield lines
    logger.removeHandler(handler)


def test_every_answer_and_log_line_carries_the_request_id(
    make_client: Callable[..., TestClient], logged: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    client = make_client()
    lore: Lore = client.app.state.lore  # type: ignore[attr-defined]
    ok = client.get("/knowledge/documents")
    assert len(ok.headers["x-request-id"]) == 16
    given = client.get("/knowledge/documents", headers={"X-Request-Id": "agent-step-42"})
    assert given.headers["x-request-id"] == "agent-step-42"
    odd = client.get("/knowledge/documents", headers={"X-Request-Id": "not ok; <script>"})
    assert len(odd.headers["x-request-id"]) == 16  # not a token: a new one instead

    missing = client.get("/knowledge/jobs/nope", headers={"X-Request-Id": "r-404"})
    assert missing.status_code == 404 and missing.json()["requestId"] == "r-404"

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a bug in the ranking")

    monkeypatch.setattr(type(lore), "query", broken)
    failed = client.post("/knowledge/query", json={"query": "x"}, headers={"X-Request-Id": "r-500"})
    assert failed.status_code == 500 and failed.headers["x-request-id"] == "r-500"
    body = failed.json()
    assert body["error"] == "internal_error" and body["requestId"] == "r-500"
    assert "a bug in the ranking" not in failed.text  # the log has it, not the caller
    [line] = [json.loads(x) for x in logged if "r-500" in x]
    assert line["level"] == "ERROR" and "a bug in the ranking" in line["error"]


def test_explain_says_how_each_score_was_made(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client()
    for path, (title, text) in TOPICS.items():
        site.pages[path] = article(title, text)
    site.pages["/kettle"] = article("Descaling a kettle", "Boil vinegar and water in it.")
    urls = [site.url(p) for p in [*TOPICS, "/kettle"]]
    wait_for_job(client, client.post("/knowledge/index-link", json={"urls": urls}).json()["jobId"])
    body = {"query": "Sourdough bread rises overnight in a cool kitchen", "k": 3, "explain": True}
    chunks = client.post("/knowledge/query", json=body).json()["chunks"]
    assert chunks and "Sourdough" in chunks[0]["text"]
    for chunk in chunks:
        why = chunk["explain"]
        assert why["score"] == pytest.approx(chunk["score"])
        factors = why["fused"] * why["freshness"] * why["phrase"] * why["section"]
        assert why["score"] == pytest.approx(factors, rel=1e-6)
        assert -1.0 <= why["dense"] <= 1.0 and why["lexical"] >= 0.0
    top, rest = chunks[0]["explain"], [c["explain"] for c in chunks[1:]]
    assert top["lexical"] > 0 and all(top["lexical"] > r["lexical"] for r in rest)
    assert all(top["dense"] > r["dense"] for r in rest)
    assert top["phrase"] == pytest.approx(2.0)  # the query quotes it whole: boost 1 x share 1
    assert all(c["explain"]["section"] == 1.0 for c in chunks)  # it names no section
    # A query that names a page's section (its heading, 3 words or more): boost 0.3.
    named = {**body, "query": "how long is descaling a kettle?"}
    kettle = client.post("/knowledge/query", json=named).json()["chunks"][0]
    assert "vinegar" in kettle["text"] and kettle["explain"]["section"] == pytest.approx(1.3)
    # In one retriever's mode the engine's score is that retriever's: explain finds it again.
    for mode, retriever in (("sparse", "lexical"), ("dense", "dense")):
        alone = client.post("/knowledge/query", json={**body, "mode": mode}).json()["chunks"]
        for chunk in alone:
            why = chunk["explain"]
            assert why["fused"] == pytest.approx(why[retriever], rel=1e-4), (mode, why)
    plain = client.post("/knowledge/query", json={**body, "explain": False}).json()["chunks"]
    assert [c["id"] for c in plain] == [c["id"] for c in chunks] and plain[0]["explain"] is None


def test_reading_the_kpis_waits_for_the_counts_a_timed_flush_is_writing() -> None:
    """GET /skills/kpis flushes before it reads. When the timer's flush had just taken the
    counts and was still writing them, the reader's flush found nothing to write and the page
    showed "0 lookups" (the console's test, beside other work). A flush now waits for the one
    in progress."""
    started, release = threading.Event(), threading.Event()
    written: list[object] = []

    class SlowCatalog:
        def add_skill_stats(self, stat: object) -> None:
            started.set()
            release.wait(10)
            written.append(stat)

    lore = SimpleNamespace(catalog=SlowCatalog())
    tally = SkillTally()
    tally.lookup("acme", found=True)
    timer = threading.Thread(target=tally.flush, args=(lore,))
    timer.start()
    assert started.wait(10)
    reader = threading.Thread(target=tally.flush, args=(lore,))
    reader.start()
    reader.join(0.5)
    assert reader.is_alive(), "the reader's flush returned before the counts were written"
    release.set()
    timer.join(10)
    reader.join(10)
    assert not reader.is_alive() and len(written) == 1
