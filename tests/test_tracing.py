"""Traces: with tracing on, a crawl and a query send their spans (the request, fetch, extract,
chunk, embed, store, search) over OTLP/HTTP to a receiver on 127.0.0.1, the search inside the
request's span. lore runs in a child process (the tracer provider is process-wide) with the
hash embedder, a deterministic fake: this checks the spans, not relevance."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.conftest import Page, Site


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[bytes]]]:
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces", bodies
    server.shutdown()
    server.server_close()


def test_a_crawl_and_a_query_send_their_spans_over_otlp(
    receiver: tuple[str, list[bytes]], site: Site, tmp_path: Path
) -> None:
    endpoint, bodies = receiver
    site.pages["/"] = Page(
        b"<html><head><title>Tea</title></head><body><main><h1>Tea</h1>"
        b"<p>Green tea steeps for two minutes at eighty degrees.</p></main></body></html>"
    )
    script = textwrap.dedent(
        f"""
        import time
        from fastapi.testclient import TestClient
        from api import Settings, create_app
        settings = Settings(
            data_dir={str(tmp_path / "data")!r},
            embedding={{"backend": "hash"}},
            job_process=False,
            auth={{"required": False}},
            fetch={{"allow_private_addresses": True}},
            tracing={{"enabled": True, "endpoint": {endpoint!r}, "service_name": "lore-test"}},
        )
        with TestClient(create_app(settings)) as client:
            job = client.post("/knowledge/index-link", json={{"url": {site.url("/")!r}}})
            job_id = job.json()["jobId"]
            while client.get(f"/knowledge/jobs/{{job_id}}").json()["status"] == "running" or \\
                    client.get(f"/knowledge/jobs/{{job_id}}").json()["status"] == "queued":
                time.sleep(0.05)
            assert client.post("/knowledge/query", json={{"query": "green tea"}}).status_code == 200
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    spans = []
    for body in bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            attrs = {a.key: a.value.string_value for a in resource.resource.attributes}
            assert attrs["service.name"] == "lore-test" and attrs["lore.process"] == "api"
            spans += [s for scope in resource.scope_spans for s in scope.spans]
    names = {s.name for s in spans}
    assert {"fetch", "extract", "chunk", "embed", "store", "search"} <= names, names
    parents = {s.span_id: s.parent_span_id for s in spans}

    def ancestors(span: object) -> set[bytes]:
        found, current = set(), parents.get(span.span_id)  # type: ignore[attr-defined]
        while current:
            found.add(current)
            current = parents.get(current)
        return found

    # the request's own span (the root; FastAPI's spans are inside it) holds the search
    [query] = [s for s in spans if s.name == "POST /knowledge/query" and not s.parent_span_id]
    [search] = [s for s in spans if s.name == "search"]
    assert search.trace_id == query.trace_id and query.span_id in ancestors(search)
    # the crawl's spans are inside the job's
    [job] = [s for s in spans if s.name == "job index-link"]
    for name in ("fetch", "extract", "chunk", "embed", "store"):
        inside = [s for s in spans if s.name == name and job.span_id in ancestors(s)]
        assert inside, name
    fetched = {
        a.value.string_value
        for s in spans
        if s.name == "fetch"
        for a in s.attributes
        if a.key == "url.full"
    }
    assert site.url("/") in fetched
