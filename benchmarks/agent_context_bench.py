"""/agent/context latency with 100,000 chunks and 10,000 skills (target p95 <= 60 ms here).

    .venv/bin/python benchmarks/agent_context_bench.py [--pages 200] [--scale 100000]
        [--skills 10000] [--queries 300]

Indexes real pages and fills the store with perturbed copies as resolve_bench does, records
`--skills` skills for the tenant (goals made of sentences of the pages, their vectors embedded
in batches; 1 in 4 on the queries' domain, the rest spread over 19 others), then times the call
with a query and a goal (two embeddings, the chunk search, the skill search, the site model)
in-process and over HTTP against a real uvicorn server on 127.0.0.1; then runs the example
agent loop (examples/agent_loop.py) against that server and prints its outcome.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from _common import default_corpus, summary_ms
from resolve_bench import DOMAINS, build, fill

from api import Lore, Settings, create_app
from api.app import serve_in_thread
from api.auth import Authenticator
from retrieval import ChunkFilter
from retrieval.skills import FailedState, Skill, SuccessfulAction, skill_id


def add_skills(lore: Lore, count: int, goals: list[str], home: str, rng: random.Random) -> None:
    now = datetime.now(UTC)
    batch = 256
    for start in range(0, count, batch):
        texts = [rng.choice(goals) + f" ({n})" for n in range(start, min(count, start + batch))]
        vectors = lore.embedder.embed(texts, batch_size=64)
        for n, (goal, vector) in enumerate(zip(texts, vectors, strict=True), start):
            domain = home if n % 4 == 0 else rng.choice(DOMAINS)
            failed = FailedState(f"click({n})", "a menu entry", "wrong_element")
            used = now - timedelta(days=rng.uniform(0, 80))
            skill = Skill(
                skill_id(lore.tenant, domain, goal, failed),
                lore.tenant,
                domain,
                goal,
                failed,
                SuccessfulAction(f"click({n + 1})", "the right entry"),
                rng.randint(1, 9),
                rng.randint(0, 4),
                used,
                used,
            )
            lore.skills.index.put(skill, vector)


def _example() -> Any:
    path = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"
    spec = importlib.util.spec_from_file_location("agent_loop", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent_loop"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=8)
    args = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        lore = Lore(Settings(data_dir=Path(tmp)))
        t = time.perf_counter()
        build(lore, args.corpus, args.pages)
        chunks = lore.store.scroll(ChunkFilter(tenant_ids=(lore.tenant,)), 10**6)
        fill(lore, args.scale, rng)
        sample = rng.sample(chunks, min(args.queries, len(chunks)))
        queries = [(c.url, " ".join(c.text.split()[:12])) for c in sample]
        home = sample[0].domain
        goals = [" ".join(c.text.split()[:8]) for c in chunks]
        add_skills(lore, args.skills, goals, home, rng)
        print(
            f"loaded {lore.store.count(ChunkFilter(include_superseded=True))} chunks and "
            f"{lore.skills.index.count(lore.tenant)} skills in {time.perf_counter() - t:.0f} s; "
            f"embedding: {lore.embedder.name}"
        )
        calls = [(url, text, rng.choice(goals)) for url, text in queries]
        lore.agent_context(*calls[0])  # warm-up
        timings, with_skills = [], 0
        for url, query, goal in calls:
            t = time.perf_counter()
            context = lore.agent_context(url, query, goal, args.k)
            timings.append(time.perf_counter() - t)
            with_skills += bool(context.skills)
        print(f"agent context in-process: {summary_ms(timings)}")
        print(f"  calls that returned skill hints: {with_skills} of {len(calls)}")

        url, server = serve_in_thread(create_app(lore.settings, lore=lore))
        port = int(url.rsplit(":", 1)[1])
        timings = []
        # The key's own limit (a million a minute) keeps the rate limiter out of the timing.
        auth = Authenticator(lore.catalog, 600)
        key, _ = auth.create_key(lore.tenant, "bench", rate_limit=10**6)
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30
        ) as client:
            for url, query, goal in calls:
                body = {"url": url, "query": query, "goal": goal, "k": args.k}
                t = time.perf_counter()
                client.post("/agent/context", json=body).raise_for_status()
                timings.append(time.perf_counter() - t)
        print(f"agent context over HTTP:  {summary_ms(timings)}")
        if shutil.which("chromium") or Path("/usr/bin/chromium").exists():
            example = _example()
            first, second = asyncio.run(example.main(f"http://127.0.0.1:{port}", key))
            print("example agent loop (examples/agent_loop.py, deterministic policy):")
            example.report(first, second)
        else:
            print("example agent loop skipped: no Chromium (apt-get install -y chromium)")
        server.should_exit = True
        lore.close()


if __name__ == "__main__":
    main()
