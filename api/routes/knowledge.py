"""/knowledge: index links, upload files, resolve and query, list and delete documents."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request, status
from fastapi.responses import JSONResponse
from starlette.datastructures import UploadFile

from api.deps import Authenticated, LoreDep, SearchSlots, WorkerDep
from api.errors import ERROR_RESPONSES, ApiError, status_for
from api.observe import REQUEST_ID
from api.schemas import (
    ChunkView,
    Converted,
    ConvertRequest,
    CrawlUrlList,
    CrawlUrlView,
    DocumentChunk,
    DocumentDetail,
    DocumentList,
    DocumentsDeleted,
    DocumentView,
    IndexLinkRequest,
    IngestedFile,
    IngestFailed,
    IngestResponse,
    JobAccepted,
    JobKind,
    JobList,
    JobStatus,
    JobView,
    QueryRequest,
    QueryResponse,
    ResolveResponse,
    ScheduleList,
    ScheduleRequest,
    ScheduleView,
    ScoreExplanation,
)
from api.service import Upload
from ingest import IngestError
from retrieval import URL_STATES, ChunkFilter, DocumentQuery, check_metadata

router = APIRouter(prefix="/knowledge", tags=["knowledge"], dependencies=[Authenticated])
_READ = 1024 * 1024


MAX_OFFSET = 2**31 - 1  # past any list's end; larger ones overflow SQLite's integers


@router.post("/index-link", status_code=status.HTTP_202_ACCEPTED, response_model=JobAccepted)
def index_link(body: IndexLinkRequest, lore: LoreDep, worker: WorkerDep) -> JobAccepted:
    """Queue a crawl job; poll `GET /knowledge/jobs/{jobId}`, list its URLs with
    `GET /knowledge/jobs/{jobId}/urls`, stop it with `POST /knowledge/jobs/{jobId}/cancel`."""
    try:
        job = lore.submit_link(body.urls or str(body.url), **_link_options(body))
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    worker.submit(job.id)
    return JobAccepted(job_id=job.id, status=job.status)


def _link_options(body: IndexLinkRequest) -> dict[str, Any]:
    return {
        "strategy": body.strategy,
        "max_pages": body.max_pages,
        "max_depth": body.max_depth,
        "include": body.include,
        "exclude": body.exclude,
        "allow_subdomains": body.allow_subdomains,
        "render": body.render,
        "map_only": body.map,
        "webhook": body.webhook.model_dump() if body.webhook else None,
        "headers": body.headers,
        "cookies": body.cookies,
        "metadata": body.metadata,
    }


@router.post("/schedules", status_code=status.HTTP_201_CREATED, response_model=ScheduleView)
def create_schedule(body: ScheduleRequest, lore: LoreDep) -> ScheduleView:
    """Re-crawl a source every `intervalMinutes`: each run is an index-link job (listed in
    `GET /knowledge/jobs`, its request naming the schedule) that stores what changed and
    removes what disappeared. A run is skipped while the previous one has not finished."""
    link = body.index_link
    try:
        schedule = lore.schedule_link(
            body.interval_minutes * 60,
            link.urls or str(link.url),
            run_now=body.run_now,
            **_link_options(link),
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    return ScheduleView.of(schedule)


@router.get("/schedules", response_model=ScheduleList)
def list_schedules(lore: LoreDep) -> ScheduleList:
    return ScheduleList(
        schedules=[ScheduleView.of(s) for s in lore.catalog.list_schedules(lore.tenant)]
    )


@router.get("/schedules/{schedule_id}", response_model=ScheduleView)
def get_schedule(schedule_id: str, lore: LoreDep) -> ScheduleView:
    return ScheduleView.of(lore.catalog.get_schedule(schedule_id, lore.tenant))


@router.delete("/schedules/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_schedule(schedule_id: str, lore: LoreDep) -> None:
    """Stop making jobs (those it made stay, a running one goes on) and forget its login."""
    lore.catalog.delete_schedule(schedule_id, lore.tenant)


@router.post("/convert", response_model=Converted)
async def convert(body: ConvertRequest, lore: LoreDep) -> Converted:
    """A URL as Markdown, stored nowhere: the same fetch safety and extraction as a crawl
    (address guard, size and time limits, the key's allowedDomains after redirects)."""
    try:
        page = await lore.convert(body.url)
    except ValueError as exc:
        raise ApiError(422, "invalid_url", str(exc)) from exc
    return Converted(
        url=page.url,
        title=page.title,
        markdown=page.markdown,
        status_code=page.status,
        content_type=page.content_type,
        fetched_at=page.fetched_at,
    )


@router.get("/jobs", response_model=JobList)
def list_jobs(
    lore: LoreDep,
    status_: Annotated[
        list[JobStatus] | None, Query(alias="status", description="Only jobs in these states.")
    ] = None,
    kind: Annotated[list[JobKind] | None, Query(description="Only jobs of these kinds.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> JobList:
    """The key's jobs, newest first: a lost job id is found here."""
    jobs, total = lore.catalog.list_jobs(lore.tenant, status_ or (), kind or (), limit, offset)
    return JobList(jobs=[JobView.of(j) for j in jobs], total=total)


@router.get("/jobs/{job_id}", response_model=JobView)
def get_job(job_id: str, lore: LoreDep) -> JobView:
    return JobView.of(lore.catalog.get_job(job_id, lore.tenant))


@router.get("/jobs/{job_id}/urls", response_model=CrawlUrlList)
def job_urls(
    job_id: str,
    lore: LoreDep,
    state: Annotated[list[str] | None, Query(description="Only URLs in these states.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> CrawlUrlList:
    """Each URL the job found, in discovery order, with what became of it and why."""
    lore.catalog.get_job(job_id, lore.tenant)
    unknown = set(state or ()) - set(URL_STATES)
    if unknown:
        raise ApiError(422, "invalid_request", f"unknown state {sorted(unknown)}; use {URL_STATES}")
    counts = lore.catalog.count_crawl_urls(job_id)
    urls = lore.catalog.crawl_urls(job_id, tuple(state or ()), limit, offset)
    total = sum(n for s, n in counts.items() if not state or s in state)
    return CrawlUrlList(urls=[CrawlUrlView.of(u) for u in urls], total=total, counts=counts)


@router.post("/jobs/{job_id}/cancel", response_model=JobView)
def cancel_job(job_id: str, lore: LoreDep) -> JobView:
    """Stop a queued or running job; a finished job is returned as it is."""
    return JobView.of(lore.cancel_job(job_id))


def _form_metadata(field: object) -> dict[str, str]:
    if field is None or field == "":
        return {}
    if not isinstance(field, str):
        raise ApiError(422, "invalid_request", "metadata: send a JSON object as a form field")
    try:
        value = json.loads(field)
    except json.JSONDecodeError as exc:
        raise ApiError(422, "invalid_request", f"metadata: not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ApiError(422, "invalid_request", "metadata: a JSON object of strings")
    try:
        return check_metadata(value)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", f"metadata: {exc}") from exc


async def _read_upload(item: UploadFile, limit: int) -> Upload:
    data = bytearray()
    while piece := await item.read(_READ):
        data.extend(piece)
        if len(data) > limit:
            raise ApiError(
                413, "too_large", f"{item.filename} is over the {limit}-byte upload limit"
            )
    return Upload(item.filename or "upload", item.content_type, bytes(data))


@router.post(
    "/ingest",
    status_code=status.HTTP_201_CREATED,
    response_model=IngestResponse,
    responses={422: {"model": IngestFailed, "description": ERROR_RESPONSES[422]["description"]}},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["files"],
                        "properties": {
                            "files": {
                                "type": "array",
                                "items": {"type": "string", "format": "binary"},
                            },
                            "url": {
                                "type": "string",
                                "description": "Declared URL (one file only)",
                            },
                            "title": {"type": "string"},
                            "metadata": {
                                "type": "string",
                                "description": "Custom metadata for every file, a JSON object "
                                'of strings, e.g. {"team": "billing"}: queries filter '
                                "on it (`metadata`).",
                            },
                        },
                    }
                }
            },
        }
    },
)
async def ingest(request: Request, lore: LoreDep) -> IngestResponse | JSONResponse:
    """Upload one or more files (multipart field `files`). Each file is extracted and chunked
    on its own: a file that fails is reported with its reason and stores nothing. One file: its
    error is the response (413, 415, 422). Several: 201 with a result per file when at least one
    was indexed, else 422 with the same body."""
    limit = lore.settings.max_upload_bytes
    declared = int(request.headers.get("content-length") or 0)
    max_files = lore.settings.max_files_per_upload
    if declared > limit * max_files:
        raise ApiError(
            413, "too_large", f"request is {declared} bytes; each file may be at most {limit} bytes"
        )
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        raise ApiError(
            415, "unsupported_type", "send the files as multipart/form-data in the field 'files'"
        )
    form = await request.form(max_files=max_files, max_fields=20, max_part_size=limit)
    try:
        items = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
        if not items:
            raise ApiError(422, "invalid_request", "no file in the multipart field 'files'")
        uploads = [await _read_upload(item, limit) for item in items]
        url = form.get("url")
        title = form.get("title")
        metadata = _form_metadata(form.get("metadata"))
    finally:
        await form.close()
    if len(uploads) == 1 and not uploads[0].data:
        raise ApiError(422, "empty_document", f"{uploads[0].filename} is empty (0 bytes)")
    try:
        outcomes = await anyio.to_thread.run_sync(
            lore.ingest_uploads,
            uploads,
            url if isinstance(url, str) and url else None,
            title if isinstance(title, str) and title else None,
            metadata,
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc
    if len(outcomes) == 1 and isinstance(outcomes[0], IngestError):
        raise outcomes[0]
    files = []
    for upload, outcome in zip(uploads, outcomes, strict=True):
        if isinstance(outcome, IngestError):
            files.append(
                IngestedFile(
                    filename=upload.filename,
                    status="failed",
                    error=status_for(outcome)[1],
                    message=str(outcome),
                )
            )
            continue
        files.append(
            IngestedFile(
                filename=upload.filename,
                status="indexed",
                document=DocumentView.of(outcome.document),
                chunks=outcome.chunks,
                embedded=outcome.embedded,
                unchanged=outcome.unchanged,
                removed=outcome.removed,
            )
        )
    ready = [o for o in outcomes if not isinstance(o, IngestError)]
    response = IngestResponse(files=files, indexed=len(ready), failed=len(files) - len(ready))
    if not ready:
        failed = IngestFailed(
            error="ingest_failed",
            message=f"none of the {len(files)} files was indexed; each file's error is in files",
            request_id=REQUEST_ID.get(),
            **response.model_dump(),
        )
        return JSONResponse(failed.model_dump(mode="json", by_alias=True), status_code=422)
    return response


@router.get("/resolve", response_model=ResolveResponse)
async def resolve(
    lore: LoreDep,
    searches: SearchSlots,
    url: str = Query(..., min_length=1, max_length=4096, description="The page the agent is on"),
    query: str | None = Query(None, max_length=2000, description="What the agent wants"),
    k: int = Query(8, ge=1, le=100),
    include_superseded: bool = Query(
        False, alias="includeSuperseded", description="Also return superseded chunks (history)"
    ),
) -> ResolveResponse:
    """The knowledge an agent needs on this page: chunks of the page's domain, the tenant's own
    knowledge first. Without `query`, the page's own chunks in document order."""
    try:
        result = await anyio.to_thread.run_sync(
            lore.resolve,
            url,
            query,
            min(k, lore.settings.max_k),
            include_superseded,
            limiter=searches,
        )
    except ValueError as exc:
        raise ApiError(422, "invalid_url", str(exc)) from exc
    return ResolveResponse(
        chunks=[ChunkView.of(h) for h in result.hits], has_org_knowledge=result.has_org_knowledge
    )


@router.post("/query", response_model=QueryResponse)
async def query(body: QueryRequest, lore: LoreDep, searches: SearchSlots) -> QueryResponse:
    """General search over everything this tenant may read, with optional filters."""
    flt = ChunkFilter(
        domains=tuple(body.domains),
        urls=tuple(body.urls),
        url_prefixes=tuple(body.url_prefixes),
        doc_types=tuple(body.doc_types),
        document_ids=tuple(body.document_ids),
        phases=tuple(body.phases),
        sources=tuple(body.sources),
        fetched_after=body.fetched_after.timestamp() if body.fetched_after else None,
        fetched_before=body.fetched_before.timestamp() if body.fetched_before else None,
        include_superseded=body.include_superseded,
        include_flagged=body.include_flagged,
        metadata=tuple(
            (key, (value,) if isinstance(value, str) else tuple(value))
            for key, value in body.metadata.items()
        ),
    )
    hits = await anyio.to_thread.run_sync(
        lambda: lore.query(
            body.query, min(body.k, lore.settings.max_k), flt, body.include_public, body.mode
        ),
        limiter=searches,
    )
    chunks = [ChunkView.of(h) for h in hits]
    if body.explain:
        why = await anyio.to_thread.run_sync(lambda: lore.explain(body.query, hits))
        for chunk in chunks:
            chunk.explain = ScoreExplanation(**why[chunk.id].__dict__)
    return QueryResponse(chunks=chunks)


def document_query(
    url_prefix: Annotated[
        str | None,
        Query(alias="urlPrefix", min_length=1, max_length=4096, description="URLs starting so."),
    ] = None,
    domain: Annotated[
        str | None,
        Query(min_length=1, max_length=255, description="This host or any of its subdomains."),
    ] = None,
    doc_type: Annotated[
        str | None, Query(alias="type", min_length=1, max_length=32, description="e.g. html, pdf")
    ] = None,
    source: Annotated[
        Literal["upload", "link", "spa"] | None, Query(description="How it came in.")
    ] = None,
    title: Annotated[
        str | None, Query(min_length=1, max_length=500, description="A part of the title.")
    ] = None,
) -> DocumentQuery:
    return DocumentQuery(url_prefix, domain, doc_type, source, title)


Documents = Annotated[DocumentQuery, Depends(document_query)]


@router.get("/documents", response_model=DocumentList)
def documents(
    lore: LoreDep,
    where: Documents,
    limit: int = Query(50, ge=1, le=500),
    offset: int = Query(0, ge=0, le=MAX_OFFSET),
) -> DocumentList:
    """The key's documents, most recently updated first; the filters combine."""
    docs, total = lore.documents(limit, offset, where)
    return DocumentList(documents=[DocumentView.of(d) for d in docs], total=total)


@router.delete("/documents", response_model=DocumentsDeleted)
def delete_documents(lore: LoreDep, where: Documents) -> DocumentsDeleted:
    """Delete every document the filters select (at least one is required), with its chunks."""
    try:
        return DocumentsDeleted(deleted=lore.delete_documents(where))
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from exc


@router.get("/documents/{document_id}", response_model=DocumentDetail)
def get_document(
    document_id: str,
    lore: LoreDep,
    history: bool = Query(
        False, description="Also superseded chunks and chunks flagged as hidden instructions."
    ),
) -> DocumentDetail:
    """A document whole: its Markdown and its chunks, with heading paths, in reading order."""
    content = lore.document(document_id, history)
    return DocumentDetail(
        document=DocumentView.of(content.document),
        markdown=content.markdown,
        chunks=[DocumentChunk.of(c) for c in content.chunks],
        chunks_total=content.chunks_total,
    )


@router.delete("/documents/{document_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_document(document_id: str, lore: LoreDep) -> None:
    lore.delete_document(document_id)
