"""What an operator sees of the API: a request id on every answer and log line, structured logs,
and Prometheus metrics (`GET /metrics`): request latency per route, jobs and crawled pages by
outcome and reason, embedding, queue depth, store size and the skills library's KPIs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from retrieval import ChunkFilter, SkillStat

if TYPE_CHECKING:
    from api.service import Lore
    from api.settings import TracingSettings

log = logging.getLogger(__name__)
disable_created_metrics()  # type: ignore[no-untyped-call]  # no `_created` series

REQUEST_ID: ContextVar[str] = ContextVar("lore_request_id", default="-")
_GIVEN_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # an X-Request-Id lore keeps as it is
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
LATENCY_BUCKETS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


# logs -------------------------------------------------------------------------------------------


class RequestIdFilter(logging.Filter):
    """Puts the request being served (or '-') on every record as `request_id`."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, requestId (and the traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "requestId": getattr(record, "request_id", "-"),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(level: str | int, fmt: str = "text", tag: str = "") -> None:
    """Root logging for a lore process: `text` lines with the request id, or `json`."""
    handler = logging.StreamHandler()
    handler.addFilter(RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        where = f" [{tag}]" if tag else ""
        handler.setFormatter(
            logging.Formatter(f"%(levelname)s %(name)s{where} [%(request_id)s]: %(message)s")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level if isinstance(level, int) else level.upper())


# traces -----------------------------------------------------------------------------------------

tracer = trace.get_tracer("lore.api")


def configure_tracing(settings: TracingSettings, process: str) -> Callable[[], None]:
    """Send this process's spans to the OTLP/HTTP endpoint when tracing is enabled; returns
    what flushes and stops it (a no-op when disabled)."""
    if not settings.enabled:
        return lambda: None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
        OTLPSpanExporter,
    )
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

    resource = Resource.create({"service.name": settings.service_name, "lore.process": process})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.endpoint)))
    trace.set_tracer_provider(provider)
    log.info("tracing to %s", settings.endpoint)
    return provider.shutdown


# metrics ----------------------------------------------------------------------------------------


class Metrics:
    """The metrics of one app, in a registry of its own (tests run many apps in one process)."""

    def __init__(self, lore: Lore) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "lore_http_requests",
            "HTTP requests answered, by route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "lore_http_request_duration_seconds",
            "Time to answer an HTTP request, by route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.skill_lookups = Counter(
            "lore_skill_lookups",
            "Requests that asked for skills (agent context with a goal, skill search).",
            registry=self.registry,
        )
        self.skill_hits = Counter(
            "lore_skill_hits",
            "Skill lookups that found at least one skill.",
            registry=self.registry,
        )
        self.skill_outcomes = Counter(
            "lore_skill_outcomes",
            "Outcomes agents reported for skills they used.",
            ["result"],
            registry=self.registry,
        )
        self.registry.register(CatalogCollector(lore))

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        method = method if method in METHODS else "OTHER"  # labels a caller cannot multiply
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)


class CatalogCollector(Collector):
    """What every lore process did, read from the catalog and the store at each scrape: jobs by
    kind and status, crawled URLs by state and reason, chunks embedded for crawls, the queue,
    store size, and the skill KPIs of all time."""

    def __init__(self, lore: Lore, fresh_s: float = 5.0) -> None:
        self._lore = lore
        self._fresh_s = fresh_s  # scrapes closer than this get the last answer
        self._last: tuple[float, list[Metric]] = (-fresh_s, [])
        self._lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            made, metrics = self._last
            if time.monotonic() - made >= self._fresh_s:
                metrics = list(self._read())
                self._last = (time.monotonic(), metrics)
        yield from metrics

    def _read(self) -> Iterator[Metric]:
        lore = self._lore
        stats = lore.catalog.stats()
        jobs = GaugeMetricFamily("lore_jobs", "Jobs by kind and status.", labels=["kind", "status"])
        for (kind, status), n in sorted(stats.jobs.items()):
            jobs.add_metric([kind, status], n)
        yield jobs
        urls = CounterMetricFamily(
            "lore_job_urls",
            "URLs crawls found, by state (ingested, unchanged, skipped, failed, ...) and reason.",
            labels=["state", "reason"],
        )
        for (state, reason), n in sorted(stats.urls.items()):
            urls.add_metric([state, reason], n)
        yield urls
        yield CounterMetricFamily(
            "lore_job_embedded_chunks",
            "Chunks embedded for crawled pages (in the job process or the workers).",
            value=stats.embedded,
        )
        queued = GaugeMetricFamily("lore_queue_depth", "Work waiting.", labels=["what"])
        queued.add_metric(["jobs"], sum(n for (_, s), n in stats.jobs.items() if s == "queued"))
        queued.add_metric(
            ["urls"], sum(n for (s, _), n in stats.urls.items() if s in ("pending", "queued"))
        )
        yield queued
        yield GaugeMetricFamily("lore_documents", "Documents stored.", value=stats.documents)
        yield GaugeMetricFamily(
            "lore_chunks",
            "Chunks in the vector store (history and flagged ones too).",
            value=lore.store.count(ChunkFilter(include_superseded=True, include_flagged=True)),
        )
        total = kpis(lore.catalog.skill_stats())
        yield GaugeMetricFamily(
            "lore_skill_hit_rate",
            "Share of skill lookups that found a skill (all time; the target is 10 %).",
            value=total.hit_rate,
        )
        yield GaugeMetricFamily(
            "lore_skill_effectiveness",
            "Share of reported skill uses that worked (all time; the target is 60 %).",
            value=total.effectiveness,
        )


