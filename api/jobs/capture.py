"""spa-capture jobs: server-side capture of a single-page app with the explorer (spa_phases/),
the job row kept up to date, and what was learned stored with the site."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import anyio.to_thread

from api.jobs.base import JobRunner, Outcome
from crawl import CrawlError, Fetcher, Renderer
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

log = logging.getLogger(__name__)


def capture_spec(request: dict[str, object]) -> CaptureSpec:
    return CaptureSpec(
        url=str(request["url"]),
        address=str(request.get("address") or ""),
        explore=bool(request.get("explore", True)),
        max_actions=int(str(request.get("maxActions", 20))),
        run_recipe=bool(request.get("runRecipe", True)),
        max_items=int(str(request.get("maxItems", 200))),
    )


class CaptureJobRunner(JobRunner):
    """A spa-capture job: the explorer in headless Chromium; what it learned is stored with the
    site."""

    kind = "spa-capture"

    def policy(self) -> Policy | None:
        spa = self.lore.settings.spa
        if spa.policy == "llm":
            assert spa.llm_base_url is not None  # checked when the job was submitted
            return LlmPolicy(spa.llm_base_url, spa.llm_model, spa.llm_api_key)
        return None  # the explorer's deterministic default

    def starting(self) -> str:
        return f"capturing {self.job.request['url']}"

    async def _ingest(self, snapshot: Snapshot) -> SnapshotResult:
        return await anyio.to_thread.run_sync(self.lore.spa.ingest, snapshot)

    def _progress(self, report: CaptureReport) -> None:
        message = f"{report.snapshots} snapshots, {report.chunks} chunks stored"
        self.progress(report.counts(), message, force=True)

    async def work(self) -> Outcome:
        spec = capture_spec(self.job.request)
        fetcher = Fetcher(self.lore.fetch_options)
        renderer = Renderer(fetcher, self.lore.browser_options)
        capture = Capture(
            renderer,
            self._ingest,
            self.job.tenant_id,
            self.job.id,
            ExploreOptions(max_seconds=self.lore.settings.spa.capture_seconds),
            self.policy(),
            self._progress,
        )
        try:
            report = await capture.run(spec)
        except (SpaError, CrawlError) as exc:
            return Outcome("failed", {}, str(exc), "failed")
        finally:
            await renderer.aclose()
            await fetcher.aclose()
        self.lore.catalog.put_site_model(
            self.job.tenant_id, spec.url, urlsplit(spec.url).hostname or "", report.to_json()
        )
        page_type = report.understanding.page_type if report.understanding else "unknown"
        items = f", {report.recipe.saved} list items saved" if report.recipe else ""
        message = (
            f"{page_type} page: {len(report.steps)} actions, {report.snapshots} snapshots, "
            f"{report.chunks} chunks stored, {report.superseded} superseded{items}; "
            f"stopped by {report.stopped_by or 'no exploration'}"
        )
        return Outcome("completed", report.counts(), None, message)
