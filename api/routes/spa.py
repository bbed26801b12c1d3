"""/knowledge/spa: DOM snapshots from a browser extension, and server-side capture jobs."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter, status

from api.deps import LoreDep
from api.errors import ApiError
from api.schemas import SnapshotRequest, SnapshotResponse

router = APIRouter(prefix="/knowledge/spa", tags=["spa"])


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
    return SnapshotResponse(
        document_id=result.document_id,
        phase=result.phase,
        regions=result.regions,
        chunks=result.chunks,
        embedded=result.embedded,
        known=result.known,
        superseded=result.superseded,
        flagged=result.flagged,
        changed_scopes=list(result.changed_scopes),
    )
