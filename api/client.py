"""A typed client for the agent side, sync and async from one definition.

Each endpoint is written once, in `calls`, as a function that builds a `Call`: the HTTP request
and how to read its answer. `LoreClient` sends calls over `httpx.Client`, `AsyncLoreClient` over
`httpx.AsyncClient`; neither repeats an endpoint:

    from api.client import LoreClient, calls

    with LoreClient("http://127.0.0.1:8741", api_key=None) as lore:
        context = lore(calls.agent_context("https://app.example.com/p", goal="Add a patient"))
        for skill in context.skills:
            print(skill.hint)

    async with AsyncLoreClient("http://127.0.0.1:8741") as lore:
        context = await lore(calls.agent_context(url, query="how do I add a patient?"))

This module imports only httpx and the standard library, so an agent can use it without the
server's dependencies being loaded.
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, TypeVar

import httpx

T = TypeVar("T")


class LoreError(Exception):
    """An error answer: `status` (HTTP), `code` and `message` as the API sent them."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    read: Callable[[Any], T]
    json: dict[str, Any] | None = None
    params: dict[str, Any] | None = None
    files: list[tuple[str, tuple[str, bytes]]] | None = None  # multipart uploads
    data: dict[str, str] | None = None  # multipart form fields
    wait_s: float | None = None  # a longer read timeout than the client's (embedding a file)

    def send(self) -> dict[str, Any]:
        """httpx request arguments."""
        sent: dict[str, Any] = {"json": self.json, "params": self.params}
        if self.files is not None:
            sent |= {"files": self.files, "data": self.data or {}}
        if self.wait_s is not None:
            sent["timeout"] = httpx.Timeout(10.0, read=self.wait_s)
        return sent


# What comes back -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str
    url: str
    title: str
    heading_path: list[str]
    score: float
    phase: str
    trigger_action: str | None
    fetched_at: str
    scope: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Chunk:
        return cls(
            id=data["id"],
            text=data["text"],
            url=data["url"],
            title=data["title"],
            heading_path=list(data["headingPath"]),
            score=float(data["score"]),
            phase=data["phase"],
            trigger_action=data.get("triggerAction"),
            fetched_at=data["fetchedAt"],
            scope=data.get("scope"),
            metadata=dict(data.get("metadata") or {}),
        )


@dataclass(frozen=True)
class Skill:
    id: str
    domain: str
    goal: str
    hint: str
    success_count: int
    failure_count: int
    success_rate: float
    failed_action: str = ""
    successful_action: str = ""
    score: float | None = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Skill:
        return cls(
            id=data["id"],
            domain=data["domain"],
            goal=data["goal"],
            hint=data["hint"],
            failed_action=data["failedState"]["action"],
            successful_action=data["successfulAction"]["action"],
            success_count=int(data["successCount"]),
            failure_count=int(data["failureCount"]),
            success_rate=float(data["successRate"]),
            score=data.get("score"),
        )


@dataclass(frozen=True)
class AgentContext:
    chunks: list[Chunk]
    has_org_knowledge: bool
    skills: list[Skill]
    site_model: dict[str, Any] | None = None
    scan: dict[str, Any] | None = None  # with a DOM: as POST /agent/scan answers
    snapshot: dict[str, Any] | None = None  # with a DOM: what storing it did

    @classmethod
    def of(cls, data: dict[str, Any]) -> AgentContext:
        return cls(
            chunks=[Chunk.of(c) for c in data["chunks"]],
            has_org_knowledge=bool(data["hasOrgKnowledge"]),
            skills=[Skill.of(s) for s in data["skills"]],
            site_model=data.get("siteModel"),
            scan=data.get("scan"),
            snapshot=data.get("snapshot"),
        )


@dataclass(frozen=True)
class Job:
    id: str
    kind: str
    status: str
    progress: float
    message: str
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    @classmethod
    def of(cls, data: dict[str, Any]) -> Job:
        return cls(
            id=data["id"],
            kind=data["kind"],
            status=data["status"],
            progress=float(data["progress"]),
            message=data["message"],
            counts=dict(data.get("counts") or {}),
            error=data.get("error"),
        )


