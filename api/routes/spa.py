"""/knowledge/spa: DOM snapshots from a browser extension, and server-side capture jobs."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter, status

from api.deps import Authenticated, LoreDep, WorkerDep
from api.errors import ApiError
from api.schemas import (
    CaptureRequest,
    JobAccepted,
    SiteModelList,
    SiteModelView,
    SnapshotRequest,
    SnapshotResponse,
)

router = APIRouter(prefix="/knowledge/spa", tags=["spa"], dependencies=[Authenticated])


@router.post("/snapshots", status_code=status.HTTP_201_CREATED, response_model=SnapshotResponse)
async def snapshot(body: SnapshotRequest, lore: LoreDep) -> SnapshotResponse:
    """Store a snapshot: `initial` replaces the page's load-time content; `post_interaction`
    adds only what is new, tagged with `triggerAction`, and supersedes what it contradicts."""
    try:
        result = await anyio.to_thread.run_sync(
            lambda: lore.ingest_snapshot(
                body.url, body.phase, body.dom, body.trigger_action, body.title
            )
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    return SnapshotResponse.of(result)


@router.post("/capture", status_code=status.HTTP_202_ACCEPTED, response_model=JobAccepted)
def capture(body: CaptureRequest, lore: LoreDep, worker: WorkerDep) -> JobAccepted:
    """Queue a server-side capture in headless Chromium: the initial phase, then (with
    `explore`) each interaction that reveals content; poll `GET /knowledge/jobs/{jobId}`."""
    try:
        job = lore.submit_capture(body.url, body.explore, body.max_actions, body.run_recipe)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    worker.submit(job.id)
    return JobAccepted(job_id=job.id, status=job.status)


@router.get("/models", response_model=SiteModelList)
def site_models(domain: str, lore: LoreDep) -> SiteModelList:
    """What captures learned about this domain's pages, newest first."""
    models = lore.catalog.site_models(lore.tenant, domain)
    return SiteModelList(
        models=[
            SiteModelView(url=m.url, domain=m.domain, updated_at=m.updated_at, model=m.model)
            for m in models
        ]
    )
