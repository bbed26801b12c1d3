"""The worker tier on the real server stack: two `lore serve` API instances and three `lore
worker`s share one crawl through PostgreSQL (scratch database), RabbitMQ (a queue of this
test's own) and one Qdrant REST endpoint.

No Qdrant server runs on these machines: the vectors go to the TEST-ONLY stand-in that serves
Qdrant's REST routes from qdrant-client's in-process engine (tests/qdrant_standin.py), through
the same qdrant-client code path as a real server; with `LORE_TEST_QDRANT_URL` set the same
tests run against a real Qdrant server. The processes embed with the deterministic hash
embedder (chunk ids do not depend on the embedder; the real model would only make five
processes slower to start)."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from qdrant_client import QdrantClient

from api import Lore, Settings
from api.jobs.tier import give_up
from retrieval import Catalog, CrawlUrl
from tests.conftest import AUTH, Site, free_port, lore_server, rabbitmq_url
from tests.test_crawl_crash import (
    PAGES,
    build_site,
    environment_settings,
    job_view,
    reference_chunk_ids,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


@pytest.fixture
def rabbitmq() -> str:
    url = rabbitmq_url()
    if url is None:
        pytest.skip("RabbitMQ is not running on 127.0.0.1:5672 (or pika is missing)")
    return url


def tier_environment(
    tmp_path: Path, name: str, database: str, qdrant: str, queue: str, tag: str
) -> dict[str, str]:
    return {
        **os.environ,
        "LORE_DATA_DIR": str(tmp_path / name),
        "LORE_DATABASE_URL": database,
        "LORE_QDRANT__URL": qdrant,
        "LORE_QDRANT__COLLECTION": f"chunks_{tag}",
        "LORE_SKILLS__BACKEND": "embedded",
        "LORE_QUEUE__URL": queue,
        "LORE_QUEUE__NAME": f"lore-test-{tag}",
        "LORE_QUEUE__POLL_S": "0.5",
        "LORE_EMBEDDING__BACKEND": "hash",
        "LORE_FETCH__ALLOW_PRIVATE_ADDRESSES": "true",
        "LORE_CRAWL__MAX_CONCURRENCY": "4",
    }


@contextmanager
def lore_worker(env: dict[str, str], output: Path) -> Iterator[subprocess.Popen[str]]:
    """`lore worker` in its own process; killed (if still running) when the block ends."""
    with output.open("a") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "worker"],
            env=env,
            stdout=sink,
            stderr=sink,
            text=True,
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)


def stored_ids(qdrant: str, collection: str) -> list[str]:
    client = QdrantClient(url=qdrant, check_compatibility=False)
    ids: list[str] = []
    offset = None
    try:
        while True:
            records, offset = client.scroll(collection, limit=500, offset=offset)
            ids += [str(r.id) for r in records]
            if offset is None:
                return ids
    finally:
        client.close()


def wait_until(check: object, what: str, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_workers_share_one_crawl_and_lose_nothing_when_killed(
    site: Site, tmp_path: Path, scratch_postgres: str, qdrant_url: str, rabbitmq: str
) -> None:
    build_site(site)
    request = {"url": site.url("/"), "strategy": "spider", "maxPages": 1000, "maxDepth": 3}
    expected = reference_chunk_ids(request["url"], tmp_path / "reference")  # one process
    site.requests.clear()

    tag = secrets.token_hex(4)

    def env(name: str) -> dict[str, str]:
        return tier_environment(tmp_path, name, scratch_postgres, qdrant_url, rabbitmq, tag)

    request["webhook"] = {"url": site.url("/hook")}  # type: ignore[assignment]
    catalog = Catalog(scratch_postgres)
    with ExitStack() as stack:
        apis = [
            stack.enter_context(lore_server(env(f"api{i}"), tmp_path / f"api{i}.log"))
            for i in range(2)
        ]
        workers = [
            stack.enter_context(lore_worker(env(f"worker{i}"), tmp_path / f"worker{i}.log"))
            for i in range(3)
        ]
        (first, first_proc), (second, _) = apis
        answer = httpx.post(f"{first}/knowledge/index-link", headers=AUTH, json=request)
        assert answer.status_code == 202, answer.text
        job_id = answer.json()["jobId"]

        def ingested() -> int:
            return int(job_view(second, job_id)["counts"].get("ingested", 0))  # type: ignore[attr-defined]

        wait_until(lambda: ingested() >= 40, "the workers stored no pages")
        # An API instance restarts mid-job: it holds no job state, the job goes on.
        first_proc.send_signal(signal.SIGTERM)
        first_proc.wait(timeout=10)

        # kill -9 the worker that runs the job (it fetches, and stores pages too).
        owner = catalog.get_job(job_id).claimed_by or ""
        pid = int(owner.split(":")[1])
        victim = next(w for w in workers if w.pid == pid)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=10)
        # Another worker is told to stop mid-crawl: it exits within 10 s, without a traceback.
        polite = next(w for w in reversed(workers) if w is not victim)
        stopped_at = workers.index(polite)
        started = time.monotonic()
        polite.send_signal(signal.SIGTERM)
        assert polite.wait(timeout=10) == 0
        assert time.monotonic() - started < 10
        assert ingested() < PAGES + 1, "the crawl ended before the workers were stopped"

        # One worker is left, and one joins.
        stack.enter_context(lore_worker(env("worker3"), tmp_path / "worker3.log"))
        stack.enter_context(lore_server(env("api0"), tmp_path / "api0.log"))

        def finished() -> bool:
            return job_view(second, job_id)["status"] in ("completed", "failed", "cancelled")

        wait_until(finished, "the crawl did not finish after its worker was killed", 240)
        view = job_view(second, job_id)
        assert view["status"] == "completed", view
        counts = view["counts"]
        assert counts["ingested"] == PAGES + 1, counts  # type: ignore[index]
        assert counts["queued"] == counts["pending"] == 0, counts  # type: ignore[index]
        wait_until(lambda: len(site.posts) >= 1, "no webhook", 30)
        time.sleep(1.0)
        assert [p.path for p in site.posts] == ["/hook"]  # sent once

    catalog.close()
    stored = stored_ids(qdrant_url, f"chunks_{tag}")
    assert len(stored) == len(set(stored))
    assert set(stored) == expected  # the same chunks as one process, none twice
    log = (tmp_path / f"worker{stopped_at}.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    assert "stopping" in log
    for i in (0, 1):
        assert "Traceback" not in (tmp_path / f"api{i}.log").read_text()


def run_worker_briefly(env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "api.cli", "worker"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, " ".join((done.stdout + done.stderr).split())


def test_a_worker_without_the_services_it_shares_says_which(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "LORE_DATA_DIR": str(tmp_path),
        "LORE_QUEUE__URL": "amqp://guest:guest@127.0.0.1:5672/%2F",
    }
    code, out = run_worker_briefly(env)
    assert code == 2, out
    assert "LORE_DATABASE_URL (PostgreSQL)" in out and "LORE_QDRANT__URL" in out, out
    assert "Traceback" not in out
    env.pop("LORE_QUEUE__URL")
    code, out = run_worker_briefly(env)
    assert code == 2 and "set LORE_QUEUE__URL" in out, out
    assert "Traceback" not in out


def test_a_worker_says_at_once_when_the_queue_engine_does_not_answer(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "LORE_DATA_DIR": str(tmp_path),
        "LORE_DATABASE_URL": "postgresql+psycopg://lore@127.0.0.1:1/lore",
        "LORE_QDRANT__URL": "http://127.0.0.1:1",
        "LORE_QUEUE__URL": f"amqp://guest:hunter2@127.0.0.1:{free_port()}/%2F",
    }
    code, out = run_worker_briefly(env)
    assert code == 2, out
    assert "does not answer" in out and "hunter2" not in out and "Traceback" not in out, out


def test_a_page_that_fails_its_last_attempt_is_recorded_so_its_job_can_finish(
    tmp_path: Path,
) -> None:
    lore = Lore(Settings(**environment_settings(tmp_path / "data")))  # type: ignore[arg-type]
    try:
        job = lore.submit_link("https://docs.example.test/", "spider", max_pages=5, max_depth=1)
        urls = ["https://docs.example.test/a", "https://docs.example.test/b"]
        lore.catalog.add_crawl_urls(job.id, [CrawlUrl(u, 1, "queued") for u in urls])
        give_up(lore, {"job": job.id, "url": urls[0]}, TimeoutError("over its time limit"))
        give_up(lore, {"job": job.id, "url": "not in the job"}, ValueError("unreadable"))
        first = lore.catalog.get_crawl_url(job.id, urls[0])
        assert first is not None and first.state == "failed"
        assert first.reason == "error: TimeoutError: over its time limit"
        # an outcome a worker recorded is not overwritten by a later delivery's failure
        lore.catalog.set_crawl_url(job.id, urls[1], state="ingested", chunks=3)
        give_up(lore, {"job": job.id, "url": urls[1]}, RuntimeError("late"))
        second = lore.catalog.get_crawl_url(job.id, urls[1])
        assert second is not None and (second.state, second.chunks) == ("ingested", 3)
    finally:
        lore.close()