@dataclass(frozen=True)
class Document:
    id: str
    url: str
    title: str
    doc_type: str
    source: str
    chunk_count: int
    updated_at: str
    metadata: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Document:
        return cls(
            id=data["id"],
            url=data["url"],
            title=data["title"],
            doc_type=data["docType"],
            source=data["source"],
            chunk_count=int(data["chunkCount"]),
            updated_at=data["updatedAt"],
            metadata=dict(data.get("metadata") or {}),
        )


@dataclass(frozen=True)
class Schedule:
    """A job made every `interval_minutes` (a re-crawl); `request` as job views show it."""

    id: str
    request: dict[str, Any]
    interval_minutes: int
    next_run_at: str
    last_job_id: str | None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Schedule:
        return cls(
            id=data["id"],
            request=dict(data["request"]),
            interval_minutes=int(data["intervalMinutes"]),
            next_run_at=data["nextRunAt"],
            last_job_id=data.get("lastJobId"),
        )


@dataclass(frozen=True)
class DocumentText:
    """A document whole: `markdown` (None for an SPA page's phases) and its chunks in order."""

    document: Document
    markdown: str | None
    chunks: list[dict[str, Any]]

    @classmethod
    def of(cls, data: dict[str, Any]) -> DocumentText:
        return cls(Document.of(data["document"]), data.get("markdown"), list(data["chunks"]))


# The endpoints, once ---------------------------------------------------------------------------


def _camel(**values: Any) -> dict[str, Any]:
    out = {}
    for key, value in values.items():
        if value is not None:
            head, *rest = key.split("_")
            out[head + "".join(p.title() for p in rest)] = value
    return out


def agent_context(
    url: str,
    query: str | None = None,
    goal: str | None = None,
    k: int = 8,
    parameter: str | None = None,
    dom: str | None = None,
    last_action: str | None = None,
    max_elements: int | None = None,
) -> Call[AgentContext]:
    """What to know before planning a step on `url` (see POST /agent/context); with `dom`,
    the page is also scanned for the goal and stored as a snapshot."""
    body = _camel(
        url=url,
        query=query,
        goal=goal,
        k=k,
        parameter=parameter,
        dom=dom,
        last_action=last_action,
        max_elements=max_elements,
    )
    return Call("POST", "/agent/context", AgentContext.of, json=body)


def scan(
    url: str,
    dom: str,
    goal: str | None = None,
    max_elements: int = 50,
    offset: int = 0,
    viewport_only: bool = False,
) -> Call[dict[str, Any]]:
    """The agent's page as elements, patterns and suggested actions (see POST /agent/scan)."""
    body = _camel(
        url=url,
        dom=dom,
        goal=goal,
        max_elements=max_elements,
        offset=offset,
        viewport_only=viewport_only,
    )
    return Call("POST", "/agent/scan", dict, json=body)


def resolve(url: str, query: str | None = None, k: int = 8) -> Call[list[Chunk]]:
    params = _camel(url=url, query=query, k=k)
    return Call(
        "GET", "/knowledge/resolve", lambda d: [Chunk.of(c) for c in d["chunks"]], params=params
    )


def search(query: str, k: int = 10, **filters: Any) -> Call[list[Chunk]]:
    """POST /knowledge/query; filters in snake_case (domains, url_prefixes, phases, ...)."""
    return Call(
        "POST",
        "/knowledge/query",
        lambda d: [Chunk.of(c) for c in d["chunks"]],
        json=_camel(query=query, k=k, **filters),
    )


