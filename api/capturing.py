"""spa-capture jobs: server-side capture of a single-page app with the explorer (spa_phases/),
the job row kept up to date, and what was learned stored with the site."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import anyio.to_thread

from api.crawling import finish_job
from crawl import CrawlError, Fetcher, Renderer
from retrieval import Job, utcnow
from spa_phases import (
    Capture,
    CaptureReport,
    CaptureSpec,
    ExploreOptions,
    LlmPolicy,
    Policy,
    Snapshot,
    SnapshotResult,
    SpaError,
)

if TYPE_CHECKING:
    from api.service import Lore

log = logging.getLogger(__name__)


def capture_spec(request: dict[str, object]) -> CaptureSpec:
    return CaptureSpec(
        url=str(request["url"]),
        explore=bool(request.get("explore", True)),
        max_actions=int(str(request.get("maxActions", 20))),
        run_recipe=bool(request.get("runRecipe", True)),
        max_items=int(str(request.get("maxItems", 200))),
    )


class CaptureJobRunner:
    def __init__(self, lore: Lore, job_id: str, on_progress: Callable[[Job], None] | None = None):
        self._lore = lore
        self._job = lore.catalog.get_job(job_id)
        self._on_progress = on_progress

    def policy(self) -> Policy | None:
        spa = self._lore.settings.spa
        if spa.policy == "llm":
            assert spa.llm_base_url is not None  # checked when the job was submitted
            return LlmPolicy(spa.llm_base_url, spa.llm_model, spa.llm_api_key)
        return None  # the explorer's deterministic default

    async def _ingest(self, snapshot: Snapshot) -> SnapshotResult:
        return await anyio.to_thread.run_sync(self._lore.spa.ingest, snapshot)

    def _progress(self, report: CaptureReport) -> None:
        job = self._lore.catalog.update_job(
            self._job.id,
            counts=report.counts(),
            message=f"{report.snapshots} snapshots, {report.chunks} chunks stored",
        )
        if self._on_progress is not None:
            self._on_progress(job)

    async def run(self) -> Job:
        job = self._job
        spec = capture_spec(job.request)
        self._lore.catalog.update_job(
            job.id, status="running", started_at=utcnow(), message=f"capturing {spec.url}"
        )
        fetcher = Fetcher(self._lore.fetch_options)
        renderer = Renderer(fetcher, self._lore.browser_options)
        capture = Capture(
            renderer,
            self._ingest,
            job.tenant_id,
            job.id,
            ExploreOptions(max_seconds=self._lore.settings.spa.capture_seconds),
            self.policy(),
            self._progress,
        )
        try:
            report = await capture.run(spec)
        except (SpaError, CrawlError) as exc:
            return self._finish("failed", {}, str(exc), "failed")
        except Exception as exc:
            log.exception("spa-capture job %s crashed", job.id)
            return self._finish("failed", {}, f"internal error: {exc}", "failed")
        finally:
            await renderer.aclose()
            await fetcher.aclose()
        understood = report.to_json()
        self._lore.catalog.put_site_model(
            job.tenant_id, spec.url, urlsplit(spec.url).hostname or "", understood
        )
        page_type = report.understanding.page_type if report.understanding else "unknown"
        items = f", {report.recipe.saved} list items saved" if report.recipe else ""
        message = (
            f"{page_type} page: {len(report.steps)} actions, {report.snapshots} snapshots, "
            f"{report.chunks} chunks stored, {report.superseded} superseded{items}; "
            f"stopped by {report.stopped_by or 'no exploration'}"
        )
        return self._finish("completed", report.counts(), None, message)

    def _finish(self, status: str, counts: dict[str, int], error: str | None, message: str) -> Job:
        return finish_job(self._lore, self._job.id, status, counts, error, message)
