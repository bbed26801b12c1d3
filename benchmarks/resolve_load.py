"""How many agents can lore answer at once? `GET /knowledge/resolve` over HTTP from concurrent
clients against `lore serve` as its own process, at 100k chunks.

    python benchmarks/resolve_load.py [--clients 50] [--seconds 60] [--scale 100000]
        [--data-cache DIR] [--profile FILE]

The data directory is built as agent_latency_under_crawl.py builds it (`--data-cache` shares
it). One client asks for 15 s, then `--clients` clients (one asyncio loop, each one call
after another) for `--seconds`. Prints answers/s, p50/p95/p99, errors and the CPU the server's
processes used per answer (target: >= 150 answers/s and p95 <= 300 ms at 50 clients). With
`--profile FILE`, py-spy records where the server's interpreter lock goes during the
concurrent run (what serialises the answers): a flame graph, or collapsed stacks for FILE.txt.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
from _common import percentile
from _served import Call, Memory, add_data_options, lore_serve, prepared_data


async def load(base: str, key: str, calls: list[Call], clients: int, seconds: float) -> dict:
    latencies: list[float] = []
    errors: dict[str, int] = {}
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60, limits=limits
    ) as client:

        async def agent(n: int) -> None:
            i = n * 7
            while time.monotonic() < stop:
                url, query, _ = calls[i % len(calls)]
                i += 1
                start = time.perf_counter()
                try:
                    answer = await client.get(
                        "/knowledge/resolve", params={"url": url, "query": query, "k": 8}
                    )
                    outcome = "ok" if answer.status_code == 200 else str(answer.status_code)
                except httpx.HTTPError as exc:
                    outcome = type(exc).__name__
                if outcome == "ok":
                    latencies.append(time.perf_counter() - start)
                else:
                    errors[outcome] = errors.get(outcome, 0) + 1

        began, cpu = time.monotonic(), time.process_time()
        await asyncio.gather(*(agent(n) for n in range(clients)))
        took, cpu = time.monotonic() - began, time.process_time() - cpu
    return {"latencies": latencies, "errors": errors, "seconds": took, "client_cpu": cpu}


def cpu_seconds(pid: int) -> float:
    tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return sum(p.cpu_times().user + p.cpu_times().system for p in tree)


def report(name: str, run: dict, cpu: float) -> None:
    lat = run["latencies"]
    rate = len(lat) / run["seconds"]
    answers = max(1, len(lat))
    print(
        f"{name}: {rate:.1f} answers/s; p50 {percentile(lat, 50) * 1000:.1f} ms, "
        f"p95 {percentile(lat, 95) * 1000:.1f} ms, p99 {percentile(lat, 99) * 1000:.1f} ms; "
        f"errors {run['errors'] or 0}; server CPU {cpu / answers * 1000:.1f} ms/answer, "
        f"client CPU {run['client_cpu'] / answers * 1000:.1f} ms/answer"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--profile", type=Path, help="py-spy profile of the server (SVG, or .txt)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        key, calls = prepared_data(data, args.corpus, args.pages, args.scale, args.data_cache)
        with lore_serve(data) as (base, server):
            memory = Memory(server.pid)
            memory.start()
            asyncio.run(load(base, key, calls, 1, 5.0))  # warm-up
            before = cpu_seconds(server.pid)
            single = asyncio.run(load(base, key, calls, 1, 15.0))
            report("1 client", single, cpu_seconds(server.pid) - before)
            spy = None
            if args.profile:
                py_spy = str(Path(sys.executable).with_name("py-spy"))
                record = ["record", "--pid", str(server.pid), "--output", str(args.profile)]
                options = ["--duration", str(int(args.seconds)), "--rate", "50", "--gil"]
                if args.profile.suffix == ".txt":  # collapsed stacks, for reading as text
                    options += ["--format", "raw"]
                spy = subprocess.Popen(
                    [py_spy, *record, *options],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            before = cpu_seconds(server.pid)
            many = asyncio.run(load(base, key, calls, args.clients, args.seconds))
            report(f"{args.clients} clients", many, cpu_seconds(server.pid) - before)
            if spy is not None:
                spy.wait(60)
            memory.stop.set()
        lat = many["latencies"]
        rate = len(lat) / many["seconds"]
        p95 = percentile(lat, 95) * 1000
        print(
            f"target >= 150 answers/s and p95 <= 300 ms at {args.clients} clients: "
            f"{'met' if rate >= 150 and p95 <= 300 else 'not met'}"
        )
        print(f"peak RSS of lore's processes: {memory.peak / 2**20:.0f} MB")


if __name__ == "__main__":
    main()