# skill KPIs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kpis:
    lookups: int
    hits: int
    successes: int
    failures: int

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0

    @property
    def effectiveness(self) -> float:
        used = self.successes + self.failures
        return self.successes / used if used else 0.0


def kpis(stats: list[SkillStat]) -> Kpis:
    return Kpis(
        sum(s.lookups for s in stats),
        sum(s.hits for s in stats),
        sum(s.successes for s in stats),
        sum(s.failures for s in stats),
    )


class SkillTally:
    """Counts skill lookups and outcomes as requests are answered, and adds them to the
    catalog's daily KPIs every `flush_s` (and when the app stops): a request never waits for a
    write. Counts the catalog did not take are kept for the next flush; a crash of the process
    loses at most the last `flush_s` of counts."""

    def __init__(self, metrics: Metrics | None = None) -> None:
        self._metrics = metrics
        self._lock = threading.Lock()
        # One flush at a time: a reader's flush (GET /skills/kpis) waits for the timer's to be
        # written, or it read the catalog without the counts the timer had taken.
        self._flushing = threading.Lock()
        self._counts: dict[tuple[str, str], list[int]] = {}

    def _add(self, tenant: str, index: int) -> None:
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        with self._lock:
            self._counts.setdefault((tenant, day), [0, 0, 0, 0])[index] += 1

    def lookup(self, tenant: str, found: bool) -> None:
        self._add(tenant, 0)
        if found:
            self._add(tenant, 1)
        if self._metrics is not None:
            self._metrics.skill_lookups.inc()
            if found:
                self._metrics.skill_hits.inc()

    def outcome(self, tenant: str, success: bool) -> None:
        self._add(tenant, 2 if success else 3)
        if self._metrics is not None:
            self._metrics.skill_outcomes.labels("success" if success else "failure").inc()

    def flush(self, lore: Lore) -> None:
        """Add the counts to the catalog; what could not be written is counted again. Returns
        once every count taken before the call is written (or put back)."""
        with self._flushing:
            self._flush(lore)

    def _flush(self, lore: Lore) -> None:
        with self._lock:
            counts, self._counts = self._counts, {}
        pending = list(counts.items())
        try:
            while pending:
                (tenant, day), (lookups, hits, successes, failures) = pending[0]
                lore.catalog.add_skill_stats(
                    SkillStat(tenant, day, lookups, hits, successes, failures)
                )
                pending.pop(0)
        finally:
            with self._lock:
                for key, values in pending:
                    mine = self._counts.setdefault(key, [0, 0, 0, 0])
                    for index, n in enumerate(values):
                        mine[index] += n

    async def run(self, lore: Lore, flush_s: float) -> None:
        """Flush every `flush_s` until cancelled, then once more."""
        try:
            while True:
                await asyncio.sleep(flush_s)
                try:
                    await asyncio.to_thread(self.flush, lore)
                except Exception:  # the catalog may be away a while: counted again next time
                    log.exception("skill KPIs not written")
        finally:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.flush, lore)


# the middleware ---------------------------------------------------------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Observed:
    """ASGI middleware: a request id for every HTTP request (the caller's X-Request-Id when it
    is a plain token, else a new one) in the answer's X-Request-Id header, in the error body
    and on every log line written while it is served; and its latency per route template."""

    def __init__(
        self,
        app: App,
        metrics: Callable[[], Metrics | None],
        failure: Callable[[Exception], dict[str, str]],
    ) -> None:
        """`failure(exc)`: the body of a 500 for an exception no handler took."""
        self.app = app
        self._metrics = metrics
        self._failure = failure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or ()).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _GIVEN_ID.match(given) else uuid.uuid4().hex[:16]
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        status = 500

        answered = False

        async def sending(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                answered = True
                status = int(message["status"])
                headers = list(message.get("headers") or ())
                headers.append((b"x-request-id", request_id.encode()))
                message["headers"] = headers
            await send(message)

        span = tracer.start_span(f"{scope['method']} {scope.get('path', '')}", kind=SpanKind.SERVER)
        span.set_attribute("lore.request_id", request_id)
        try:
            with trace.use_span(span, end_on_exit=False):
                await self.app(scope, receive, sending)
        except Exception as exc:
            if answered:  # too late for an error answer
                raise
            body = json.dumps(self._failure(exc)).encode()
            await sending(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await sending({"type": "http.response.body", "body": body})
        finally:
            REQUEST_ID.reset(token)
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            span.update_name(f"{scope['method']} {route}")
            span.set_attribute("http.response.status_code", status)
            span.end()
            metrics = self._metrics()
            if metrics is not None:
                metrics.observe(scope["method"], route, status, time.perf_counter() - started)
