"""/agent/context, the one call an agent makes before planning, and /skills, what it learned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated
from uuid import UUID

import anyio.to_thread
from fastapi import APIRouter, Query, status

from api.deps import Authenticated, LoreDep, SearchSlots
from api.errors import ApiError
from api.observe import Kpis, kpis
from api.schemas import (
    AgentContextRequest,
    AgentContextResponse,
    AgentScanRequest,
    AgentScanResponse,
    ChunkView,
    KpiDay,
    OutcomeRequest,
    SkillKpis,
    SkillList,
    SkillPage,
    SkillRequest,
    SkillView,
    SnapshotResponse,
)
from api.service import page_domain
from retrieval.skills import FailedState, SuccessfulAction

router = APIRouter(tags=["agent"], dependencies=[Authenticated])


@router.post("/agent/context", response_model=AgentContextResponse)
async def agent_context(
    body: AgentContextRequest, lore: LoreDep, searches: SearchSlots
) -> AgentContextResponse:
    """Knowledge for the page and query (org first), skill hints for the goal on this domain,
    and what captures learned about the page. With `parameter`: the chunks most likely to hold
    that value. With `dom`: the page scanned for the goal (as /agent/scan), then stored as a
    snapshot (`post_interaction` after `lastAction`, else `initial`) before the search, so
    what the agent sees now is part of the answer."""
    scan: AgentScanResponse | None = None
    snapshot: SnapshotResponse | None = None
    try:
        if body.dom is not None:
            dom = body.dom
            phase = "post_interaction" if body.last_action else "initial"
            # Read first: a DOM that is not HTML is refused before anything is stored. A page
            # with no control to act on is still knowledge (its scan lists no elements).
            scanned = await lore.scan_page(
                body.url,
                dom,
                body.goal or body.query,
                body.max_elements,
                limiter=searches,
                require_elements=False,
            )
            stored = await anyio.to_thread.run_sync(
                lambda: lore.ingest_snapshot(body.url, phase, dom, body.last_action)
            )
            scan, snapshot = AgentScanResponse.of(scanned), SnapshotResponse.of(stored)
        context = await anyio.to_thread.run_sync(
            lambda: lore.agent_context(body.url, body.query, body.goal, body.k, body.parameter),
            limiter=searches,
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    if body.goal:
        lore.kpis.lookup(lore.tenant, found=bool(context.skills))
    return AgentContextResponse(
        chunks=[ChunkView.of(h) for h in context.hits],
        has_org_knowledge=context.has_org_knowledge,
        skills=[SkillView.of(h.skill, h) for h in context.skills],
        site_model=context.site_model,
        scan=scan,
        snapshot=snapshot,
    )


@router.post("/agent/scan", response_model=AgentScanResponse)
async def agent_scan(
    body: AgentScanRequest, lore: LoreDep, searches: SearchSlots
) -> AgentScanResponse:
    """The agent's own page as it sees it: every link, button and form field with a stable
    selector, the page's patterns (listings, search, pagination, filters, sort, login, cart,
    dialogs, consent banners, tabs, accordions, forms), suggested next actions with their
    reason, and the elements ranked for `goal` (`maxElements` from `offset`), with a compact
    text for a prompt. The DOM is read, not stored (`/agent/context` with `dom` stores it)."""
    try:
        result = await lore.scan_page(
            body.url,
            body.dom,
            body.goal,
            body.max_elements,
            body.offset,
            body.viewport_only,
            limiter=searches,
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    return AgentScanResponse.of(result)


@router.post("/skills", status_code=status.HTTP_201_CREATED, response_model=SkillView)
async def record_skill(body: SkillRequest, lore: LoreDep) -> SkillView:
    """Remember what worked when another action failed; the same goal and failure on a domain
    updates one skill."""
    try:
        domain = page_domain(body.url)
        lore.check_domain(body.url)
        skill = await anyio.to_thread.run_sync(
            lambda: lore.skills.record(
                lore.tenant,
                domain,
                body.goal,
                FailedState(**body.failed_state.model_dump()),
                SuccessfulAction(**body.successful_action.model_dump()),
            )
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    return SkillView.of(skill)


@router.post("/skills/{skill_id}/outcome", response_model=SkillView)
def skill_outcome(skill_id: UUID, body: OutcomeRequest, lore: LoreDep) -> SkillView:
    """Count one more use of a skill: it worked (`success: true`) or not."""
    skill = lore.skills.outcome(lore.tenant, str(skill_id), body.success)
    lore.kpis.outcome(lore.tenant, body.success)
    return SkillView.of(skill)


@router.get("/skills", response_model=SkillPage)
def list_skills(
    lore: LoreDep,
    domain: Annotated[
        str | None, Query(min_length=1, max_length=255, description="Only this domain's skills.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
) -> SkillPage:
    """The key's skills, most recently used first."""
    skills, total = lore.skills.listing(lore.tenant, domain, limit, offset)
    return SkillPage(skills=[SkillView.of(s) for s in skills], total=total)


@router.delete("/skills/{skill_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_skill(skill_id: UUID, lore: LoreDep) -> None:
    """Forget a skill (one that misleads agents, say)."""
    lore.skills.delete(lore.tenant, str(skill_id))


@router.get("/skills/kpis", response_model=SkillKpis)
def skill_kpis(
    lore: LoreDep,
    days: Annotated[int, Query(ge=1, le=3660, description="The last this many.")] = 30,
) -> SkillKpis:
    """The skills library's KPIs for this key's tenant, a day at a time: hit rate (lookups that
    found a skill; target 10 %) and effectiveness (reported uses that worked; target 60 %)."""
    since = (datetime.now(UTC) - timedelta(days=days - 1)).strftime("%Y-%m-%d")
    lore.kpis.flush(lore)  # what was counted since the last flush
    stats = lore.catalog.skill_stats(lore.tenant, since)
    return SkillKpis(
        days=[_kpi_day(s.day, kpis([s])) for s in stats], total=_kpi_day("total", kpis(stats))
    )


def _kpi_day(day: str, k: Kpis) -> KpiDay:
    return KpiDay(
        day=day,
        lookups=k.lookups,
        hits=k.hits,
        successes=k.successes,
        failures=k.failures,
        hit_rate=round(k.hit_rate, 4),
        effectiveness=round(k.effectiveness, 4),
    )


@router.get("/skills/search", response_model=SkillList)
async def search_skills(
    lore: LoreDep,
    url: Annotated[str, Query(min_length=1, description="A page of the domain.")],
    goal: Annotated[str, Query(min_length=1, max_length=1000)],
    k: Annotated[int, Query(ge=1, le=20)] = 3,
) -> SkillList:
    try:
        domain = page_domain(url)
        lore.check_domain(url)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    hits = await anyio.to_thread.run_sync(lambda: lore.skills.search(lore.tenant, domain, goal, k))
    lore.kpis.lookup(lore.tenant, found=bool(hits))
    return SkillList(skills=[SkillView.of(h.skill, h) for h in hits])
