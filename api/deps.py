"""Dependency aliases for routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from api.jobs import JobWorker
from api.service import Lore


def _lore(request: Request) -> Lore:
    lore: Lore = request.app.state.lore
    return lore


def _worker(request: Request) -> JobWorker:
    worker: JobWorker = request.app.state.worker
    return worker


LoreDep = Annotated[Lore, Depends(_lore)]
WorkerDep = Annotated[JobWorker, Depends(_worker)]
