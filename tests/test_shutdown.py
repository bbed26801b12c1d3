"""`lore serve` stops cleanly mid-crawl: SIGTERM ends it (and its job process) within seconds,
without a traceback, the crawl's unfinished pages stay pending and are done after the next
start, nothing stored twice; a job process whose server was killed stops by itself. Real
server, engine and catalog; the deterministic hash embedder (chunk ids do not depend on it)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.conftest import AUTH, Site, lore_server
from tests.test_crawl_crash import PAGES, build_site, chunk_ids, environment, job_view

pytestmark = pytest.mark.slow


def start_crawl(url: str, site: Site, until_ingested: int) -> str:
    request = {"url": site.url("/"), "strategy": "spider", "maxPages": 1000, "maxDepth": 3}
    job_id: str = httpx.post(f"{url}/knowledge/index-link", headers=AUTH, json=request).json()[
        "jobId"
    ]
    deadline = time.monotonic() + 120
    while job_view(url, job_id)["counts"].get("ingested", 0) < until_ingested:  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "the crawl made no progress"
        time.sleep(0.05)
    return job_id


def test_sigterm_mid_crawl_stops_within_seconds_and_the_crawl_resumes(
    site: Site, tmp_path: Path
) -> None:
    build_site(site)
    data_dir = tmp_path / "data"
    env = environment(data_dir)
    output = tmp_path / "serve.log"
    with lore_server(env, output) as (url, proc):
        job_id = start_crawl(url, site, 40)
        family = psutil.Process(proc.pid).children(recursive=True)
        assert family, "the job process runs beside the server"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert time.monotonic() - started < 10
        _, alive = psutil.wait_procs(family, timeout=5)
        assert not alive, alive
    log = output.read_text()
    assert "Traceback" not in log and "Error" not in log, log[-3000:]
    assert "interrupted; it resumes at the next start" in log
    assert len(site.requests) < PAGES  # stopped mid-crawl

    with lore_server(env) as (url, _):
        view = job_view(url, job_id)
        assert view["status"] == "running" and view["counts"]["pending"] > 0, view  # type: ignore[index]
        deadline = time.monotonic() + 180
        while (view := job_view(url, job_id))["status"] != "completed":
            assert view["status"] == "running" and time.monotonic() < deadline, view
            time.sleep(0.2)
        counts = view["counts"]
        assert counts["ingested"] + counts["unchanged"] == PAGES + 1, counts  # type: ignore[index,operator]
        assert counts["fetched"] == PAGES + 1, counts  # type: ignore[index]
    stored = chunk_ids(data_dir)
    assert counts["chunks"] == len(stored) > 2 * PAGES, counts  # type: ignore[index]


def test_job_and_store_processes_stop_when_the_server_is_killed(site: Site, tmp_path: Path) -> None:
    build_site(site)
    env = environment(tmp_path / "data")
    with lore_server(env) as (url, proc):
        start_crawl(url, site, 20)
        family = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        _, alive = psutil.wait_procs(family, timeout=15)
        assert not alive, alive


def test_a_killed_job_process_is_started_again_and_finishes_the_crawl(
    site: Site, tmp_path: Path
) -> None:
    build_site(site)
    data_dir = tmp_path / "data"
    with lore_server(environment(data_dir)) as (url, proc):
        health = httpx.get(f"{url}/healthz").json()
        assert health["status"] == "ok" and health["jobs"]["mode"] == "process", health
        assert health["jobs"]["alive"] and health["jobs"]["restarts"] == 0, health
        job_id = start_crawl(url, site, 20)
        first = psutil.Process(health["jobs"]["pid"])
        first.kill()  # what the kernel's OOM killer does
        first.wait(timeout=10)
        deadline = time.monotonic() + 60
        while not (health := httpx.get(f"{url}/healthz").json())["jobs"]["restarts"]:
            assert time.monotonic() < deadline, health
            time.sleep(0.1)
        assert health["jobs"]["pid"] != first.pid, health
        deadline = time.monotonic() + 180
        while (view := job_view(url, job_id))["status"] != "completed":
            assert view["status"] == "running" and time.monotonic() < deadline, view
            time.sleep(0.2)
        health = httpx.get(f"{url}/healthz").json()
        assert health["status"] == "ok" and health["jobs"]["alive"], health
        assert proc.poll() is None  # the API served throughout
    counts = view["counts"]
    assert counts["ingested"] + counts["unchanged"] == PAGES + 1, counts  # type: ignore[index,operator]
    assert counts["chunks"] == len(chunk_ids(data_dir)), counts  # type: ignore[index]
