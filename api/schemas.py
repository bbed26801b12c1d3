"""Request and response models of the HTTP API (camelCase JSON)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from retrieval import ApiKey, Chunk, CrawlUrl, Document, Hit, Job, Schedule, check_metadata
from retrieval.skills import Skill, SkillHit
from retrieval.types import METADATA_KEY
from spa_phases import ScanAnswer, SnapshotResult

# URL fields say so in the OpenAPI document; lore itself checks more (an absolute http(s) URL,
# a domain the key may use) and answers 422 or 403 naming the field.
URI: dict[str, Any] = {"format": "uri"}


class Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ErrorBody(BaseModel):
    """Every error answer of lore (mapped once, in api/errors.py)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    error: str = Field(
        description="A stable code: invalid_request, unauthorized, forbidden, not_found, "
        "rate_limited, too_large, unsupported_type, store_unavailable, ...",
        examples=["invalid_request"],
    )
    message: str = Field(
        description="What went wrong (naming the field) and what to do.",
        examples=["k: Input should be less than or equal to 50"],
    )
    request_id: str | None = Field(
        None,
        description="The request's id, as in the X-Request-Id header and the server's logs.",
        examples=["3f2a9c0d1e4b5a6f"],
    )


# Headers that say where or how the request goes are lore's to set: a caller's `Host` would
# carry the POST to another site than the allowed domain the URL names.
_TRANSPORT_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"}
)


def _checked_metadata(value: dict[str, str]) -> dict[str, str]:
    return check_metadata(value)


Metadata = Annotated[
    dict[str, StrictStr],
    AfterValidator(_checked_metadata),
    Field(
        description="Custom metadata (at most 32 keys of letters, digits, `_.-`; string values "
        "of at most 256 characters), kept on the documents and their chunks: queries filter on "
        "it (`metadata` of POST /knowledge/query).",
        examples=[{"team": "billing", "product": "invoices"}],
    ),
]


def _header_names(headers: dict[str, str]) -> dict[str, str]:
    for name, value in headers.items():
        if not _TOKEN.match(name):
            raise ValueError(f"{name!r} is not a header name")
        if name.strip().lower() in _TRANSPORT_HEADERS:
            raise ValueError(f"{name}: lore sets this header itself")
        if not _HEADER_VALUE.match(value):  # the value is never quoted back
            raise ValueError(
                f"{name}: a header value is printable ASCII (no line breaks or control "
                "characters), at most 8192 characters"
            )
    return headers


def _cookies(cookies: dict[str, str]) -> dict[str, str]:
    for name, value in cookies.items():
        if not _TOKEN.match(name):
            raise ValueError(f"{name!r} is not a cookie name")
        if not _COOKIE_VALUE.match(value):  # the value is never quoted back
            raise ValueError(
                f"{name}: a cookie value holds no spaces, quotes, commas, semicolons, "
                "backslashes or control characters (RFC 6265), at most 8192 characters"
            )
    return cookies


_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
_HEADER_VALUE = re.compile(r"^[\x20-\x7e\t]{0,8192}$")
_COOKIE_VALUE = re.compile(r"^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]{0,8192}$")


class WebhookSpec(Model):
    url: str = Field(..., min_length=1, max_length=4096, json_schema_extra=URI)
    headers: Annotated[dict[str, str], AfterValidator(_header_names)] = Field(
        default_factory=dict,
        max_length=50,
        description="Sent with the POST (not Host or transport headers); never shown in job views.",
    )


class IndexLinkRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"url": "https://docs.example.com/", "strategy": "sitemap", "maxPages": 500},
                {
                    "urls": ["https://example.com/pricing", "https://example.com/terms"],
                    "metadata": {"team": "sales"},
                },
                {
                    "url": "https://intranet.example.com/wiki/",
                    "strategy": "spider",
                    "headers": {"Authorization": "Bearer <token>"},
                    "cookies": {"session": "<session-cookie>"},
                    "webhook": {"url": "https://hooks.example.com/lore"},
                },
            ]
        }
    )
    url: str | None = Field(
        None,
        min_length=1,
        max_length=4096,
        json_schema_extra=URI,
        description="An absolute http(s) URL: where the crawl starts (or `urls`).",
    )
    urls: list[Annotated[str, Field(min_length=1, max_length=4096, json_schema_extra=URI)]] = Field(
        default_factory=list,
        max_length=1000,
        description="A batch: several start URLs in one job (instead of `url`); with 'single', "
        "each URL is fetched; with 'spider', links are followed on all their hosts.",
    )
    strategy: Literal["single", "sitemap", "spider"] = Field(
        "single",
        description="'single': this URL; 'sitemap': the URLs the site's sitemaps list (robots.txt "
        "Sitemap lines, /sitemap.xml, indexes, gzip), spidering when there is none; 'spider': "
        "follow links from the URL.",
    )
    max_pages: int | None = Field(None, ge=1, description="Pages fetched at most.")
    max_depth: int | None = Field(None, ge=0, description="Link hops from the start URL.")
    include: list[str] = Field(
        default_factory=list, max_length=50, description="Globs on the URL or its path."
    )
    exclude: list[str] = Field(default_factory=list, max_length=50)
    allow_subdomains: StrictBool = False
    render: Literal["http", "browser", "auto"] = Field(
        "http",
        description="'http': the HTML as served; 'browser': every page rendered in headless "
        "Chromium (scripts run, their requests served by lore's safe fetcher); 'auto': only "
        "pages whose served HTML has scripts and almost no text of its own are rendered.",
    )
    map: StrictBool = Field(
        False, description="List the URLs the crawl would ingest; ingest nothing."
    )
    webhook: WebhookSpec | None = Field(None, description="POSTed the job when it ends.")
    headers: Annotated[dict[str, str], AfterValidator(_header_names)] = Field(
        default_factory=dict,
        max_length=50,
        description="Request headers for pages behind a login (e.g. Authorization), sent to "
        "the crawl's own hosts only; never logged, shown in job views or sent to webhooks.",
    )
    cookies: Annotated[dict[str, str], AfterValidator(_cookies)] = Field(
        default_factory=dict,
        max_length=50,
        description="Cookies (name: value) sent to the crawl's own hosts, kept like `headers`.",
    )
    metadata: Metadata = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_start(self) -> IndexLinkRequest:
        if (self.url is None) == (not self.urls):
            raise ValueError("give either url or urls (a batch)")
        return self


class ScheduleRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "intervalMinutes": 1440,
                    "indexLink": {"url": "https://docs.example.com/", "strategy": "sitemap"},
                }
            ]
        }
    )
    interval_minutes: int = Field(
        ..., ge=5, le=366 * 24 * 60, description="How often: a job every this many minutes."
    )
    run_now: StrictBool = Field(
        True, description="Make the first job now (else after one interval)."
    )
    index_link: IndexLinkRequest = Field(
        ..., description="The job to make, as index-link takes it."
    )


class ScheduleView(Model):
    id: str
    kind: str
    request: dict[str, object] = Field(
        ..., description="As job views show it: login and webhook headers by name only."
    )
    interval_minutes: int
    next_run_at: datetime
    last_job_id: str | None = Field(None, description="The newest job it made.")
    created_at: datetime

    @classmethod
    def of(cls, schedule: Schedule) -> ScheduleView:
        return cls(
            id=schedule.id,
            kind=schedule.kind,
            request=schedule.request,
            interval_minutes=schedule.every_s // 60,
            next_run_at=schedule.next_run_at,
            last_job_id=schedule.last_job_id,
            created_at=schedule.created_at,
        )


class ScheduleList(Model):
    schedules: list[ScheduleView]


