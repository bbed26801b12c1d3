from __future__ import annotations

from fastapi import APIRouter

from api.deps import LoreDep
from api.schemas import Health
from retrieval import ChunkFilter

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health, response_model_by_alias=True)
def healthz(lore: LoreDep) -> Health:
    from importlib.metadata import version  # noqa: PLC0415

    return Health(
        status="ok",
        version=version("lore"),
        embedding_model=lore.embedder.name,
        chunks=lore.store.count(
            ChunkFilter(tenant_ids=(lore.tenant,), include_superseded=True, include_flagged=True)
        ),
        documents=lore.catalog.count_documents(lore.tenant),
    )
