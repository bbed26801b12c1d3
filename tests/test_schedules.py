"""Scheduled re-crawls: a schedule made through the API queues its first job, later runs find
the pages unchanged (with the schedule's login), a run is made by one process only and skipped
while the previous job has not finished, and deleting a schedule forgets its login."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from fastapi.testclient import TestClient

from api import Lore
from api.jobs import make_due_jobs
from retrieval import Catalog, utcnow
from tests.conftest import Page, Site, wait_for_job

LOGIN = {"X-Api-Token": "sched-77-secret"}


def page(title: str, text: str, links: tuple[str, ...] = ()) -> Page:
    anchors = "".join(f'<a href="{href}">{href}</a> ' for href in links)
    body = (
        f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p>"
        f"<p>{text} It is explained here at length.</p><nav>{anchors}</nav></main></body></html>"
    ).encode()
    return Page(body, require=dict(LOGIN))


def test_a_schedule_recrawls_with_its_login_and_can_be_deleted(
    make_client: Callable[..., TestClient], site: Site
) -> None:
    client = make_client(schedule_poll_s=0.1)
    lore: Lore = client.app.state.lore  # type: ignore[attr-defined]
    site.pages["/"] = page("Garden", "Tomatoes need sun for eight hours a day.", ("/soil",))
    site.pages["/soil"] = page("Soil", "Compost keeps the soil loose and rich.")
    body = {
        "intervalMinutes": 60,
        "indexLink": {
            "url": site.url("/"),
            "strategy": "spider",
            "maxPages": 10,
            "headers": LOGIN,
            "metadata": {"source": "garden"},
        },
    }
    response = client.post("/knowledge/schedules", json=body)
    assert response.status_code == 201, response.text
    schedule = response.json()
    assert schedule["request"]["login"] == {"headers": ["X-Api-Token"], "cookies": []}
    assert "sched-77" not in response.text

    deadline = time.monotonic() + 20  # the scheduler queues the first run at once
    while not (last := client.get(f"/knowledge/schedules/{schedule['id']}").json())["lastJobId"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    first = wait_for_job(client, last["lastJobId"])
    assert first["status"] == "completed" and first["counts"]["ingested"] == 2, first  # type: ignore[index]
    assert first["request"]["scheduleId"] == schedule["id"]  # type: ignore[index]
    assert "sched-77" not in client.get("/knowledge/jobs").text
    due = last["nextRunAt"]
    interval = _parse(due) - _parse(schedule["createdAt"])
    assert timedelta(minutes=59) < interval <= timedelta(minutes=61)

    # An hour later: the second run sends the login again and finds nothing changed.
    [second] = make_due_jobs(lore, _parse(due) + timedelta(seconds=1))
    assert make_due_jobs(lore, _parse(due) + timedelta(seconds=1)) == []  # made once
    done = wait_for_job(client, second.id)
    assert done["counts"]["unchanged"] == 2 and done["counts"]["failed"] == 0, done  # type: ignore[index]
    hits = client.post(
        "/knowledge/query",
        json={"query": "compost soil", "metadata": {"source": "garden"}},
    ).json()["chunks"]
    assert hits and "Compost" in hits[0]["text"]

    # Another tenant sees none of it.
    auth = client.app.state.auth  # type: ignore[attr-defined]
    other, _ = auth.create_key("other-tenant", "test")
    headers = {"Authorization": f"Bearer {other}"}
    assert client.get("/knowledge/schedules", headers=headers).json() == {"schedules": []}
    assert (
        client.delete(f"/knowledge/schedules/{schedule['id']}", headers=headers).status_code == 404
    )

    assert client.delete(f"/knowledge/schedules/{schedule['id']}").status_code == 204
    assert client.get(f"/knowledge/schedules/{schedule['id']}").status_code == 404
    assert client.get("/knowledge/schedules").json() == {"schedules": []}
    assert lore.catalog.secrets(schedule["id"]) == {}


def test_bad_schedules_are_refused(make_client: Callable[..., TestClient], site: Site) -> None:
    client = make_client()
    link = {"url": site.url("/")}
    for body, word in [
        ({"intervalMinutes": 1, "indexLink": link}, "intervalMinutes"),
        ({"intervalMinutes": 60}, "indexLink"),
        ({"intervalMinutes": 60, "indexLink": {"url": "ftp://x.test/"}}, "ftp"),
        ({"intervalMinutes": 60, "indexLink": link, "runNow": "yes"}, "runNow"),
    ]:
        response = client.post("/knowledge/schedules", json=body)
        assert response.status_code == 422, (body, response.text)
        assert word in response.json()["message"], response.json()
    assert client.get("/knowledge/schedules/nope").status_code == 404


def test_a_run_is_made_by_one_process_only(catalog: Catalog) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    made = catalog.create_schedule(tenant, "index-link", {"url": "https://a.test/"}, 300, utcnow())
    try:
        [seen_by_a] = [s for s in catalog.due_schedules(utcnow()) if s.id == made.id]
        [seen_by_b] = [s for s in catalog.due_schedules(utcnow()) if s.id == made.id]
        later = utcnow() + timedelta(seconds=300)
        assert catalog.advance_schedule(seen_by_a, later) is True
        assert catalog.advance_schedule(seen_by_b, later) is False
        assert made.id not in {s.id for s in catalog.due_schedules(utcnow())}
    finally:
        catalog.delete_schedule(made.id, tenant)


def test_a_run_is_skipped_while_the_previous_job_runs(tmp_path: Path) -> None:
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    lore = cast(Any, SimpleNamespace(catalog=catalog))
    start = utcnow()
    schedule = catalog.create_schedule(
        "t", "index-link", {"url": "https://a.test/"}, 600, start, {"headers": LOGIN}
    )
    [first] = make_due_jobs(lore, start)
    assert first.request["scheduleId"] == schedule.id
    assert catalog.secrets(first.id) == {"headers": LOGIN}  # each job gets the login

    # Ten minutes later the first job still runs: no second one, the schedule moves on.
    assert make_due_jobs(lore, start + timedelta(minutes=10)) == []
    assert catalog.get_schedule(schedule.id).next_run_at == start + timedelta(minutes=20)
    catalog.update_job(first.id, status="completed")
    # Hours later (no server ran): one run now, the next a whole interval away.
    now = start + timedelta(hours=5)
    [second] = make_due_jobs(lore, now)
    assert catalog.get_schedule(schedule.id).last_job_id == second.id
    assert catalog.get_schedule(schedule.id).next_run_at == now + timedelta(minutes=10)
    catalog.close()


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