class CrawlUrlView(Model):
    url: str
    depth: int
    state: Literal[
        "pending", "queued", "ingested", "unchanged", "skipped", "failed", "listed", "removed"
    ]
    reason: str
    status_code: int | None
    document_id: str | None
    chunks: int
    updated_at: datetime | None

    @classmethod
    def of(cls, entry: CrawlUrl) -> CrawlUrlView:
        return cls(
            url=entry.url,
            depth=entry.depth,
            state=entry.state,
            reason=entry.reason,
            status_code=entry.status_code,
            document_id=entry.document_id,
            chunks=entry.chunks,
            updated_at=entry.updated_at,
        )


class CrawlUrlList(Model):
    urls: list[CrawlUrlView]
    total: int
    counts: dict[str, int]


class JobAccepted(Model):
    job_id: str
    status: str


JobStatus = Literal["queued", "running", "completed", "failed", "cancelled"]
JobKind = Literal["index-link", "spa-capture"]  # api.jobs.RUNNERS' keys


class JobView(Model):
    id: str
    kind: str
    status: JobStatus
    request: dict[str, object]
    counts: dict[str, int]
    progress: float
    message: str
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @classmethod
    def of(cls, job: Job) -> JobView:
        request = dict(job.request)
        hook = request.get("webhook")
        if isinstance(hook, dict) and isinstance(hook.get("headers"), dict):  # older jobs
            request["webhook"] = {**hook, "headers": sorted(hook["headers"])}
        return cls(
            id=job.id,
            kind=job.kind,
            status=job.status,
            request=request,
            counts=job.counts,
            progress=job.progress,
            message=job.message,
            error=job.error,
            created_at=job.created_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
        )


class DocumentView(Model):
    id: str
    url: str
    title: str
    doc_type: str
    source: str
    size_bytes: int
    chunk_count: int
    created_at: datetime
    updated_at: datetime
    extractor: str = Field("", description="What read the file, e.g. pdfplumber, python-docx.")
    warnings: list[str] = Field(
        default_factory=list,
        description="What extraction left out or could not read (pages without text, limits).",
    )
    metadata: dict[str, str] = Field(default_factory=dict, description="Custom, as indexed.")

    @classmethod
    def of(cls, doc: Document) -> DocumentView:
        return cls(
            id=doc.id,
            url=doc.url,
            title=doc.title,
            doc_type=doc.doc_type,
            source=doc.source,
            size_bytes=doc.size_bytes,
            chunk_count=doc.chunk_count,
            created_at=doc.created_at,
            updated_at=doc.updated_at,
            extractor=doc.extractor,
            warnings=list(doc.warnings),
            metadata=dict(doc.metadata),
        )


class IngestedFile(Model):
    filename: str
    status: Literal["indexed", "failed"]
    document: DocumentView | None = None
    chunks: int = 0
    embedded: int = 0
    unchanged: int = 0
    removed: int = 0
    error: str | None = Field(None, description="For a failed file: the error code.")
    message: str | None = Field(None, description="For a failed file: what went wrong.")


class IngestResponse(Model):
    files: list[IngestedFile]
    indexed: int
    failed: int


