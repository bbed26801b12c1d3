from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from api.deps import LoreDep, WorkerDep
from api.schemas import Health, JobsStatus
from retrieval import ChunkFilter

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, response_model_by_alias=True)
def healthz(lore: LoreDep, worker: WorkerDep) -> Health:
    """`degraded` while the process that runs `lore serve`'s jobs is down (it is started again
    at once, then with a growing delay while it keeps dying): queries are answered, new and
    running jobs wait for it."""
    from importlib.metadata import version  # noqa: PLC0415

    jobs = worker.health()
    return Health(
        status="ok" if jobs.alive else "degraded",
        jobs=JobsStatus(mode=jobs.mode, alive=jobs.alive, restarts=jobs.restarts, pid=jobs.pid),
        version=version("lore"),
        embedding_model=lore.embedder.name,
        chunks=lore.store.count(
            ChunkFilter(tenant_ids=(lore.tenant,), include_superseded=True, include_flagged=True)
        ),
        documents=lore.catalog.count_documents(lore.tenant),
    )


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
def metrics(request: Request) -> Response:
    """Prometheus metrics of every lore process on this catalog (no key: aggregates only):
    request latency per route, jobs and crawled URLs by outcome and reason, chunks embedded,
    queue depth, store size, and the skill KPIs (hit rate, effectiveness)."""
    registry = request.app.state.metrics.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