def record_skill(
    url: str,
    goal: str,
    failed_action: str,
    successful_action: str,
    failed_element: str = "",
    successful_element: str = "",
    error_type: str = "",
    strategy: str = "",
) -> Call[Skill]:
    """Remember that `successful_action` worked where `failed_action` did not, for `goal`."""
    body = {
        "url": url,
        "goal": goal,
        "failedState": {
            "action": failed_action,
            "elementDescription": failed_element,
            "errorType": error_type,
        },
        "successfulAction": {
            "action": successful_action,
            "elementDescription": successful_element,
            "strategy": strategy,
        },
    }
    return Call("POST", "/skills", Skill.of, json=body)


def skill_outcome(skill_id: str, success: bool) -> Call[Skill]:
    return Call("POST", f"/skills/{skill_id}/outcome", Skill.of, json={"success": success})


def search_skills(url: str, goal: str, k: int = 3) -> Call[list[Skill]]:
    return Call(
        "GET",
        "/skills/search",
        lambda d: [Skill.of(s) for s in d["skills"]],
        params={"url": url, "goal": goal, "k": k},
    )


def snapshot(
    url: str, phase: str, dom: str, trigger_action: str | None = None
) -> Call[dict[str, Any]]:
    """A DOM snapshot from the agent's browser (phase 'initial' or 'post_interaction')."""
    body = _camel(url=url, phase=phase, dom=dom, trigger_action=trigger_action)
    return Call("POST", "/knowledge/spa/snapshots", dict, json=body)


def _link(url: str | list[str], strategy: str, options: dict[str, Any]) -> dict[str, Any]:
    starts = {"url": url} if isinstance(url, str) else {"urls": list(url)}
    return _camel(**starts, strategy=strategy, **options)


def index_link(url: str | list[str], strategy: str = "single", **options: Any) -> Call[Job]:
    """Queue a crawl of `url` (or of a batch of URLs); options in snake_case (max_pages,
    headers, cookies, metadata, webhook, ...)."""
    return Call(
        "POST",
        "/knowledge/index-link",
        lambda d: Job(d["jobId"], "index-link", d["status"], 0.0, ""),
        json=_link(url, strategy, options),
    )


def create_schedule(
    url: str | list[str],
    interval_minutes: int,
    strategy: str = "single",
    run_now: bool = True,
    **options: Any,
) -> Call[Schedule]:
    """Re-crawl `url` every `interval_minutes` (options as `index_link` takes them)."""
    body = {
        "intervalMinutes": interval_minutes,
        "runNow": run_now,
        "indexLink": _link(url, strategy, options),
    }
    return Call("POST", "/knowledge/schedules", Schedule.of, json=body)


def schedule(schedule_id: str) -> Call[Schedule]:
    return Call("GET", f"/knowledge/schedules/{schedule_id}", Schedule.of)


def schedules() -> Call[list[Schedule]]:
    return Call("GET", "/knowledge/schedules", lambda d: [Schedule.of(s) for s in d["schedules"]])


def delete_schedule(schedule_id: str) -> Call[None]:
    return Call("DELETE", f"/knowledge/schedules/{schedule_id}", lambda _: None)


def ingest(
    files: list[tuple[str, bytes]],
    url: str | None = None,
    title: str | None = None,
    metadata: dict[str, str] | None = None,
    wait_s: float = 3600.0,
) -> Call[dict[str, Any]]:
    """Upload files (name, bytes): `{files: [...], indexed, failed}` with a result per file.
    A single file that fails, or all of several, raise LoreError."""
    data = {k: v for k, v in (("url", url), ("title", title)) if v}
    if metadata:
        data["metadata"] = _json.dumps(metadata)
    return Call(
        "POST",
        "/knowledge/ingest",
        dict,
        files=[("files", (name, content)) for name, content in files],
        data=data,
        wait_s=wait_s,
    )


def job_urls(
    job_id: str, state: list[str] | None = None, limit: int = 100, offset: int = 0
) -> Call[list[dict[str, Any]]]:
    """The URLs a job found, in discovery order ({url, state, reason, ...})."""
    params = _camel(state=state, limit=limit, offset=offset)
    return Call("GET", f"/knowledge/jobs/{job_id}/urls", lambda d: list(d["urls"]), params=params)


