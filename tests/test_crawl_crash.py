"""A crawl survives SIGKILL: the server process is killed mid-crawl, started again on the same
data directory, resumes the job, and ends with exactly the chunks an uninterrupted crawl makes.
Embeddings come from the deterministic hash embedder (chunk ids do not depend on the model, and
the real one would only make the test slower); the server, engine and catalog are real."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from api import Lore, Settings
from api.jobs import run_job
from retrieval import ChunkFilter
from tests.conftest import AUTH, Page, Site, lore_server

pytestmark = pytest.mark.slow

PAGES = 300


def build_site(site: Site) -> None:
    site.pages["/"] = Page(
        b"<html><body><h1>Index</h1>"
        + "".join(f'<a href="/p{n}">Topic {n}</a>' for n in range(PAGES)).encode()
        + b"</body></html>"
    )
    for n in range(PAGES):
        text = " ".join(f"Topic {n} fact {k}: value {n * 7 + k}." for k in range(12))
        site.pages[f"/p{n}"] = Page(
            f"<html><head><title>Topic {n}</title></head><body><main><h1>Topic {n}</h1>"
            f"<h2>Facts</h2><p>{text}</p><h2>More</h2><p>{text[::-1]}</p>"
            f'<a href="/p{(n + 1) % PAGES}">next</a></main></body></html>'.encode(),
            delay_s=0.02,
        )


def environment(data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "LORE_DATA_DIR": str(data_dir),
        "LORE_EMBEDDING__BACKEND": "hash",
        "LORE_FETCH__ALLOW_PRIVATE_ADDRESSES": "true",
        "LORE_CRAWL__MAX_CONCURRENCY": "4",
    }


def chunk_ids(data_dir: Path) -> set[str]:
    lore = Lore(Settings(data_dir=data_dir, embedding={"backend": "hash"}))  # type: ignore[arg-type]
    try:
        return lore.store.ids_where(ChunkFilter(tenant_ids=("default",)))
    finally:
        lore.close()


def reference_chunk_ids(url: str, data_dir: Path) -> set[str]:
    """The chunk ids of a spider crawl of `url` (the built site), uninterrupted, in this process
    with the embedded default."""
    lore = Lore(Settings(**environment_settings(data_dir)))  # type: ignore[arg-type]
    try:
        job = lore.submit_link(url, "spider", max_pages=1000, max_depth=3)
        done = asyncio.run(run_job(lore, job.id))
        assert done.status == "completed" and done.counts["ingested"] == PAGES + 1
    finally:
        lore.close()
    return chunk_ids(data_dir)


def job_view(url: str, job_id: str) -> dict[str, object]:
    body: dict[str, object] = httpx.get(
        f"{url}/knowledge/jobs/{job_id}", headers=AUTH, timeout=5
    ).json()
    return body


def test_a_killed_crawl_resumes_without_losing_or_duplicating_chunks(
    site: Site, tmp_path: Path
) -> None:
    build_site(site)
    request = {"url": site.url("/"), "strategy": "spider", "maxPages": 1000, "maxDepth": 3}

    expected = reference_chunk_ids(request["url"], tmp_path / "reference")
    assert len(expected) > 2 * PAGES

    site.requests.clear()
    data_dir = tmp_path / "killed"
    env = environment(data_dir)
    with lore_server(env) as (url, proc):
        job_id = httpx.post(f"{url}/knowledge/index-link", headers=AUTH, json=request).json()[
            "jobId"
        ]
        deadline = time.monotonic() + 120
        while job_view(url, job_id)["counts"].get("ingested", 0) < 60:  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the crawl made no progress"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert len(site.requests) < PAGES  # it really was mid-crawl

    with lore_server(env) as (url, _):
        deadline = time.monotonic() + 180
        while (view := job_view(url, job_id))["status"] not in ("completed", "failed"):
            assert time.monotonic() < deadline, view
            time.sleep(0.2)
        assert view["status"] == "completed", view
        counts = view["counts"]
        others = httpx.get(
            f"{url}/knowledge/jobs/{job_id}/urls",
            headers=AUTH,
            params={"state": ["unchanged", "skipped", "failed", "pending"]},
        ).json()["urls"]
        # Every page ends stored. A page indexed just before the kill, whose URL state had not
        # been written yet, is fetched again and found `unchanged` (same body already stored):
        # at most one per request in flight.
        assert counts["ingested"] + counts["unchanged"] == PAGES + 1, (counts, others)  # type: ignore[index,operator]
        assert counts["unchanged"] <= 4, (counts, others)  # type: ignore[index,operator]
        assert counts["failed"] == 0 and counts["pending"] == 0, counts  # type: ignore[index]
        # The counters are the job's, not the second process's: every page once.
        assert counts["fetched"] == PAGES + 1, counts  # type: ignore[index]
        assert counts["chunks"] == len(expected), counts  # type: ignore[index]
        docs = httpx.get(f"{url}/knowledge/documents", headers=AUTH).json()
        assert docs["total"] == PAGES + 1
    assert chunk_ids(data_dir) == expected


def environment_settings(data_dir: Path) -> dict[str, object]:
    return {
        "data_dir": data_dir,
        "embedding": {"backend": "hash"},
        "fetch": {"allow_private_addresses": True},
        "crawl": {"max_concurrency": 4},
    }
