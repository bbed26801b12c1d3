"""Jobs are claimed in the catalog by exactly one runner; a runner that is gone (its process
ended, or its heartbeat is old) loses its jobs to the next; a webhook is recorded once. Real
SQLite here and, where it runs, real PostgreSQL (the server stack's catalog)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from datetime import timedelta

from api.jobs.worker import runner_id, stale_claim
from retrieval import Catalog, utcnow


def dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    return int(proc.stdout)


def test_exactly_one_of_many_runners_claims_a_job(catalog: Catalog) -> None:
    job = catalog.create_job("t", "index-link", {"url": "http://example.test/"})
    owners = [runner_id() for _ in range(8)]
    won: list[str] = []
    barrier = threading.Barrier(len(owners))

    def claim(owner: str) -> None:
        barrier.wait()
        if catalog.claim_job(job.id, owner, stale_claim(30)) is not None:
            won.append(owner)

    threads = [threading.Thread(target=claim, args=(o,)) for o in owners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    assert catalog.get_job(job.id).claimed_by == won[0]
    # the winner may claim again (a resumed run); the others still may not
    assert catalog.claim_job(job.id, won[0], stale_claim(30)) is not None
    assert all(catalog.claim_job(job.id, o, stale_claim(30)) is None for o in owners if o != won[0])


def test_the_jobs_of_a_runner_that_is_gone_are_taken_over(catalog: Catalog) -> None:
    host = socket.gethostname()
    job = catalog.create_job("t", "index-link", {"url": "http://example.test/"})
    gone = f"{host}:{dead_pid()}:abcd"
    assert catalog.claim_job(job.id, gone) is not None
    # a process of this host that no longer runs: taken at once
    assert catalog.claim_job(job.id, runner_id(), stale_claim(30)) is not None

    other = catalog.create_job("t", "index-link", {"url": "http://example.test/b"})
    elsewhere = "another-host:1234:abcd"
    assert catalog.claim_job(other.id, elsewhere) is not None
    assert (
        catalog.claim_job(other.id, runner_id(), stale_claim(30)) is None
    )  # alive, for all we know
    later = stale_claim(30)
    old = catalog.get_job(other.id)
    assert old.heartbeat_at is not None
    assert not later(old)
    aged = type(old)(**{**old.__dict__, "heartbeat_at": utcnow() - timedelta(seconds=31)})
    assert later(aged)  # a heartbeat older than the TTL: gone


def test_a_clean_stop_releases_and_finished_jobs_are_never_claimed(catalog: Catalog) -> None:
    me = f"{socket.gethostname()}:{os.getpid()}:abcd"
    job = catalog.create_job("t", "index-link", {"url": "http://example.test/"})
    assert catalog.claim_job(job.id, me) is not None
    assert catalog.claim_job(job.id, "another-host:1:x", stale_claim(30)) is None
    catalog.release_jobs(me)
    assert catalog.claim_job(job.id, "another-host:1:x", stale_claim(30)) is not None
    catalog.update_job(job.id, status="completed")
    assert catalog.claim_job(job.id, "another-host:1:x", stale_claim(30)) is None


def test_a_webhook_is_recorded_once(catalog: Catalog) -> None:
    job = catalog.create_job("t", "index-link", {"url": "http://example.test/"})
    assert catalog.mark_notified(job.id) is True
    assert catalog.mark_notified(job.id) is False
