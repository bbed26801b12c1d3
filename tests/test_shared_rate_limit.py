"""A key's rate limit holds across API processes when they share Redis (LORE_REDIS_URL), and a
Redis outage degrades to per-process limits with a warning instead of failing requests.

Real Redis and PostgreSQL on 127.0.0.1 (skipped with the reason where they do not run), two
`lore serve` processes on one PostgreSQL catalog. The servers embed with the deterministic hash
embedder: nothing here searches, and the real model would only make them slower to start."""

from __future__ import annotations

import logging
import os
import secrets
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from api.auth import Authenticator
from api.ratelimit import LocalRateLimiter, RedisRateLimiter
from retrieval import Catalog
from tests.conftest import free_port, lore_server, redis_url

LIMIT = 6


def test_two_api_processes_draw_from_one_bucket_per_key(
    scratch_postgres: str, tmp_path: Path
) -> None:
    redis = redis_url()
    if redis is None:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (or the redis package is missing)")
    catalog = Catalog(scratch_postgres)
    try:
        key, _ = Authenticator(catalog, 600).create_key("acme", "shared", rate_limit=LIMIT)
        other, _ = Authenticator(catalog, 600).create_key("acme", "unlimited")
    finally:
        catalog.close()
    with ExitStack() as stack:
        urls = []
        for i in range(2):
            env = {
                **os.environ,
                "LORE_DATA_DIR": str(tmp_path / f"api{i}"),
                "LORE_DATABASE_URL": scratch_postgres,
                "LORE_REDIS_URL": redis,
                "LORE_EMBEDDING__BACKEND": "hash",
            }
            url, _ = stack.enter_context(lore_server(env, tmp_path / f"api{i}.log"))
            urls.append(url)
        answers = [
            httpx.get(
                f"{urls[i % 2]}/knowledge/documents",
                headers={"Authorization": f"Bearer {key}"},
                timeout=10,
            )
            for i in range(2 * LIMIT)
        ]
        codes = [a.status_code for a in answers]
        # One bucket of 6: each process alone would have let all 12 through.
        assert codes.count(200) == LIMIT, codes
        assert codes[:LIMIT] == [200] * LIMIT, codes
        limited = answers[-1]
        assert limited.json()["error"] == "rate_limited"
        assert int(limited.headers["Retry-After"]) >= 1
        for url in urls:  # another key has a bucket of its own
            answer = httpx.get(
                f"{url}/knowledge/documents", headers={"Authorization": f"Bearer {other}"}
            )
            assert answer.status_code == 200


def test_two_clients_draw_from_one_bucket_in_redis() -> None:
    redis = redis_url()
    if redis is None:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (or the redis package is missing)")
    first, second = RedisRateLimiter(redis), RedisRateLimiter(redis)
    bucket = f"test-{secrets.token_hex(6)}"
    try:
        assert first.take(bucket, 2) == 0.0
        assert second.take(bucket, 2) == 0.0
        wait = first.take(bucket, 2)
        assert 0 < wait <= 30.0  # 2 per minute: a token every 30 s
        assert second.take(bucket, 2) > 0
    finally:
        first.close()
        second.close()


def test_without_redis_each_process_counts_its_own_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # nothing listens there; the password must not reach the log
    limiter = RedisRateLimiter(f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    script = limiter._script
    tries = []

    def counted(**kwargs: object) -> object:
        tries.append(1)
        return script(**kwargs)

    limiter._script = counted  # type: ignore[assignment]
    caplog.set_level(logging.WARNING, logger="api.ratelimit")
    try:
        waits = [limiter.take("k", 3) for _ in range(4)]
    finally:
        limiter.close()
    assert waits[:3] == [0.0, 0.0, 0.0] and waits[3] > 0  # the local bucket still limits
    assert len(tries) == 1  # Redis is not asked again for RETRY_S: an outage costs one wait
    warnings = [r.getMessage() for r in caplog.records if "does not answer" in r.getMessage()]
    assert len(warnings) == 1, warnings  # once, not per request
    assert "hunter2" not in warnings[0] and ":***@127.0.0.1" in warnings[0]


def test_the_local_limiter_refills_with_time(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("api.ratelimit.time.monotonic", lambda: now[0])
    limiter = LocalRateLimiter()
    assert [limiter.take("k", 60) == 0.0 for _ in range(60)] == [True] * 60
    assert limiter.take("k", 60) == pytest.approx(1.0)
    now[0] += 1.0  # one token a second
    assert limiter.take("k", 60) == 0.0
    assert limiter.take("other", 60) == 0.0