class IngestFailed(ErrorBody):
    """422 of an upload: a field was wrong (`error` and `message` only), or none of several
    files was indexed (and then each file's result too)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    files: list[IngestedFile] | None = None
    indexed: int | None = None
    failed: int | None = None


class DocumentList(Model):
    documents: list[DocumentView]
    total: int


class DocumentChunk(Model):
    id: str
    position: int = Field(..., description="Its place in the document (per phase).")
    heading_path: list[str]
    text: str
    phase: str
    trigger_action: str | None = None
    fetched_at: str
    superseded_by: str | None = None
    flag: str | None = None

    @classmethod
    def of(cls, c: Chunk) -> DocumentChunk:
        return cls(
            id=c.id,
            position=c.position,
            heading_path=list(c.heading_path),
            text=c.text,
            phase=c.phase,
            trigger_action=c.trigger_action,
            fetched_at=c.fetched_at,
            superseded_by=c.superseded_by,
            flag=c.flag,
        )


class DocumentDetail(Model):
    document: DocumentView
    markdown: str | None = Field(
        None,
        description="The extracted text as Markdown; null for an SPA page's phases (read its "
        "chunks) and for documents indexed before lore kept texts.",
    )
    chunks: list[DocumentChunk] = Field(..., description="In reading order.")
    chunks_total: int = Field(..., description="All its chunks; `chunks` lists the first 5,000.")


class ConvertRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"url": "https://docs.example.com/guide/install"}]}
    )

    url: str = Field(
        ...,
        min_length=1,
        max_length=4096,
        description="An absolute http(s) URL.",
        json_schema_extra=URI,
    )


class Converted(Model):
    url: str = Field(..., description="Where the redirects led.")
    title: str
    markdown: str = Field(..., description="The page as lore would store it.")
    status_code: int
    content_type: str | None
    fetched_at: datetime


class DocumentsDeleted(Model):
    deleted: int


class JobList(Model):
    jobs: list[JobView] = Field(..., description="Newest first.")
    total: int


class ScoreExplanation(Model):
    dense: float | None = Field(
        ..., description="Cosine similarity of the query and the chunk (dense vectors)."
    )
    lexical: float | None = Field(
        ..., description="BM25 score of the query's words in the chunk; 0: no word in common."
    )
    fused: float = Field(
        ...,
        description="The engine's score for the search mode (hybrid: dense and lexical "
        "fused), or the reranker's when one is configured, before freshness.",
    )
    freshness: float = Field(
        ..., description="The factor freshness applied: age decay, post-interaction boost."
    )
    phrase: float = Field(
        ...,
        description="The phrase boost's factor: 1 + boost x the share of the query's word "
        "trigrams in the chunk (1: none, or the boost is off).",
    )
    section: float = Field(
        ...,
        description="The section boost's factor: 1 + boost when the query names the heading "
        "the chunk sits directly under (3+ words), else 1.",
    )
    score: float = Field(
        ..., description="fused x freshness x phrase x section: what the chunk is ranked by."
    )


class ChunkView(Model):
    id: str
    text: str
    url: str
    title: str
    heading_path: list[str]
    score: float
    phase: str
    trigger_action: str | None
    fetched_at: str
    last_modified: str | None = None
    document_id: str
    doc_type: str
    source: str = ""
    tenant_id: str
    scope: str | None = None
    superseded_by: str | None = Field(None, description="Set on history (includeSuperseded).")
    superseded_at: str | None = None
    flag: str | None = Field(
        None,
        description="'hidden_instructions': hidden text addressed to a model (includeFlagged).",
    )
    metadata: dict[str, str] = Field(default_factory=dict, description="Its document's, custom.")
    explain: ScoreExplanation | None = Field(None, description="With `explain: true`.")

    @classmethod
    def of(cls, hit: Hit) -> ChunkView:
        c = hit.chunk
        return cls(
            id=c.id,
            text=c.text,
            url=c.url,
            title=c.title,
            heading_path=list(c.heading_path),
            score=hit.score,
            phase=c.phase,
            trigger_action=c.trigger_action,
            fetched_at=c.fetched_at,
            last_modified=c.last_modified,
            document_id=c.document_id,
            doc_type=c.doc_type,
            source=c.source,
            tenant_id=c.tenant_id,
            scope=c.scope,
            superseded_by=c.superseded_by,
            superseded_at=c.superseded_at,
            flag=c.flag,
            metadata=dict(c.metadata),
        )


class ResolveResponse(Model):
    chunks: list[ChunkView]
    has_org_knowledge: bool


class QueryRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "query": "how do I export invoices as CSV",
                    "k": 5,
                    "domains": ["help.example.com"],
                    "metadata": {"team": "billing"},
                }
            ]
        }
    )

    query: str = Field(..., min_length=1, max_length=2000)
    k: int = Field(10, ge=1, le=100)
    domains: list[str] = Field(default_factory=list)
    urls: list[str] = Field(default_factory=list)
    doc_types: list[str] = Field(default_factory=list)
    document_ids: list[str] = Field(default_factory=list)
    url_prefixes: list[str] = Field(
        default_factory=list,
        description="Directory prefixes ending in '/', e.g. https://docs.example.com/api/",
    )
    sources: list[Literal["upload", "link", "spa"]] = Field(default_factory=list)
    phases: list[Literal["static", "initial", "post_interaction"]] = Field(default_factory=list)
    fetched_after: datetime | None = None
    fetched_before: datetime | None = None
    include_superseded: StrictBool = Field(
        False, description="Also return superseded chunks (history)."
    )
    include_flagged: StrictBool = Field(
        False,
        description="Also return chunks flagged as hidden instructions to a model (for review; "
        "never in resolve or agent context).",
    )
    include_public: StrictBool = True
    mode: Literal["hybrid", "dense", "sparse"] = "hybrid"
    explain: StrictBool = Field(
        False,
        description="Per chunk, how its score was made: dense and lexical scores, the fused "
        "score and the freshness factor (two more searches over the results' documents).",
    )
    metadata: dict[str, StrictStr | list[StrictStr]] = Field(
        default_factory=dict,
        max_length=32,
        description="Custom metadata every chunk must have: per key one value or a list of "
        "accepted values.",
        examples=[{"team": "billing", "product": ["invoices", "payments"]}],
    )

    @field_validator("metadata")
    @classmethod
    def _metadata_filter(cls, values: dict[str, str | list[str]]) -> dict[str, str | list[str]]:
        for key, accepted in values.items():
            if not METADATA_KEY.match(key):
                raise ValueError(f"key {key!r}: use 1-64 letters, digits, '_', '.' or '-'")
            if isinstance(accepted, list) and not accepted:
                raise ValueError(f"{key}: give at least one accepted value")
        return values

    @field_validator("url_prefixes")
    @classmethod
    def _directory_prefixes(cls, values: list[str]) -> list[str]:
        for value in values:
            if "://" not in value or not value.endswith("/"):
                raise ValueError(
                    f"{value!r} is not a directory prefix: an absolute URL ending in '/'"
                )
        return values


class QueryResponse(Model):
    chunks: list[ChunkView]


class JobsStatus(Model):
    mode: Literal["process", "in-process", "workers"] = Field(
        ...,
        description="'process': a job process of this server's own; 'in-process': this "
        "server's event loop; 'workers': `lore worker` processes (the API runs no jobs).",
    )
    alive: bool = Field(..., description="Whether what runs this server's jobs is running.")
    restarts: int = Field(0, description="How often the job process died and was started again.")
    pid: int | None = Field(None, description="The job process's id, where there is one.")


class Health(Model):
    status: Literal["ok", "degraded"] = Field(
        ..., description="'degraded': the job process is down (queries still work)."
    )
    jobs: JobsStatus
    version: str
    embedding_model: str
    chunks: int
    documents: int


class SnapshotRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://app.example.com/settings",
                    "phase": "post_interaction",
                    "dom": "<html><body><div id=tab-2>Billing address ...</div></body></html>",
                    "triggerAction": "click(#tab-2)",
                }
            ]
        }
    )

    url: str = Field(
        ..., min_length=1, max_length=4096, description="The page's URL.", json_schema_extra=URI
    )
    phase: Literal["initial", "post_interaction"] = Field(
        ..., description="'initial': the DOM at load; 'post_interaction': after triggerAction."
    )
    dom: str = Field(..., min_length=1, description="document.documentElement.outerHTML")
    trigger_action: str | None = Field(
        None, max_length=500, description="Required for post_interaction, e.g. click(#tab-2)."
    )
    title: str | None = Field(None, max_length=500)


class SnapshotResponse(Model):
    document_id: str | None = Field(
        None, description="None when a post_interaction snapshot held nothing new."
    )
    phase: str
    regions: int
    chunks: int = Field(..., description="Chunks stored for this snapshot.")
    embedded: int
    known: int = Field(..., description="Chunks the page already held; not stored again.")
    superseded: int = Field(..., description="Older chunks this snapshot superseded.")
    flagged: int = Field(..., description="Chunks flagged as hidden instructions to a model.")
    changed_scopes: list[str]

    @classmethod
    def of(cls, result: SnapshotResult) -> SnapshotResponse:
        return cls(
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


class CaptureRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"url": "https://app.example.com/", "maxActions": 20}]}
    )

    url: str = Field(
        ..., min_length=1, max_length=4096, description="The app's URL.", json_schema_extra=URI
    )
    explore: StrictBool = Field(
        True, description="Find and perform the interactions that reveal content."
    )
    max_actions: int = Field(20, ge=1, description="Explorer step budget.")
    run_recipe: StrictBool = Field(
        True, description="On a list-detail page, open every item (the recipe) after exploring."
    )


class SiteModelView(Model):
    url: str
    domain: str
    updated_at: datetime
    model: dict[str, object] = Field(
        ..., description="Page type, key elements, behaviours, bindings, recipe, last capture."
    )


class SiteModelList(Model):
    models: list[SiteModelView]


class FailedStateView(Model):
    action: str = Field(..., min_length=1, max_length=500, description="e.g. click(68)")
    element_description: str = Field("", max_length=500, description="e.g. Patient menu")
    error_type: str = Field("", max_length=100, description="e.g. wrong_element, timeout")


class SuccessfulActionView(Model):
    action: str = Field(..., min_length=1, max_length=500, description="e.g. click(79)")
    element_description: str = Field("", max_length=500)
    strategy: str = Field("", max_length=500, description="How the element was found.")


class SkillRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://shop.example.com/cart",
                    "goal": "apply a discount code",
                    "failedState": {"action": "click(12)", "elementDescription": "Apply button"},
                    "successfulAction": {
                        "action": "click(15)",
                        "elementDescription": "Redeem code link",
                        "strategy": "the link under the order total",
                    },
                }
            ]
        }
    )

    url: str = Field(
        ...,
        min_length=1,
        max_length=4096,
        description="A page of the domain.",
        json_schema_extra=URI,
    )
    goal: str = Field(..., min_length=1, max_length=1000)
    failed_state: FailedStateView
    successful_action: SuccessfulActionView


class OutcomeRequest(Model):
    model_config = ConfigDict(json_schema_extra={"examples": [{"success": True}]})

    success: StrictBool


class SkillView(Model):
    id: str
    domain: str
    goal: str
    hint: str = Field(..., description="A sentence ready to put in a prompt.")
    failed_state: FailedStateView
    successful_action: SuccessfulActionView
    success_count: int
    failure_count: int
    success_rate: float
    created_at: datetime
    last_used: datetime
    similarity: float | None = None
    score: float | None = Field(None, description="similarity x success rate x recency")

    @classmethod
    def of(cls, skill: Skill, hit: SkillHit | None = None) -> SkillView:
        return cls(
            id=skill.id,
            domain=skill.domain,
            goal=skill.goal,
            hint=skill.hint(),
            failed_state=FailedStateView(**skill.failed_state.__dict__),
            successful_action=SuccessfulActionView(**skill.successful_action.__dict__),
            success_count=skill.success_count,
            failure_count=skill.failure_count,
            success_rate=round(skill.success_rate, 4),
            created_at=skill.created_at,
            last_used=skill.last_used,
            similarity=round(hit.similarity, 4) if hit else None,
            score=round(hit.score, 4) if hit else None,
        )


class SkillPage(Model):
    skills: list[SkillView]
    total: int


class SkillList(Model):
    skills: list[SkillView]


class AgentContextRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://shop.example.com/checkout",
                    "query": "which payment methods are accepted",
                    "goal": "pay for the order",
                    "k": 8,
                }
            ]
        }
    )

    url: str = Field(
        ...,
        min_length=1,
        max_length=4096,
        description="The page the agent is on.",
        json_schema_extra=URI,
    )
    query: str | None = Field(None, max_length=2000, description="What it needs to know.")
    goal: str | None = Field(None, max_length=1000, description="The user's goal: skill hints.")
    k: int = Field(8, ge=1, le=50)
    parameter: str | None = Field(
        None,
        max_length=200,
        description="A value missing mid-task (e.g. 'invoice number'): chunks likely to hold it.",
    )
    dom: str | None = Field(
        None,
        min_length=1,
        description="The page's DOM (outerHTML): scanned for the goal (else the query) and "
        "stored as a snapshot, `initial` or, with `lastAction`, `post_interaction`.",
    )
    last_action: str | None = Field(
        None, max_length=500, description="The action that led to this DOM, e.g. click(#tab-2)."
    )
    max_elements: int = Field(30, ge=1, le=500, description="Scan elements to return at most.")


class AgentContextResponse(Model):
    chunks: list[ChunkView]
    has_org_knowledge: bool
    skills: list[SkillView]
    site_model: dict[str, object] | None = Field(
        None, description="What captures learned about the page: type, key elements, behaviours."
    )
    scan: AgentScanResponse | None = Field(
        None, description="With `dom`: the page's elements ranked for the goal, as /agent/scan."
    )
    snapshot: SnapshotResponse | None = Field(
        None, description="With `dom`: what storing it as a snapshot of the page did."
    )


DOM = Field(
    ...,
    min_length=1,
    description="document.documentElement.outerHTML from the agent's browser (413 above the "
    "snapshot size limit; 422 when it is not HTML or has no element to act on).",
)


class AgentScanRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://shop.example.com/search?q=shoes",
                    "dom": "<html><body><input type=search name=q><ul>...</ul></body></html>",
                    "goal": "add the cheapest red shoes to the cart",
                    "maxElements": 50,
                }
            ]
        }
    )

    url: str = Field(
        ..., min_length=1, max_length=4096, description="The page's URL.", json_schema_extra=URI
    )
    dom: str = DOM
    goal: str | None = Field(
        None, max_length=1000, description="Rank elements for this goal (else document order)."
    )
    max_elements: int = Field(50, ge=1, le=500, description="Elements to return at most.")
    offset: int = Field(0, ge=0, le=100_000, description="Skip this many (the next page).")
    viewport_only: bool = Field(
        False, description="Only elements on the first screen (1280x720 from the top)."
    )


class ScanElementView(Model):
    id: int = Field(..., description="The element's position in document order.")
    type: str = Field(..., description="link, button, tab, text, search, checkbox, select, ...")
    role: str = Field(..., description="What it does here: pagination, cookie_dismiss, ...")
    label: str
    selector: str = Field(..., description="A CSS selector for the element in the page.")
    region: str = Field(..., description="The landmark or section: 'nav', 'form: Sign in', ...")
    visible: bool = Field(
        ..., description="Laid out and not hidden (nor marked `data-lore-hidden` by the client)."
    )
    disabled: bool
    score: float = Field(..., description="Relevance to the goal (0 without one).")
    context: str = Field("", description="The repeated item around it: a product's name, price.")
    href: str = ""
    options: list[str] = Field(default_factory=list, description="A select's options.")


class PatternView(Model):
    type: str = Field(
        ...,
        description="product_listing, result_listing, search, pagination, load_more, filters, "
        "sort, login, cart, modal, cookie_banner, tabs, accordion, list_detail, form",
    )
    count: int
    selector: str
    evidence: str
    elements: list[int]


class SuggestionView(Model):
    name: str = Field(..., description="accept_cookies, search, extract_products, next_page, ...")
    reason: str
    parameters: dict[str, object]
    elements: list[int] = Field(..., description="Ids of the elements to act on.")


class ScanSummaryView(Model):
    total_elements: int
    included_elements: int
    element_types: dict[str, int]
    filters_applied: list[str]
    pagination_hints: dict[str, object]


class AgentScanResponse(Model):
    summary: ScanSummaryView
    patterns: list[PatternView]
    suggestions: list[SuggestionView]
    elements: list[ScanElementView]
    text: str = Field(..., description="The scan as compact text for a prompt.")

    @classmethod
    def of(cls, result: ScanAnswer) -> AgentScanResponse:
        return cls(
            summary=ScanSummaryView(**result.summary),
            patterns=[
                PatternView(
                    type=p.type,
                    count=p.count,
                    selector=p.selector,
                    evidence=p.evidence,
                    elements=list(p.elements),
                )
                for p in result.patterns
            ],
            suggestions=[
                SuggestionView(
                    name=s.name, reason=s.reason, parameters=s.parameters, elements=list(s.elements)
                )
                for s in result.suggestions
            ],
            elements=[
                ScanElementView(
                    id=e.id,
                    type=e.type,
                    role=e.role,
                    label=e.label,
                    selector=e.selector,
                    region=e.region,
                    visible=e.visible,
                    disabled=e.disabled,
                    score=e.score,
                    context=e.context,
                    href=e.href,
                    options=list(e.options),
                )
                for e in result.elements
            ],
            text=result.text,
        )


AgentContextResponse.model_rebuild()


class TenantView(Model):
    id: str
    allowed_domains: list[str] = Field(
        ..., description="Hosts its keys may read and write ('*.example.com', '*' for all)."
    )
    active_keys: int = 0


class TenantList(Model):
    tenants: list[TenantView]


class TenantUpdate(Model):
    model_config = ConfigDict(json_schema_extra={"examples": [{"allowedDomains": ["*.acme.com"]}]})
    allowed_domains: list[Annotated[str, Field(min_length=1, max_length=255)]] = Field(
        ..., min_length=1, max_length=200
    )


class KeyView(Model):
    id: str
    prefix: str = Field(..., description="The key's first characters, to tell keys apart.")
    tenant: str
    name: str
    rate_limit: int | None = Field(None, description="Requests per minute; null: the default.")
    admin: bool
    created_at: datetime
    revoked_at: datetime | None

    @classmethod
    def of(cls, key: ApiKey) -> KeyView:
        return cls(
            id=key.id,
            prefix=key.prefix,
            tenant=key.tenant_id,
            name=key.name,
            rate_limit=key.rate_limit,
            admin=key.admin,
            created_at=key.created_at,
            revoked_at=key.revoked_at,
        )


class KeyList(Model):
    keys: list[KeyView]


class KeyRequest(Model):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"tenant": "acme", "name": "shop agent", "allowedDomains": ["*.acme.com"]}]
        }
    )
    tenant: str = Field(..., min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.-]+$")
    name: str = Field("", max_length=200)
    allowed_domains: list[Annotated[str, Field(min_length=1, max_length=255)]] | None = Field(
        None,
        max_length=200,
        description="For a new tenant (default every domain), or its new list.",
    )
    rate_limit: int | None = Field(None, ge=1, le=1_000_000)
    admin: StrictBool = False


class NewKey(Model):
    key: str = Field(..., description="Shown once: lore keeps only its SHA-256.")
    record: KeyView


class KpiDay(Model):
    day: str
    lookups: int
    hits: int
    successes: int
    failures: int
    hit_rate: float = Field(..., description="hits / lookups (the target is 10 %).")
    effectiveness: float = Field(..., description="successes / reported uses (target 60 %).")


class SkillKpis(Model):
    days: list[KpiDay] = Field(..., description="Oldest first; days without lookups left out.")
    total: KpiDay