def job(job_id: str) -> Call[Job]:
    return Call("GET", f"/knowledge/jobs/{job_id}", Job.of)


def convert(url: str) -> Call[dict[str, Any]]:
    """The page at `url` as Markdown ({url, title, markdown, ...}), stored nowhere."""
    return Call("POST", "/knowledge/convert", dict, json={"url": url})


def jobs(
    status: list[str] | None = None, kind: list[str] | None = None, limit: int = 50, offset: int = 0
) -> Call[list[Job]]:
    """The key's jobs, newest first (GET /knowledge/jobs)."""
    params = _camel(status=status, kind=kind, limit=limit, offset=offset)
    return Call("GET", "/knowledge/jobs", lambda d: [Job.of(j) for j in d["jobs"]], params=params)


def cancel_job(job_id: str) -> Call[Job]:
    return Call("POST", f"/knowledge/jobs/{job_id}/cancel", Job.of)


def _document_filters(
    url_prefix: str | None,
    domain: str | None,
    doc_type: str | None,
    source: str | None,
    title: str | None,
) -> dict[str, Any]:
    return {
        key: value
        for key, value in (
            ("urlPrefix", url_prefix),
            ("domain", domain),
            ("type", doc_type),
            ("source", source),
            ("title", title),
        )
        if value is not None
    }


