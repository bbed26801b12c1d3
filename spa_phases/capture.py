"""Server-side capture of a single-page app: load it in headless Chromium (every request through
lore's safe fetcher), store the `initial` phase, explore, store each change as
`post_interaction`, and on a list-detail page run the recipe that opens every item."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from crawl import FetchError, Renderer
from spa_phases.errors import CaptureError, SnapshotError
from spa_phases.explorer import ExploreOptions, Explorer, PageUnderstanding, Policy, Step
from spa_phases.page_scripts import WATCH_MUTATIONS
from spa_phases.phases import Change, Snapshot, SnapshotResult
from spa_phases.recipes import RecipeReport, run_recipe

log = logging.getLogger(__name__)

Ingest = Callable[[Snapshot], Awaitable[SnapshotResult]]


@dataclass(frozen=True)
class CaptureSpec:
    url: str  # canonical
    address: str = ""  # where to load it, if not at `url`: as asked for (`/app/`, not `/app`)
    explore: bool = True
    max_actions: int = 20
    run_recipe: bool = True  # on a list-detail page, open every item
    max_items: int = 200
    max_list_pages: int = 10


@dataclass
class CaptureReport:
    url: str
    snapshots: int = 0
    chunks: int = 0  # stored over all snapshots
    superseded: int = 0
    flagged: int = 0
    steps: list[Step] = field(default_factory=list)
    breakers: list[str] = field(default_factory=list)
    stopped_by: str = ""
    # Pages its clicks reached, stored under their own URLs (see PageUnderstanding.routes).
    routes: list[str] = field(default_factory=list)
    understanding: PageUnderstanding | None = None
    recipe: RecipeReport | None = None
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        return {
            "snapshots": self.snapshots,
            "chunks": self.chunks,
            "superseded": self.superseded,
            "flagged": self.flagged,
            "actions": len(self.steps),
            "items": self.recipe.saved if self.recipe else 0,
            "itemsFailed": len(self.recipe.failed) if self.recipe else 0,
            "routes": len(self.routes),
        }

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON, as the rest of the API (binding names stay as they are)."""
        data = {
            "url": self.url,
            "counts": self.counts(),
            "steps": [asdict(s) for s in self.steps],
            "breakers": self.breakers,
            "routes": self.routes,
            "stopped_by": self.stopped_by,
            "understanding": self.understanding.to_json() if self.understanding else None,
            "recipe": asdict(self.recipe) if self.recipe else None,
            "seconds": round(self.seconds, 2),
        }
        return dict(_camel(data))


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            (re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k) if _SNAKE.match(k) else k): (
                _camel(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


_SNAKE = re.compile(r"^[a-z]+(_[a-z]+)+$")


class Capture:
    def __init__(
        self,
        renderer: Renderer,
        ingest: Ingest,
        tenant_id: str,
        source_id: str,
        options: ExploreOptions | None = None,
        policy: Policy | None = None,
        progress: Callable[[CaptureReport], None] | None = None,
    ) -> None:
        self._renderer = renderer
        self._ingest = ingest
        self._tenant_id = tenant_id
        self._source_id = source_id
        self._options = options or ExploreOptions()
        self._policy = policy
        self._progress = progress

    async def run(self, spec: CaptureSpec) -> CaptureReport:
        report = CaptureReport(spec.url)
        started = time.monotonic()

        async def sink(
            dom: str,
            trigger: str | None,
            scope_prefix: str | None = None,
            change: Change = "replaced",
            url: str | None = None,
            before: str | None = None,
        ) -> int:
            snapshot = Snapshot(
                tenant_id=self._tenant_id,
                url=url or spec.url,
                phase="initial" if trigger is None else "post_interaction",
                dom=dom,
                trigger_action=trigger,
                source="spa",
                source_id=self._source_id,
                scope_prefix=scope_prefix,
                change=change,
                shown_before=before,
                origin=None if url is None else spec.url,
            )
            try:
                result = await self._ingest(snapshot)
            except SnapshotError as exc:
                if trigger is None and url is None:
                    raise CaptureError(f"{spec.url} shows nothing to index: {exc}") from exc
                log.info("capture: %s: %s", trigger, exc)
                return 0
            report.snapshots += 1
            report.chunks += result.chunks
            report.superseded += result.superseded
            report.flagged += result.flagged
            if self._progress is not None:
                self._progress(report)
            return result.chunks

        async def explorer_sink(
            dom: str, trigger: str | None, change: Change, route: str | None, shown: str | None
        ) -> tuple[int, int]:
            before = report.superseded
            stored = await sink(dom, trigger, change=change, url=route, before=shown)
            return stored, report.superseded - before

        options = replace(self._options, max_actions=spec.max_actions)
        async with self._renderer.page(init_script=WATCH_MUTATIONS) as page:
            try:
                await self._renderer.goto(page, spec.address or spec.url)
            except FetchError as exc:
                raise CaptureError(str(exc)) from exc
            # Stored under the URL asked for, explored from where it ended: a redirect
            # (`/docs` to `/docs/`) is not followed again on each way back.
            start = page.url
            explorer = Explorer(page, explorer_sink, options, self._policy)
            await explorer.settle()
            await explorer.snapshot(None)
            if spec.explore:
                report.understanding = await explorer.run(start)
                report.steps = explorer.steps
                report.breakers = explorer.breakers
                report.routes = explorer.routes
                report.stopped_by = explorer.stopped_by
                understood = report.understanding
                if spec.run_recipe and understood.recipe:
                    await explorer.page.goto(start, wait_until="load")
                    await explorer.settle()
                    report.recipe = await run_recipe(
                        page,
                        understood.recipe,
                        sink,
                        explorer.settle,
                        max_items=spec.max_items,
                        max_pages=spec.max_list_pages,
                    )
            else:
                await explorer.scan()
                report.understanding = explorer.understanding(spec.url)
        report.seconds = time.monotonic() - started
        return report
