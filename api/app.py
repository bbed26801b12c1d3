"""The FastAPI application factory."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from api import errors
from api.auth import Authenticator
from api.jobs import JobProcess, Jobs, JobWorker, Scheduler, WorkerTier, run_job
from api.observe import Metrics, Observed, SkillTally, configure_tracing
from api.ratelimit import rate_limiter
from api.routes import admin, agent, health, knowledge, spa
from api.service import Lore
from api.settings import Settings
from ingest import usable_cores

log = logging.getLogger(__name__)


def search_concurrency(settings: Settings, store_process: bool = False) -> int:
    """Searches computed at once: as set; else anyio's default thread count with a Qdrant
    server (its searches are network waits); two per core this process may use when the
    embedded shard is in a `store_process` of its own (one embeds its query while one waits
    for the store: 200 instead of 186 answers/s with one per core, docs/serving.md); one per
    core with the shard in this process (it holds the GIL: more threads only take turns at
    random)."""
    if settings.search.concurrency:
        return settings.search.concurrency
    if settings.qdrant.url and settings.qdrant.url != ":memory:":
        return 40
    return 2 * usable_cores() if store_process else usable_cores()


def create_app(
    settings: Settings | None = None,
    lore: Lore | None = None,
    announce_url: str | None = None,
    schedules: bool = True,
    freeze_startup: bool = False,
) -> FastAPI:
    """Build the app. The store is opened at startup (or `lore` is used as given) and closed at
    shutdown; index-link jobs left queued or running by a previous process resume. With
    `announce_url`, the server records itself in DATA_DIR/server.json while it is up, so the CLI
    on the same data directory talks to it instead of opening the store. `schedules`: this
    server makes the scheduled jobs that are due (not one a CLI command starts for itself).
    `freeze_startup`: a long-running server (`lore serve`) keeps what startup made out of the
    garbage collector's full collections while it runs."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop_tracing = configure_tracing(settings.tracing, "api")
        own_store = lore is None and settings.store_process and not settings.qdrant.url
        searches = search_concurrency(settings, own_store)
        instance = lore or Lore(
            settings,
            store_process=own_store,
            store_connections=searches + 1,  # and a write or a listing
        )
        worker: Jobs
        if settings.queue.url:  # `lore worker`s run them
            worker = WorkerTier()
        elif lore is None and settings.job_process:
            worker = JobProcess(instance)  # crawls and embedding below the API's priority
        else:  # an instance made by the caller (tests): its jobs run on this event loop
            worker = JobWorker(instance, settings.workers, run_job, settings.job_claim_ttl_s)
        app.state.lore = instance
        app.state.metrics = metrics = Metrics(instance)
        instance.kpis = SkillTally(metrics)
        kpis = asyncio.get_running_loop().create_task(
            instance.kpis.run(instance, settings.skill_kpi_flush_s)
        )
        limiter = rate_limiter(settings.redis_url)
        app.state.auth = Authenticator(
            instance.catalog, settings.auth.rate_limit_per_minute, limiter
        )
        app.state.worker = worker
        app.state.searches = anyio.CapacityLimiter(searches)
        worker.start()
        scheduler = Scheduler(instance, worker.submit, settings.schedule_poll_s)
        if schedules:
            scheduler.start()
        log.info("lore ready: data in %s, model %s", settings.data_dir, instance.embedder.name)
        if freeze_startup:
            # What startup made (the model, its libraries: millions of objects) lives as long
            # as the server. Out of the collector's sight, a full collection walks only what
            # requests made; it walked everything, 100-340 ms at a time in the middle of
            # agents' requests (a scan's p95 and max: docs/measured.md). Given back at
            # shutdown: left frozen, native objects were torn down in an order that crashed
            # the interpreter's exit.
            gc.collect()
            gc.freeze()
        if announce_url:
            settings.server_file.write_text(json.dumps({"url": announce_url, "pid": os.getpid()}))
        try:
            yield
        finally:
            if freeze_startup:
                gc.unfreeze()
            if announce_url:
                settings.server_file.unlink(missing_ok=True)
            await scheduler.stop()
            kpis.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await kpis  # the counts since the last flush are written
            await worker.stop()
            limiter.close()
            await instance.scanner.aclose()
            if lore is None:
                instance.close()
            stop_tracing()  # the last spans are sent

    app = FastAPI(
        title="lore",
        version="0.1.0",
        summary="Knowledge ingestion and retrieval for web agents.",
        lifespan=lifespan,
        responses=errors.ERROR_RESPONSES,
        docs_url=None,
        redoc_url=None,
    )
    errors.install(app)
    _console(app)
    app.add_middleware(
        Observed, metrics=lambda: getattr(app.state, "metrics", None), failure=errors.unexpected
    )
    _offline_docs(app)
    app.include_router(health.router)
    app.include_router(knowledge.router)
    app.include_router(spa.router)
    app.include_router(agent.router)
    app.include_router(admin.router)
    app.openapi = functools.partial(_openapi, app)  # type: ignore[method-assign]
    return app


