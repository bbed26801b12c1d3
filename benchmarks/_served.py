"""`lore serve` as a user runs it, on a prepared data directory, for the benchmarks that load it
over HTTP (agent_latency_under_crawl.py, resolve_load.py)."""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
from _common import default_corpus
from resolve_bench import build, fill

from api import Lore, Settings
from api.auth import Authenticator
from retrieval import ChunkFilter

Call = tuple[str, str, str]  # a page URL, a query on it, a goal


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prepare(data: Path, corpus: Path, pages: int, scale: int) -> tuple[str, list[Call]]:
    """Index `pages` pages, fill to `scale` chunks; returns an API key and the calls to make."""
    rng = random.Random(7)
    lore = Lore(Settings(data_dir=data))
    try:
        build(lore, corpus, pages)
        chunks = lore.store.scroll(ChunkFilter(tenant_ids=(lore.tenant,)), 10**6)
        fill(lore, scale, rng)
        key, _ = Authenticator(lore.catalog, 600).create_key(lore.tenant, "bench", rate_limit=10**6)
        calls = [
            (c.url, " ".join(c.text.split()[:12]), " ".join(c.text.split()[:6]))
            for c in rng.sample(chunks, min(400, len(chunks)))
        ]
        print(f"data: {lore.store.count(ChunkFilter(include_superseded=True))} chunks")
    finally:
        lore.close()
    return key, calls


def add_data_options(parser: argparse.ArgumentParser) -> None:
    """The options `prepared_data` takes: what to index, how far to fill, where to keep it."""
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--data-cache", type=Path)


def prepared_data(
    data: Path, corpus: Path, pages: int, scale: int, cache: Path | None
) -> tuple[str, list[Call]]:
    """The data directory at `data` (from `cache` when it holds one, else built and kept
    there); returns the bench key and the calls."""
    if cache is not None and (cache / "calls.json").is_file():
        shutil.copytree(cache / "data", data)
        key, calls = json.loads((cache / "calls.json").read_text())
        return key, [tuple(c) for c in calls]  # type: ignore[misc]
    key, calls = _prepare(data, corpus, pages, scale)
    if cache is not None:
        shutil.copytree(data, cache / "data")
        (cache / "calls.json").write_text(json.dumps([key, calls]))
    return key, calls


@contextmanager
def site_process(root: Path) -> Iterator[str]:
    """A static server for `root` on 127.0.0.1 in a process of its own (its CPU is not the
    benchmark's); its base URL. Stopped at the end."""
    port = free_port()
    site = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        site.terminate()
        site.wait(10)


class Memory(threading.Thread):
    """Peak resident memory of a process and all its children together, and of each alone."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.peak = 0
        self.peak_root = 0
        self.peak_children = 0
        self.peak_each: dict[int, int] = {}  # each child's own peak, by process id
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.2):
            try:
                root = self.root.memory_info().rss
                each = {p.pid: p.memory_info().rss for p in self.root.children(recursive=True)}
            except psutil.Error:
                continue
            children = sum(each.values())
            self.peak = max(self.peak, root + children)
            self.peak_root = max(self.peak_root, root)
            self.peak_children = max(self.peak_children, children)
            for pid, rss in each.items():
                self.peak_each[pid] = max(self.peak_each.get(pid, 0), rss)

    def summary(self) -> str:
        each = ", ".join(f"{rss / 2**20:.0f}" for rss in self.peak_each.values() if rss > 2**25)
        return (
            f"{self.peak / 2**20:.0f} MB (the API process alone {self.peak_root / 2**20:.0f} MB, "
            f"its children {self.peak_children / 2**20:.0f} MB; each child over 32 MB at its "
            f"peak, in the order they started: {each} MB)"
        )


@contextmanager
def lore_serve(
    data: Path, env: dict[str, str] | None = None, checkout: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`lore serve` on `data` (output discarded), ready; its base URL and process. Stopped
    with SIGTERM at the end (killed, and said so, when it does not stop within 30 s). With
    `checkout`, the code of that directory (another commit's worktree) with this interpreter."""
    port = free_port()
    lore = [str(Path(sys.executable).with_name("lore"))]
    if checkout is not None:  # the `lore` script would import this checkout's installed code
        lore = [sys.executable, "-m", "api.cli"]
    server = subprocess.Popen(
        [*lore, "serve", "--port", str(port), "--log-level", "warning"],
        cwd=checkout,
        env={
            **os.environ,
            "LORE_DATA_DIR": str(data),
            "LORE_FETCH__ALLOW_PRIVATE_ADDRESSES": "true",
            **(env or {}),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("lore serve did not start")
            time.sleep(0.5)
        yield base, server
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            print("lore serve did not stop within 30 s of SIGTERM (killed)")