def documents(
    url_prefix: str | None = None,
    domain: str | None = None,
    doc_type: str | None = None,
    source: str | None = None,
    title: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Call[list[Document]]:
    """The key's documents, most recently updated first; the filters combine."""
    params = _document_filters(url_prefix, domain, doc_type, source, title)
    return Call(
        "GET",
        "/knowledge/documents",
        lambda d: [Document.of(x) for x in d["documents"]],
        params={**params, "limit": limit, "offset": offset},
    )


def document(document_id: str, history: bool = False) -> Call[DocumentText]:
    return Call(
        "GET", f"/knowledge/documents/{document_id}", DocumentText.of, params={"history": history}
    )


def delete_document(document_id: str) -> Call[None]:
    return Call("DELETE", f"/knowledge/documents/{document_id}", lambda _: None)


def delete_documents(
    url_prefix: str | None = None,
    domain: str | None = None,
    doc_type: str | None = None,
    source: str | None = None,
    title: str | None = None,
) -> Call[int]:
    """Delete every document the filters select (at least one); how many were deleted."""
    params = _document_filters(url_prefix, domain, doc_type, source, title)
    return Call("DELETE", "/knowledge/documents", lambda d: int(d["deleted"]), params=params)


def skills(domain: str | None = None, limit: int = 50, offset: int = 0) -> Call[list[Skill]]:
    params = _camel(domain=domain, limit=limit, offset=offset)
    return Call("GET", "/skills", lambda d: [Skill.of(s) for s in d["skills"]], params=params)


def delete_skill(skill_id: str) -> Call[None]:
    return Call("DELETE", f"/skills/{skill_id}", lambda _: None)


def spa_capture(
    url: str, explore: bool = True, max_actions: int = 20, run_recipe: bool = True
) -> Call[Job]:
    """Capture an app in headless Chromium (a job; poll `job`)."""
    body = _camel(url=url, explore=explore, max_actions=max_actions, run_recipe=run_recipe)
    return Call(
        "POST",
        "/knowledge/spa/capture",
        lambda d: Job(d["jobId"], "spa-capture", d["status"], 0.0, ""),
        json=body,
    )


def site_models(domain: str) -> Call[list[dict[str, Any]]]:
    """What captures learned about the domain's pages ({url, domain, updatedAt, model})."""
    return Call(
        "GET", "/knowledge/spa/models", lambda d: list(d["models"]), params={"domain": domain}
    )


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/healthz", dict)


def skill_kpis(days: int = 30) -> Call[dict[str, Any]]:
    """The skills library's KPIs by day ({days: [...], total}): hit rate, effectiveness."""
    return Call("GET", "/skills/kpis", dict, params={"days": days})


def admin_tenants() -> Call[list[dict[str, Any]]]:
    """Admin key: tenants with their allowedDomains and active keys."""
    return Call("GET", "/admin/tenants", lambda d: list(d["tenants"]))


def update_tenant(tenant: str, allowed_domains: list[str]) -> Call[dict[str, Any]]:
    body = {"allowedDomains": allowed_domains}
    return Call("PUT", f"/admin/tenants/{tenant}", dict, json=body)


def admin_keys(tenant: str | None = None) -> Call[list[dict[str, Any]]]:
    """Admin key: every key (or a tenant's), never the keys themselves."""
    return Call("GET", "/admin/keys", lambda d: list(d["keys"]), params=_camel(tenant=tenant))


def create_key(
    tenant: str,
    name: str = "",
    allowed_domains: list[str] | None = None,
    rate_limit: int | None = None,
    admin: bool = False,
) -> Call[dict[str, Any]]:
    """Admin key: a new key ({key, record}); the key is in this answer only."""
    body = _camel(tenant=tenant, name=name, allowed_domains=allowed_domains, rate_limit=rate_limit)
    return Call("POST", "/admin/keys", dict, json={**body, "admin": admin})


def revoke_key(key_id: str) -> Call[None]:
    return Call("DELETE", f"/admin/keys/{key_id}", lambda _: None)


class calls:
    agent_context = staticmethod(agent_context)
    scan = staticmethod(scan)
    resolve = staticmethod(resolve)
    search = staticmethod(search)
    record_skill = staticmethod(record_skill)
    skill_outcome = staticmethod(skill_outcome)
    search_skills = staticmethod(search_skills)
    snapshot = staticmethod(snapshot)
    index_link = staticmethod(index_link)
    job = staticmethod(job)
    job_urls = staticmethod(job_urls)
    ingest = staticmethod(ingest)
    jobs = staticmethod(jobs)
    convert = staticmethod(convert)
    cancel_job = staticmethod(cancel_job)
    documents = staticmethod(documents)
    document = staticmethod(document)
    delete_document = staticmethod(delete_document)
    delete_documents = staticmethod(delete_documents)
    skills = staticmethod(skills)
    delete_skill = staticmethod(delete_skill)
    create_schedule = staticmethod(create_schedule)
    schedules = staticmethod(schedules)
    delete_schedule = staticmethod(delete_schedule)
    schedule = staticmethod(schedule)
    spa_capture = staticmethod(spa_capture)
    site_models = staticmethod(site_models)
    health = staticmethod(health)
    skill_kpis = staticmethod(skill_kpis)
    admin_tenants = staticmethod(admin_tenants)
    update_tenant = staticmethod(update_tenant)
    admin_keys = staticmethod(admin_keys)
    create_key = staticmethod(create_key)
    revoke_key = staticmethod(revoke_key)


# Two transports --------------------------------------------------------------------------------


def _answer(call: Call[T], response: httpx.Response) -> T:
    if response.status_code >= 400:
        try:
            body = response.json()
            code, message = str(body["error"]), str(body["message"])
        except (ValueError, KeyError, TypeError):
            code, message = "http_error", response.text[:500]
        raise LoreError(response.status_code, code, message)
    return call.read(None if response.status_code == 204 else response.json())


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class LoreClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 30.0):
        self._http = httpx.Client(base_url=base_url, headers=_headers(api_key), timeout=timeout_s)

    def __call__(self, call: Call[T]) -> T:
        response = self._http.request(call.method, call.path, **call.send())
        return _answer(call, response)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LoreClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncLoreClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 30.0):
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(api_key), timeout=timeout_s
        )

    async def __call__(self, call: Call[T]) -> T:
        response = await self._http.request(call.method, call.path, **call.send())
        return _answer(call, response)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncLoreClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
