"""Does a crawl slow the agent down? /agent/context latency over HTTP, idle and during a crawl,
against `lore serve` as a user runs it (a process of its own, the embedded default).

    python benchmarks/agent_latency_under_crawl.py [--pages 100] [--scale 100000]
        [--crawl-pages 300] [--queries 200] [--interval 0.1] [--data-cache DIR]

The data directory is built first (as resolve_bench does: `--pages` real pages, filled to
`--scale` chunks with perturbed copies), then `lore serve` starts on it and a static server on
127.0.0.1 serves the crawled site (the Python docs from python3.11-doc). One client asks
/agent/context every `--interval` seconds, one call at a time (0.1: the load of ten agents that
each ask once a second, as an agent does between model calls, without overlapping; 0: one call
after another, the API never idle; concurrent calls are resolve_load.py's): `--queries`
calls idle, then as many as fit while a `--crawl-pages` spider crawl of the site runs.
`--data-cache DIR` keeps the prepared data directory there and starts later runs from a copy.
Prints p50/p95/max idle and during, the ratio of the p95s (target <= 1.5), the crawl's pages/s
and the peak resident memory of all of lore's processes together (sampled every 0.2 s).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx
from _common import percentile, summary_ms
from _served import Memory, add_data_options, lore_serve, prepared_data, site_process


def ask(client: httpx.Client, call: tuple, interval: float = 0.0) -> float:
    url, query, goal = call
    start = time.perf_counter()
    client.post("/agent/context", json={"url": url, "query": query, "goal": goal, "k": 8})
    took = time.perf_counter() - start
    time.sleep(max(0.0, interval - took))
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--crawl-pages", type=int, default=300)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        key, calls = prepared_data(data, args.corpus, args.pages, args.scale, args.data_cache)
        with site_process(args.corpus) as site, lore_serve(data) as (base, server):
            memory = Memory(server.pid)
            memory.start()
            with httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60
            ) as client:
                for call in calls[:20]:  # warm-up
                    ask(client, call)
                idle = [
                    ask(client, calls[i % len(calls)], args.interval) for i in range(args.queries)
                ]
                idle_peak = memory.peak
                job = client.post(
                    "/knowledge/index-link",
                    json={
                        "url": f"{site}/index.html",
                        "strategy": "spider",
                        "maxPages": args.crawl_pages,
                        "maxDepth": 10,
                    },
                ).json()["jobId"]
                started, during, i, status = time.monotonic(), [], 0, {}
                while True:
                    during.append(ask(client, calls[i % len(calls)], args.interval))
                    i += 1
                    if i % 10 == 0:
                        status = client.get(f"/knowledge/jobs/{job}").json()
                        if status["status"] not in ("queued", "running"):
                            break
                crawl_s = time.monotonic() - started
            memory.stop.set()
        counts = status.get("counts", {})
        pages = counts.get("ingested", 0) + counts.get("unchanged", 0)
        print(f"one call every {args.interval:.2f} s")
        print(f"idle:         {summary_ms(idle)}")
        print(f"during crawl: {summary_ms(during)}")
        ratio = percentile(during, 95) / percentile(idle, 95)
        print(f"ratio p95 during/idle: {ratio:.2f} (target <= 1.5)")
        print(
            f"crawl: {status.get('status')}, {pages} pages in {crawl_s:.0f} s "
            f"({pages / crawl_s:.2f} pages/s), {counts.get('chunks', 0)} chunks"
        )
        print(
            f"peak RSS of lore's processes: idle {idle_peak / 2**20:.0f} MB, "
            f"overall {memory.summary()}"
        )


if __name__ == "__main__":
    main()