def _console(app: FastAPI) -> None:
    """/ui: the web console, three static files of lore's own (api/ui) that read the API with
    the key the user signs in with."""
    from importlib.resources import files  # noqa: PLC0415

    from fastapi.responses import RedirectResponse  # noqa: PLC0415
    from fastapi.staticfiles import StaticFiles  # noqa: PLC0415

    @app.get("/ui", include_in_schema=False)
    def console() -> RedirectResponse:
        return RedirectResponse("/ui/")

    app.mount("/ui/", StaticFiles(directory=str(files("api") / "ui"), html=True), name="ui")


DOCS_ASSETS = "/docs-assets"


def _offline_docs(app: FastAPI) -> None:
    """/docs (Swagger UI 5) and /redoc from files installed with lore (the fastapi-offline
    package), not from a CDN: they work on a machine without internet."""
    from importlib.resources import files  # noqa: PLC0415

    from fastapi.openapi.docs import (  # noqa: PLC0415
        get_redoc_html,
        get_swagger_ui_html,
        get_swagger_ui_oauth2_redirect_html,
    )
    from fastapi.responses import HTMLResponse  # noqa: PLC0415
    from fastapi.staticfiles import StaticFiles  # noqa: PLC0415

    assets = str(files("fastapi_offline") / "static")
    app.mount(DOCS_ASSETS, StaticFiles(directory=assets), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="lore API",
            oauth2_redirect_url="/docs/oauth2-redirect",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png",
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title="lore API",
            redoc_js_url=f"{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{DOCS_ASSETS}/favicon.png",
            with_google_fonts=False,
        )


OPEN_PATHS = frozenset({"/healthz", "/metrics"})  # the routes that take no API key (api/auth.py)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with the bearer key declared on every route that needs one."""
    if app.openapi_schema is None:
        document = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            routes=app.routes,
        )
        document.setdefault("components", {})["securitySchemes"] = {
            "apiKey": {
                "type": "http",
                "scheme": "bearer",
                "description": "An API key: `Authorization: Bearer lore_...` (`lore keys create`).",
            }
        }
        for path, operations in document["paths"].items():
            if path not in OPEN_PATHS:
                for operation in operations.values():
                    operation["security"] = [{"apiKey": []}]
        app.openapi_schema = document
    return app.openapi_schema


def serve_in_thread(app: FastAPI, timeout_s: float = 120.0) -> tuple[str, Any]:
    """Run `app` with uvicorn on a free port of 127.0.0.1 in a daemon thread (tests, benchmarks,
    `lore mcp`); returns its URL and the uvicorn server: set `should_exit` to stop it."""
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    import uvicorn  # noqa: PLC0415

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="lore-api", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("lore's API did not start")
        time.sleep(0.05)
    return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", server
