"""How many agents can lore answer at once? `GET /knowledge/resolve` over HTTP from concurrent
clients against `lore serve` as its own process, at 100k chunks.

    python benchmarks/resolve_load.py [--clients 50] [--seconds 60] [--scale 100000]
        [--data-cache DIR] [--client raw|httpx] [--profile FILE]

The data directory is built as agent_latency_under_crawl.py builds it (`--data-cache` shares
it). One client asks for 15 s, then `--clients` clients (one asyncio loop, each one call
after another) for `--seconds`. Prints answers/s, p50/p95/p99, errors, the CPU the server's
processes used per answer (in all and by process, the API's first) and the client's own
(target: >= 150 answers/s and p95 <= 300 ms at 50 clients). The clients share the server's
cores: `raw` (the default) speaks HTTP/1.1 on asyncio's streams, 0.2 ms of CPU an answer;
`httpx` is how a Python agent calls lore, 1.3-1.9 ms an answer. With `--profile FILE`,
py-spy (`pip install py-spy`) records where the API process's interpreter lock goes during
the concurrent run: a flame graph, or collapsed stacks for FILE.txt.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import psutil
from _common import percentile
from _served import Call, Memory, add_data_options, lore_serve, prepared_data


async def load(
    base: str, key: str, calls: list[Call], clients: int, seconds: float, client: str = "raw"
) -> dict:
    """`clients` agents, each asking again as soon as it is answered, for `seconds`."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    stop = time.monotonic() + seconds
    ask = _raw_agent if client == "raw" else _httpx_agent
    began, cpu = time.monotonic(), time.process_time()
    async with ask(base, key, clients) as get:

        async def agent(n: int) -> None:
            i = n * 7
            while time.monotonic() < stop:
                url, query, _ = calls[i % len(calls)]
                i += 1
                start = time.perf_counter()
                try:
                    outcome = await get({"url": url, "query": query, "k": 8})
                except (OSError, EOFError, KeyError, ValueError, httpx.HTTPError) as exc:
                    outcome = type(exc).__name__
                if outcome == "ok":
                    latencies.append(time.perf_counter() - start)
                else:
                    errors[outcome] = errors.get(outcome, 0) + 1

        await asyncio.gather(*(agent(n) for n in range(clients)))
    took, cpu = time.monotonic() - began, time.process_time() - cpu
    return {"latencies": latencies, "errors": errors, "seconds": took, "client_cpu": cpu}


Ask = Callable[[dict[str, Any]], Awaitable[str]]  # a resolve's parameters -> "ok" or why not


@asynccontextmanager
async def _httpx_agent(base: str, key: str, clients: int) -> AsyncIterator[Ask]:
    """httpx, as an agent's Python code would call lore (1.3-1.9 ms of this machine's CPU an
    answer, taken from the server's two cores); a connection per client."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60, limits=limits
    ) as client:

        async def get(params: dict[str, Any]) -> str:
            answer = await client.get("/knowledge/resolve", params=params)
            return "ok" if answer.status_code == 200 else str(answer.status_code)

        yield get


@asynccontextmanager
async def _raw_agent(base: str, key: str, clients: int) -> AsyncIterator[Ask]:
    """HTTP/1.1 with keep-alive on asyncio's streams, one connection per agent (how
    load generators such as wrk keep their own CPU out of the measurement: the agents run on
    other machines). Each answer must be a 200 whose body is a resolve's JSON."""
    host = urlsplit(base).netloc
    head = f"Host: {host}\r\nAuthorization: Bearer {key}\r\n\r\n".encode()
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def get(params: dict[str, Any]) -> str:
        if idle:
            reader, writer = idle.pop()
        else:
            reader, writer = await asyncio.open_connection(*host.split(":"))
        target = f"/knowledge/resolve?{urlencode(params)}"
        try:
            writer.write(f"GET {target} HTTP/1.1\r\n".encode() + head)
            status_line, *lines = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
            fields = dict(line.lower().split(b":", 1) for line in lines if line)
            body = await reader.readexactly(int(fields[b"content-length"]))
        except BaseException:  # the connection is in no state to be used again
            writer.close()
            raise
        if fields.get(b"connection", b"").strip() == b"close":
            writer.close()
        else:
            idle.append((reader, writer))
        status = status_line.split(b" ")[1].decode()
        if status != "200":
            return status
        return "ok" if body.startswith(b'{"chunks":') else "not a resolve answer"

    try:
        yield get
    finally:
        for _, writer in idle:
            writer.close()


def cpu_seconds(pid: int) -> dict[int, float]:
    """CPU seconds of the server and of each of its child processes, by process id."""
    tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    return {p.pid: p.cpu_times().user + p.cpu_times().system for p in tree}


def cpu_used(before: dict[int, float], after: dict[int, float]) -> list[float]:
    """CPU seconds each process used between the readings, the server's first."""
    return [after[pid] - before.get(pid, 0.0) for pid in after]


def report(name: str, run: dict, used: list[float]) -> None:
    lat = run["latencies"]
    rate = len(lat) / run["seconds"]
    answers = max(1, len(lat))
    cpu = sum(used)
    each = " + ".join(f"{c / answers * 1000:.1f}" for c in used)
    print(
        f"{name}: {rate:.1f} answers/s; p50 {percentile(lat, 50) * 1000:.1f} ms, "
        f"p95 {percentile(lat, 95) * 1000:.1f} ms, p99 {percentile(lat, 99) * 1000:.1f} ms; "
        f"errors {run['errors'] or 0}; server CPU {cpu / answers * 1000:.1f} ms/answer "
        f"(by process, the API's first: {each}), "
        f"client CPU {run['client_cpu'] / answers * 1000:.1f} ms/answer"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--profile", type=Path, help="py-spy profile of the server (SVG, or .txt)")
    parser.add_argument(
        "--client",
        choices=("raw", "httpx"),
        default="raw",
        help="raw: HTTP/1.1 on asyncio's streams (little CPU); httpx: as Python agents call lore",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        key, calls = prepared_data(data, args.corpus, args.pages, args.scale, args.data_cache)
        with lore_serve(data) as (base, server):
            memory = Memory(server.pid)
            memory.start()
            asyncio.run(load(base, key, calls, 1, 5.0, args.client))  # warm-up
            before = cpu_seconds(server.pid)
            single = asyncio.run(load(base, key, calls, 1, 15.0, args.client))
            report("1 client", single, cpu_used(before, cpu_seconds(server.pid)))
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
            many = asyncio.run(load(base, key, calls, args.clients, args.seconds, args.client))
            report(f"{args.clients} clients", many, cpu_used(before, cpu_seconds(server.pid)))
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
