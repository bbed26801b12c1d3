"""Pages/s of one crawl shared by 1, 2 and 3 `lore worker`s on the server stack, and what each
page costs every process, for a projection to N machines.

The stack: PostgreSQL (a scratch database per run) and RabbitMQ (a queue per run) on
127.0.0.1, one `lore serve` API instance, the workers with lore's default embedder, and the
vectors in a Qdrant REST endpoint: `--qdrant-url` (a real server), else the TEST-ONLY stand-in
on qdrant-client's in-process engine (tests/qdrant_standin.py), which runs in this process, so
this process's CPU time is the vector store's. 127.0.0.1 serves the site (the Python docs from
python3.11-doc); each run is a spider crawl of `--pages` pages from its index.

Also measured: the same crawl with `map: true` (fetch, parse and follow links, store nothing)
by one worker: how fast one job's runner feeds the workers, the ceiling of one crawl however
many workers store its pages. Run it on a quiet machine: no tests, no helpers."""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
from _common import default_corpus
from _served import lore_serve, site_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test-only Qdrant stand-in
from tests.qdrant_standin import QdrantStandIn

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
RABBITMQ = "amqp://guest:guest@127.0.0.1:5672/%2F"
SERVICES = ("postgres", "beam.smp")  # PostgreSQL's and RabbitMQ's processes


@contextmanager
def scratch_database() -> Iterator[str]:
    import psycopg  # noqa: PLC0415 (the postgres extra)

    name = f"lore_scale_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def service_cpu() -> dict[str, float]:
    """CPU seconds so far of PostgreSQL's and RabbitMQ's processes, by name."""
    used = dict.fromkeys(SERVICES, 0.0)
    for proc in psutil.process_iter(["name", "cpu_times"]):
        name = proc.info["name"]
        if name in used and proc.info["cpu_times"] is not None:
            used[name] += proc.info["cpu_times"].user + proc.info["cpu_times"].system
    return used


def cpu_s(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


@dataclass
class Run:
    workers: int
    pages: int
    seconds: float
    worker_cpu: float
    api_cpu: float
    store_cpu: float
    services: dict[str, float]

    @property
    def rate(self) -> float:
        return self.pages / self.seconds

    def per_page_ms(self, cpu: float) -> float:
        return 1000 * cpu / self.pages


def crawl_once(
    workers: int, site: str, pages: int, qdrant: str | None, tmp: Path, map_only: bool
) -> Run:
    stand_in = None if qdrant else QdrantStandIn()
    url = qdrant or stand_in.url  # type: ignore[union-attr]
    tag = secrets.token_hex(4)
    try:
        with ExitStack() as stack:
            database = stack.enter_context(scratch_database())
            env = {
                "LORE_DATABASE_URL": database,
                "LORE_QDRANT__URL": url,
                "LORE_QDRANT__COLLECTION": f"scale_{tag}",
                "LORE_SKILLS__BACKEND": "embedded",
                "LORE_QUEUE__URL": RABBITMQ,
                "LORE_QUEUE__NAME": f"lore-scale-{tag}",
                "LORE_QUEUE__POLL_S": "0.2",
                "LORE_FETCH__ALLOW_PRIVATE_ADDRESSES": "true",
            }
            base, api = stack.enter_context(lore_serve(tmp / f"api-{tag}", env))
            procs = []
            for n in range(workers):
                lore = str(Path(sys.executable).with_name("lore"))
                proc = subprocess.Popen(
                    [lore, "worker", "--log-level", "warning"],
                    env={**os.environ, **env, "LORE_DATA_DIR": str(tmp / f"w{n}-{tag}")},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                stack.callback(proc.wait, 30)
                stack.callback(proc.terminate)
                procs.append(proc)
            time.sleep(20)  # the workers load the model; a crawl submitted now waits for none
            here = psutil.Process()
            before = (
                sum(cpu_s(psutil.Process(p.pid)) for p in procs),
                cpu_s(psutil.Process(api.pid)),
                cpu_s(here),
                service_cpu(),
            )
            key = os.environ.get("LORE_API_KEY", "")
            client = httpx.Client(base_url=base, timeout=30, headers=_auth(key))
            started = time.monotonic()
            job = client.post(
                "/knowledge/index-link",
                json={
                    "url": site,
                    "strategy": "spider",
                    "maxPages": pages,
                    "maxDepth": 10,
                    "map": map_only,
                },
            )
            job.raise_for_status()
            job_id = job.json()["jobId"]
            while (view := client.get(f"/knowledge/jobs/{job_id}").json())["status"] in (
                "queued",
                "running",
            ):
                time.sleep(0.2)
            seconds = time.monotonic() - started
            after = service_cpu()
            run = Run(
                workers,
                view["counts"]["listed" if map_only else "ingested"],
                seconds,
                sum(cpu_s(psutil.Process(p.pid)) for p in procs) - before[0],
                cpu_s(psutil.Process(api.pid)) - before[1],
                cpu_s(here) - before[2],
                {name: after[name] - before[3][name] for name in SERVICES},
            )
            if view["status"] != "completed":
                raise SystemExit(f"the crawl ended {view['status']}: {view.get('error')}")
            return run
    finally:
        if stand_in is not None:
            stand_in.close()


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--qdrant-url", help="a real Qdrant server (default: the stand-in)")
    args = parser.parse_args()
    key = f"lore_scale-bench-{secrets.token_hex(8)}"
    os.environ["LORE_AUTH__BOOTSTRAP_KEY"] = os.environ["LORE_API_KEY"] = key
    print(f"{os.cpu_count()} cores; site {args.corpus}; {args.pages} pages per crawl")
    print(f"vectors: {args.qdrant_url or 'the test-only Qdrant stand-in (in this process)'}")
    runs = []
    with site_process(args.corpus) as site, tempfile.TemporaryDirectory() as tmp:
        start = f"{site}/index.html"
        mapped = crawl_once(1, start, args.pages, args.qdrant_url, Path(tmp), True)
        print(
            f"one job's runner alone (map: fetch, parse, follow): {mapped.rate:.1f} pages/s, "
            f"{mapped.per_page_ms(mapped.worker_cpu):.1f} ms CPU per page"
        )
        for n in args.workers:
            run = crawl_once(n, start, args.pages, args.qdrant_url, Path(tmp), False)
            runs.append(run)
            services = ", ".join(
                f"{name} {run.per_page_ms(cpu):.1f}" for name, cpu in run.services.items()
            )
            print(
                f"{n} worker(s): {run.pages} pages in {run.seconds:.1f} s = "
                f"{run.rate:.2f} pages/s; CPU ms per page: workers "
                f"{run.per_page_ms(run.worker_cpu):.0f}, "
                f"API {run.per_page_ms(run.api_cpu):.1f}, "
                f"vector store {run.per_page_ms(run.store_cpu):.1f}, {services}"
            )
    if not runs:
        return
    best = min(runs, key=lambda r: r.per_page_ms(r.worker_cpu))
    worker_ms = best.per_page_ms(best.worker_cpu)
    shared_ms = best.per_page_ms(best.store_cpu + sum(best.services.values()))
    print(
        f"projection: a worker core stores {1000 / worker_ms:.2f} pages/s; N machines of C "
        f"cores: about N*C*{1000 / worker_ms:.2f} pages/s, until one job's runner "
        f"({mapped.rate:.0f} pages/s here) or the shared services "
        f"({shared_ms:.1f} CPU ms per page: {1000 / shared_ms:.0f} pages/s per core they get) "
        "are the limit"
    )


if __name__ == "__main__":
    main()
