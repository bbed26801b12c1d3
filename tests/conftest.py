"""Shared fixtures: a local website on 127.0.0.1, the real embedding model loaded once, and a
lore app on a temporary data directory."""

from __future__ import annotations

import importlib
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from api import Lore, Settings, create_app
from api.auth import Authenticator
from ingest import Embedder, OnnxEmbedder, SentenceTransformerEmbedder
from retrieval import Catalog


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None  # answered with 304 to a matching If-None-Match
    require: dict[str, str] = field(default_factory=dict)  # request headers, else 401


@dataclass
class Post:
    path: str
    body: bytes
    headers: dict[str, str]


class Site:
    """A real HTTP server on 127.0.0.1 serving `pages` (path -> Page); stops with the test."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.requests: list[str] = []
        self.headers: list[tuple[str, dict[str, str]]] = []  # (path, request headers) per GET
        self.not_modified: list[str] = []  # paths answered 304
        self.posts: list[Post] = []
        self.post_statuses: list[int] = []  # answers to POSTs, in order; then 200
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requests.append(self.path)
                site.headers.append((self.path, dict(self.headers)))
                page = site.pages.get(self.path)
                if page is None:
                    page = Page(b"<html><body><h1>Not found</h1></body></html>", status=404)
                if any(self.headers.get(k) != v for k, v in page.require.items()):
                    page = Page(b"<html><body><h1>Sign in</h1></body></html>", status=401)
                if page.delay_s:
                    time.sleep(page.delay_s)
                if page.etag is not None and self.headers.get("If-None-Match") == page.etag:
                    site.not_modified.append(self.path)
                    self.send_response(304)
                    self.send_header("ETag", page.etag)
                    self.end_headers()
                    return
                try:
                    self.send_response(page.status)
                    if page.etag is not None:
                        self.send_header("ETag", page.etag)
                    self.send_header("Content-Type", page.content_type)
                    self.send_header("Content-Length", str(len(page.body)))
                    for key, value in page.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(page.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                site.posts.append(Post(self.path, self.rfile.read(length), dict(self.headers)))
                status = site.post_statuses.pop(0) if site.post_statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return self.base + path

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    server = Site()
    yield server
    server.close()


@pytest.fixture(scope="session")
def real_embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """The real all-MiniLM-L6-v2 model as lore runs it by default (exported to ONNX, int8),
    loaded once for the whole run."""
    return OnnxEmbedder(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def torch_embedder() -> Embedder:
    """The same model on PyTorch (sentence-transformers), the reference for the ONNX export."""
    return SentenceTransformerEmbedder()


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": data_dir,
        "fetch": {"allow_private_addresses": True, "timeout_s": 2.0},
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def make_client(tmp_path: Path, real_embedder: Embedder) -> Iterator[Callable[..., TestClient]]:
    """Start a lore app (real model, real Qdrant Edge, SQLite) on tmp_path/data; call again to
    'restart' on the same directory after closing the previous one."""
    opened: list[tuple[TestClient, Lore]] = []

    def start(**overrides: object) -> TestClient:
        for client, lore in opened:
            client.__exit__(None, None, None)
            lore.close()
        opened.clear()
        settings = make_settings(tmp_path / "data", **overrides)
        lore = Lore(settings, embedder=real_embedder)
        # Every request carries a key of the default tenant, as a real agent's would.
        key, _ = Authenticator(lore.catalog, 600).create_key(settings.tenant, "tests")
        client = TestClient(
            create_app(settings, lore=lore), headers={"Authorization": f"Bearer {key}"}
        )
        client.__enter__()
        opened.append((client, lore))
        return client

    yield start
    for client, lore in opened:
        client.__exit__(None, None, None)
        lore.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# The first key a `lore serve` started by a test creates (LORE_AUTH__BOOTSTRAP_KEY), and the
# header that carries it; the CLI reads it from LORE_API_KEY.
TEST_KEY = "lore_test-key-for-servers-started-by-tests"
AUTH = {"Authorization": f"Bearer {TEST_KEY}"}


@contextmanager
def lore_server(
    env: dict[str, str], output: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`lore serve` in its own process on a free port of 127.0.0.1 with `env` (its output
    written to `output` when given); stopped (if still running) when the block ends."""
    env = {
        "LORE_AUTH__BOOTSTRAP_KEY": TEST_KEY,
        "LORE_API_KEY": TEST_KEY,
        **env,
        "LORE_PORT": str(free_port()),
    }
    sink = output.open("a") if output is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "serve", "--log-level", "info"],
        env=env,
        stdout=sink,
        stderr=sink,
        text=True,
    )
    url = f"http://127.0.0.1:{env['LORE_PORT']}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
            if proc.poll() is not None:
                raise AssertionError(f"lore serve exited with {proc.returncode}")
        else:
            raise AssertionError("lore serve did not start")
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
        if output is not None:
            sink.close()  # type: ignore[union-attr]


def wait_for_job(client: TestClient, job_id: str, timeout_s: float = 60.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body: dict[str, object] = client.get(f"/knowledge/jobs/{job_id}").json()
        if body["status"] in ("completed", "failed", "cancelled"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish in {timeout_s}s")


def _local_service(port: int, client: str, url: str) -> str | None:
    """`url` when a server listens on 127.0.0.1:`port` and the `client` package imports."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
        importlib.import_module(client)
    except (OSError, ImportError):
        return None
    return url


def postgres_url() -> str | None:
    """The catalog database of the server stack, where PostgreSQL runs on 127.0.0.1."""
    return _local_service(5432, "psycopg", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@pytest.fixture(params=["sqlite", "postgres"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Catalog]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'catalog.db'}"
    else:
        pg = postgres_url()
        if pg is None:
            pytest.skip("PostgreSQL is not running on 127.0.0.1:5432 (or psycopg is missing)")
        url = pg
    cat = Catalog(url)
    yield cat
    cat.close()


@pytest.fixture
def scratch_postgres() -> Iterator[str]:
    """A PostgreSQL database of its own for this test (several lore processes share it as
    their catalog), dropped afterwards."""
    pg = postgres_url()
    if pg is None:
        pytest.skip("PostgreSQL is not running on 127.0.0.1:5432 (or psycopg is missing)")
    import psycopg

    name = f"lore_test_{secrets.token_hex(6)}"
    admin = pg.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield pg.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def redis_url() -> str | None:
    """Redis of the server stack, where it runs on 127.0.0.1:6379."""
    return _local_service(6379, "redis", "redis://127.0.0.1:6379/0")


def rabbitmq_url() -> str | None:
    """RabbitMQ of the server stack (the worker tier's queue), where it runs on 127.0.0.1."""
    return _local_service(5672, "pika", "amqp://guest:guest@127.0.0.1:5672/%2F")


@pytest.fixture(scope="session")
def qdrant_url() -> Iterator[str]:
    """A Qdrant server's REST address: `LORE_TEST_QDRANT_URL` where one runs, else the test-only
    stand-in on qdrant-client's in-process engine (tests/qdrant_standin.py)."""
    real = os.environ.get("LORE_TEST_QDRANT_URL")
    if real:
        yield real
        return
    from tests.qdrant_standin import QdrantStandIn

    stand_in = QdrantStandIn()
    yield stand_in.url
    stand_in.close()
