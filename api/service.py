"""Wiring and use cases: one `Lore` object joins fetching, ingestion and retrieval. The HTTP routes,
the job worker and the CLI's local mode all call it."""

from __future__ import annotations

import asyncio
import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
from opentelemetry import trace

from api.auth import check_url, domain_allowed
from api.memory import lean_child
from api.observe import SkillTally
from api.settings import Settings
from crawl import (
    RENDERS,
    STRATEGIES,
    BrowserOptions,
    BrowserUnavailableError,
    Fetcher,
    FetchOptions,
    browser_missing,
    canonicalize,
    fetch_address,
    origin,
)
from ingest import (
    ChunkingOptions,
    Embedder,
    Extracted,
    ExtractRequest,
    HashEmbedder,
    Indexer,
    IndexResult,
    IngestError,
    Limits,
    OnnxEmbedder,
    PreparedDocument,
    Sandbox,
    SentenceTransformerEmbedder,
    SourceDocument,
    SplitEmbedder,
    Tools,
    bf16_matrix_units,
    extract,
    prepare,
)
from retrieval import (
    Catalog,
    Chunk,
    ChunkFilter,
    CrossEncoderReranker,
    Document,
    DocumentQuery,
    EdgeStore,
    Hit,
    Job,
    NotFoundError,
    Reranker,
    Schedule,
    SearchMode,
    SearchQuery,
    StoreProcess,
    Tenant,
    VectorStore,
    check_metadata,
    ranked_search,
    utcnow,
)
from retrieval.ranking import (
    Freshness,
    freshness_factor,
    naming_grams,
    phrase_overlap,
    rerank,
    section_factor,
)
from retrieval.skills import (
    EdgeSkillIndex,
    SkillHit,
    SkillIndex,
    SkillLibrary,
    SkillRules,
    ZepSkillIndex,
)
from spa_phases import (
    DomScanner,
    GoalRanker,
    PhaseIngestor,
    ScanAnswer,
    Snapshot,
    SnapshotResult,
    SnapshotTooLargeError,
    answer,
    check_dom,
    read_scanned,
)

log = logging.getLogger(__name__)
tracer = trace.get_tracer("lore.api")  # spans go nowhere unless tracing is configured

PUBLIC_TENANT = "public"
MAX_DOCUMENT_CHUNKS = 5000  # the most chunks a document view lists
EXPLAIN_POOL = 1000  # chunks of the results' documents scored for an explanation
MIN_SCHEDULE_S = 5 * 60  # a re-crawl at most every 5 minutes
MAX_SCHEDULE_S = 366 * 24 * 3600
IN_PROCESS_TYPES = frozenset({"html", "markdown", "text"})
Progress = Callable[[int, int], None]


def _torch_embedder(settings: Settings) -> Embedder:
    precision = settings.embedding.precision
    if precision == "auto":
        on_cpu = settings.embedding.device == "cpu"
        precision = "bf16" if on_cpu and bf16_matrix_units() else "fp32"
    return SentenceTransformerEmbedder(
        settings.embedding.model_path, settings.embedding.device, precision
    )


def _auto_embedder(settings: Settings) -> Embedder:
    # The int8 ONNX export for documents and queries, AMX or not. With AMX, bf16 PyTorch embeds
    # a batch alone 1.6x as fast as the int8 export, and it was the default for documents there;
    # but on the product's paths on an AMX machine the int8 export was faster and took half the
    # memory: the first 120 Python-doc pages 2.96-3.01 against 2.67-2.77 pages/s (600 against
    # 1,312-1,342 MB), a 300-page crawl beside the serving API 189 against 257 s (1,398 against
    # 2,595 MB for both processes), SciFact hybrid nDCG@10 0.743 both ways (docs/measured.md).
    # A precision, or a GPU, asks for PyTorch: it embeds the batches, the int8 export queries.
    if settings.embedding.device != "cpu":
        return _torch_embedder(settings)
    models, path = settings.data_dir / "models", settings.embedding.model_path
    if settings.embedding.precision != "auto":  # a precision is PyTorch's
        return SplitEmbedder(OnnxEmbedder(models, path), _torch_embedder(settings))
    return OnnxEmbedder(models, path)


EMBEDDERS: dict[str, Callable[[Settings], Embedder]] = {
    "auto": _auto_embedder,
    "sentence-transformers": _torch_embedder,
    "onnx-int8": lambda s: OnnxEmbedder(s.data_dir / "models", s.embedding.model_path),
    "onnx": lambda s: OnnxEmbedder(s.data_dir / "models", s.embedding.model_path, quantize=False),
    "hash": lambda s: HashEmbedder(),
}


def make_embedder(settings: Settings) -> Embedder:
    try:
        factory = EMBEDDERS[settings.embedding.backend]
    except KeyError:
        raise ValueError(
            f"unknown embedding backend {settings.embedding.backend!r}; "
            f"choose one of {sorted(EMBEDDERS)}"
        ) from None
    embedder = factory(settings)
    if settings.embedding.backend == "hash":
        log.warning("using the hash embedder: a deterministic fake with no semantics")
    else:
        log.info("embedding with %s (%s backend)", embedder.name, settings.embedding.backend)
    return embedder


def make_reranker(settings: Settings) -> Reranker | None:
    path = settings.search.reranker_model_path
    if path is None:
        return None
    reranker = CrossEncoderReranker(path, settings.embedding.device)
    log.info("reranking the best %d candidates with %s", settings.search.rerank_candidates, path)
    return reranker


@dataclass(frozen=True)
class Explanation:
    dense: float | None
    lexical: float
    fused: float
    freshness: float
    phrase: float
    section: float
    score: float


@dataclass(frozen=True)
class Upload:
    filename: str
    content_type: str | None
    data: bytes


def make_store(settings: Settings, dim: int) -> VectorStore:
    """A Qdrant server when `qdrant.url` is set, else the embedded engine in the data dir."""
    search, qdrant = settings.search, settings.qdrant
    if qdrant.url:
        from retrieval.qdrant import QdrantStore  # noqa: PLC0415 - 85 MB, only for a server

        local = qdrant.url == ":memory:"
        return QdrantStore(
            dim,
            url=None if local else qdrant.url,
            location=":memory:" if local else None,
            collection=qdrant.collection,
            api_key=qdrant.api_key,
            fusion=search.fusion,
            rrf_k=search.rrf_k,
            timeout_s=qdrant.timeout_s,
        )
    return edge_store(settings, dim)()


def edge_store(settings: Settings, dim: int) -> Callable[[], EdgeStore]:
    """What opens the embedded engine's store in the data dir: here, or in a store process
    (picklable, so the process imports only `retrieval`)."""
    search = settings.search
    return partial(EdgeStore, settings.vectors_path, dim, search.fusion, search.rrf_k)


def make_skill_index(
    settings: Settings, embedder: Embedder
) -> tuple[SkillIndex, Callable[[str], Sequence[float]] | None]:
    """The skills backend the settings name, and the embedding it needs (Zep embeds itself)."""
    skills, qdrant, backend = settings.skills, settings.qdrant, settings.skills_backend
    if backend == "zep":
        assert skills.zep_url is not None  # SkillSettings requires it with this backend
        return ZepSkillIndex(skills.zep_url, skills.zep_api_key), None
    if backend == "qdrant":
        assert qdrant.url is not None  # Settings requires it with this backend
        from retrieval.skills.qdrant import QdrantSkillIndex  # noqa: PLC0415 - as QdrantStore

        index = QdrantSkillIndex(
            embedder.dim,
            url=None if qdrant.url == ":memory:" else qdrant.url,
            collection=skills.collection,
            api_key=qdrant.api_key,
            timeout_s=qdrant.timeout_s,
        )
        return index, embedder.embed_query
    return EdgeSkillIndex(settings.skills_path, embedder.dim), embedder.embed_query


def extraction_tools(settings: Settings) -> Tools:
    """The external programs extraction may use: configured paths, else found on PATH."""
    documents, media = settings.documents, settings.media
    return Tools(
        soffice=documents.soffice_path or shutil.which("soffice") or shutil.which("libreoffice"),
        tesseract=documents.tesseract_path or shutil.which("tesseract"),
        ffmpeg=media.ffmpeg_path or shutil.which("ffmpeg"),
        transcriber=media.transcriber,
        whisper_model_dir=str(media.whisper_model_dir) if media.whisper_model_dir else None,
        ocr_languages=documents.ocr_languages,
    )


def extraction_limits(settings: Settings) -> Limits:
    documents = settings.documents
    return Limits(
        max_pages=documents.max_pages,
        max_rows=documents.max_rows,
        max_chars=documents.max_chars,
        max_unzipped_bytes=documents.max_unzipped_mb * 1024 * 1024,
        max_media_seconds=settings.media.max_seconds,
    )


@dataclass(frozen=True)
class ResolveResult:
    hits: list[Hit]
    has_org_knowledge: bool


@dataclass(frozen=True)
class Converted:
    """A page read as Markdown, not stored."""

    url: str
    title: str
    markdown: str
    status: int
    content_type: str | None
    fetched_at: datetime


@dataclass(frozen=True)
class DocumentContent:
    document: Document
    markdown: str | None  # None: stored without it (an SPA's phases, or before lore kept texts)
    chunks: list[Chunk]  # in reading order, at most MAX_DOCUMENT_CHUNKS
    chunks_total: int


@dataclass(frozen=True)
class AgentContext:
    hits: list[Hit]
    has_org_knowledge: bool
    skills: list[SkillHit]
    site_model: dict[str, Any] | None


def compact_site_model(url: str, model: dict[str, Any]) -> dict[str, Any]:
    """What an agent planning a step needs of a capture's page understanding."""
    understood = model.get("understanding") or {}
    behaviours = sorted(
        understood.get("behaviours") or [], key=lambda b: (not b.get("confirmed"), -b["seen"])
    )
    return {
        "url": url,
        "pageType": understood.get("pageType"),
        "keyElements": understood.get("keyElements") or [],
        "behaviours": behaviours[:10],
        "bindings": understood.get("bindings") or {},
        "patterns": understood.get("patterns") or [],
    }


class _OpenOnce:
    """A resource opened on first use, once, however many threads ask."""

    def __init__(self, open_: Callable[[], SkillLibrary]) -> None:
        self._open = open_
        self._lock = threading.Lock()
        self.made: SkillLibrary | None = None

    def get(self) -> SkillLibrary:
        with self._lock:
            if self.made is None:
                self.made = self._open()
            return self.made


def page_domain(url: str) -> str:
    host = urlsplit(url).hostname
    if not host:
        raise ValueError(f"{url!r} is not an absolute URL")
    return host.lower()


def candidate_pool(max_k: int, k: int) -> int:
    """How many fused candidates a search of `k` results draws from: the same for every k up to
    `max_k` (the API's bound)."""
    return max(max_k, k)


class Lore:
    """The embedded lore instance: store, catalog, embedder, fetcher."""

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        store: VectorStore | None = None,
        store_process: bool = False,
        store_connections: int = 3,
    ) -> None:
        """`store`: another process's store (the job process writes through the API's).
        `store_process`: the embedded store in a process of its own (`lore serve`), called
        over `store_connections` connections; the job process makes one of its own."""
        self.settings = settings
        # The tenant this instance acts for; a request's copy carries its key's tenant and
        # allowedDomains (None: the operator's own instance, every domain).
        self.tenant: str = settings.tenant
        self.allowed: Tenant | None = None
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.reranker = reranker or make_reranker(settings)
        self.embedder = embedder or make_embedder(settings)
        self.catalog = Catalog(settings.catalog_url)
        self.store_process: StoreProcess | None = None
        try:
            if store is None and store_process and not settings.qdrant.url:
                self.store_process = StoreProcess(
                    edge_store(settings, self.embedder.dim), setup=lean_child
                )
                store = self.store_process.address.store(store_connections)
            self.store = store or make_store(settings, self.embedder.dim)
        except Exception:
            if self.store_process is not None:
                self.store_process.stop()
            self.catalog.close()
            raise
        self.indexer = Indexer(
            self.store, self.catalog, self.embedder, settings.embedding.batch_size
        )
        self.fetch_options = FetchOptions(
            timeout_s=settings.fetch.timeout_s,
            max_bytes=settings.fetch.max_bytes,
            user_agent=settings.fetch.user_agent,
            allow_private_addresses=settings.fetch.allow_private_addresses,
            allow_networks=tuple(settings.fetch.allow_networks),
        )
        self.browser_options = BrowserOptions(
            executable_path=settings.browser.executable_path,
            max_pages=settings.browser.max_pages,
            timeout_s=settings.browser.timeout_s,
            drawing_s=settings.browser.drawing_s,
        )
        self.chunking = ChunkingOptions(
            max_tokens=settings.chunking.max_tokens,
            overlap_tokens=settings.chunking.overlap_tokens,
            max_bytes=max(settings.max_upload_bytes, settings.fetch.max_bytes),
        )
        search = settings.search
        self.freshness = Freshness(
            post_interaction_boost=search.post_interaction_boost,
            half_life_days=search.half_life_days,
            decay_floor=search.decay_floor,
            duplicate_similarity=search.duplicate_similarity,
            view_duplicate_similarity=search.view_duplicate_similarity,
            phrase_boost=search.phrase_boost,
            phrase_window=search.phrase_window,
            section_boost=search.section_boost,
        )
        self.tools = extraction_tools(settings)
        # Opened on first use (another engine shard and its threads), shared by the
        # request-scoped copies of this instance.
        self._skills = _OpenOnce(self._open_skills)
        self.kpis = SkillTally()  # the skills library's KPIs (the app counts them in metrics)
        self.spa = PhaseIngestor(
            self.indexer, self.chunking, self.embedder.count_tokens, settings.spa.max_dom_bytes
        )
        self.limits = extraction_limits(settings)
        # The agent's own page, read by the explorer's scanner in a Chromium started on the
        # first scan (scripts and network off), ranked with the embedding model.
        self.scanner = DomScanner(self.browser_options, pages=settings.browser.max_pages)
        # Element texts are short, like queries: with AMX, the query side's int8 export embedded
        # 33 texts (the goal and 32 element texts; 16 now) in 40 ms (76 ms of CPU) where bf16
        # PyTorch, padding them to a batch of 64, took 83 ms (162 ms of CPU).
        short = self.embedder.small if isinstance(self.embedder, SplitEmbedder) else self.embedder
        self.ranker = GoalRanker(short.embed_batch)
        documents = settings.documents
        self.sandbox = (
            Sandbox(documents.timeout_s, documents.memory_mb or None) if documents.isolate else None
        )

    def _open_skills(self) -> SkillLibrary:
        rules = self.settings.skills
        index, embed = make_skill_index(self.settings, self.embedder)
        return SkillLibrary(
            index,
            embed,
            SkillRules(
                ttl_days=rules.ttl_days,
                max_per_tenant=rules.max_per_tenant,
                min_success_rate=rules.min_success_rate,
                recency_half_life_days=rules.recency_half_life_days,
                min_similarity=rules.min_similarity,
            ),
        )

    @property
    def skills(self) -> SkillLibrary:
        return self._skills.get()

    def check_domain(self, url: str, field: str = "") -> None:
        """403 when this request's tenant may not use `url`'s domain (allowedDomains)."""
        if self.allowed is not None:
            check_url(self.allowed, url, field)

    def close(self) -> None:
        try:
            if (skills := self._skills.made) is not None:
                skills.close()
            self.store.close()
        finally:
            if self.store_process is not None:
                self.store_process.stop()
            self.catalog.close()

    # ingestion --------------------------------------------------------------------------------

    def _extract(self, request: ExtractRequest) -> Extracted:
        """Binary, structured and media formats in the sandbox; HTML, Markdown and text (what
        crawls bring, already size-limited) in this process: a fork per page cost 0.4 s."""
        if self.sandbox is None or request.doc_type in IN_PROCESS_TYPES:
            return extract(request)
        return self.sandbox.extract(request)

    def prepare(self, source: SourceDocument) -> PreparedDocument:
        return prepare(
            source,
            self.chunking,
            self.embedder.count_tokens,
            self._extract,
            self.limits,
            self.tools,
        )

    async def convert(self, url: str) -> Converted:
        """The page at `url` as lore would store it (its Markdown and title), with the same
        fetch safety as a crawl (address guard, size and time limits, the tenant's domains
        after every redirect), stored nowhere. Raises ValueError, FetchError, IngestError."""
        canonicalize(url)  # an absolute http(s) URL, else ValueError
        self.check_domain(url, "url")
        fetcher = Fetcher(self.fetch_options)
        try:
            page = await fetcher.fetch(url)
        finally:
            await fetcher.aclose()
        self.check_domain(page.url, "url")  # where the redirects led
        source = SourceDocument(
            tenant_id=self.tenant,
            data=page.body,
            url=page.url,
            source="link",
            source_id="convert",
            filename=urlsplit(page.url).path,
            content_type=page.content_type,
            fetched_at=page.fetched_at,
        )
        prepared = await asyncio.to_thread(self.prepare, source)
        return Converted(
            page.url,
            prepared.document.title,
            prepared.markdown or "",
            page.status,
            page.content_type,
            page.fetched_at,
        )

    def ingest(self, sources: Iterable[SourceDocument]) -> list[IndexResult | IngestError]:
        """Extract, chunk, embed and store documents, in order: the next ones are extracted
        while a pass is embedded. A document that fails is its `IngestError`, stored nowhere."""
        return self.indexer.ingest(sources, self.prepare)

    def ingest_uploads(
        self,
        uploads: Sequence[Upload],
        url: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> list[IndexResult | IngestError]:
        """Store uploaded files, each on its own: a file that fails is reported (its error
        names it), never half-stored. `metadata` (custom, filterable in queries) goes with every
        file. Raises ValueError for a request that cannot be right (a url for several files)."""
        if url is not None and len(uploads) > 1:
            raise ValueError("a url can only be given for a single uploaded file")
        if url is not None:
            page_domain(url)
            self.check_domain(url)
        metadata = check_metadata(metadata or {})
        sources = [
            SourceDocument(
                tenant_id=self.tenant,
                data=upload.data,
                url=url or f"upload://{upload.filename}",
                source="upload",
                source_id="upload",
                filename=upload.filename,
                content_type=upload.content_type,
                title=title,
                metadata=metadata,
            )
            for upload in uploads
        ]

        def prepare(source: SourceDocument) -> PreparedDocument:
            try:
                return self.prepare(source)
            except IngestError as exc:
                if source.filename and source.filename not in str(exc):
                    exc.args = (f"{source.filename}: {exc}",)
                raise

        return self.indexer.ingest(sources, prepare)

    def index(
        self, prepared: Sequence[PreparedDocument], progress: Progress | None = None
    ) -> list[IndexResult]:
        """Embed and store prepared documents; `progress(done, total)` in chunks."""
        return self.indexer.index_many(prepared, progress)

    # index-link jobs --------------------------------------------------------------------------

    def submit_link(
        self, url: str | Sequence[str], strategy: str = "single", **options: Any
    ) -> Job:
        """Validate and queue an index-link job (run it with `api.jobs.run_job` or the worker);
        `options` as `link_request` takes them."""
        request, secrets = self.link_request(url, strategy, **options)
        return self.catalog.create_job(self.tenant, "index-link", request, secrets)

    def schedule_link(
        self,
        every_s: int,
        url: str | Sequence[str],
        strategy: str = "single",
        *,
        run_now: bool = True,
        **options: Any,
    ) -> Schedule:
        """An index-link job made every `every_s` seconds (the first now, or after `every_s`):
        a re-crawl finds what changed and removes what disappeared."""
        if not MIN_SCHEDULE_S <= every_s <= MAX_SCHEDULE_S:
            raise ValueError(
                f"intervalMinutes must be between {MIN_SCHEDULE_S // 60} and {MAX_SCHEDULE_S // 60}"
            )
        request, secrets = self.link_request(url, strategy, **options)
        first = utcnow() + timedelta(seconds=0 if run_now else every_s)
        return self.catalog.create_schedule(
            self.tenant, "index-link", request, every_s, first, secrets
        )

    def link_request(
        self,
        url: str | Sequence[str],
        strategy: str = "single",
        *,
        max_pages: int | None = None,
        max_depth: int | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        allow_subdomains: bool = False,
        render: str = "http",
        map_only: bool = False,
        webhook: dict[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        cookies: Mapping[str, str] | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """An index-link job's request and secrets, checked (ValueError, 403 for a domain the
        tenant may not use). `url`: one start URL, or a batch of them. `headers` and `cookies`
        (a login) and the webhook's headers go into the secrets, kept apart from the request
        (`Catalog.secrets`): job views show their names only."""
        crawl = self.settings.crawl
        urls = [url] if isinstance(url, str) else list(url)
        if not urls:
            raise ValueError("urls: give at least one URL")
        for start in urls:
            canonicalize(start)  # raises ValueError for anything but an absolute http(s) URL
            self.check_domain(start, "urls" if len(urls) > 1 else "url")
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {list(STRATEGIES)}")
        if len(urls) > 1 and strategy == "sitemap":
            raise ValueError("strategy: a batch of urls is crawled 'single' or 'spider'")
        if render not in RENDERS:
            raise ValueError(f"unknown render {render!r}; choose one of {list(RENDERS)}")
        if render != "http" and (problem := browser_missing(self.browser_options)):
            raise BrowserUnavailableError(f"render {render!r}: {problem}")
        single = strategy == "single"
        pages = len(urls) if single else (max_pages or crawl.max_pages)
        if not 1 <= pages <= crawl.max_urls_per_job:
            raise ValueError(f"maxPages must be between 1 and {crawl.max_urls_per_job}")
        depth = 0 if single else (crawl.max_depth if max_depth is None else max_depth)
        if depth < 0:
            raise ValueError("maxDepth must be 0 or more")
        request: dict[str, Any] = {
            "url": urls[0],
            "strategy": strategy,
            "maxPages": pages,
            "maxDepth": depth,
            "include": list(include),
            "exclude": list(exclude),
            "allowSubdomains": allow_subdomains,
            "render": render,
            "map": map_only,
        }
        if len(urls) > 1:
            request["urls"] = urls
        if metadata:
            request["metadata"] = check_metadata(metadata)
        secrets: dict[str, Any] = {}
        if (headers or cookies) and len({origin(u) for u in urls}) > 1:
            raise ValueError(
                "headers, cookies: a login goes to one site; a batch with a login must share "
                "its URLs' scheme, host and port"
            )
        if headers or cookies:
            secrets |= {"headers": dict(headers or {}), "cookies": dict(cookies or {})}
            request["login"] = {"headers": sorted(headers or {}), "cookies": sorted(cookies or {})}
        if webhook is not None:
            canonicalize(str(webhook.get("url", "")))
            # lore POSTs there with headers the caller chose: only to the tenant's own domains
            self.check_domain(str(webhook["url"]), "webhook.url")
            hook_headers = dict(webhook.get("headers") or {})
            request["webhook"] = {"url": str(webhook["url"]), "headers": sorted(hook_headers)}
            if hook_headers:
                secrets["webhookHeaders"] = hook_headers
        return request, secrets

    def cancel_job(self, job_id: str) -> Job:
        """Mark a job cancelled: a queued job never starts, a running crawl stops within a page
        or two (what it stored stays stored)."""
        job = self.catalog.get_job(job_id, self.tenant)
        if job.finished:
            return job
        if job.status == "queued":  # it never runs: its login goes now (a runner's at its end)
            self.catalog.forget_secrets(job_id)
        return self.catalog.update_job(job_id, status="cancelled", message="cancel requested")

    # single-page apps -------------------------------------------------------------------------

    def ingest_snapshot(
        self,
        url: str,
        phase: str,
        dom: str | bytes,
        trigger_action: str | None = None,
        title: str | None = None,
    ) -> SnapshotResult:
        """Store a DOM snapshot of `url` taken at load (`initial`) or after an action."""
        canonical = canonicalize(url)
        self.check_domain(canonical)
        snapshot = Snapshot(  # the ingestor refuses an unknown phase
            tenant_id=self.tenant,
            url=canonical,
            phase=phase,  # type: ignore[arg-type]
            dom=dom,
            trigger_action=trigger_action,
            title=title,
        )
        return self.spa.ingest(snapshot)

    async def scan_page(
        self,
        url: str,
        dom: str,
        goal: str | None = None,
        max_elements: int = 50,
        offset: int = 0,
        viewport_only: bool = False,
        limiter: Any = None,
        require_elements: bool = True,
    ) -> ScanAnswer:
        """The agent's page as elements, patterns and suggested actions, ranked for `goal`
        (reading and ranking run in a thread under `limiter`, with the searches);
        InvalidDomError for a page with nothing to act on unless `require_elements` is False."""
        canonical = canonicalize(url)
        self.check_domain(canonical)
        limit = self.settings.spa.max_dom_bytes
        if len(dom) > limit or len(dom.encode("utf-8", "replace")) > limit:
            raise SnapshotTooLargeError(f"dom is over the {limit}-byte limit")
        check_dom(dom)
        text = await self.scanner.scan(url, dom)

        def read() -> ScanAnswer:
            page = read_scanned(text, canonical, require_elements)
            return answer(page, self.ranker, goal, max_elements, offset, viewport_only)

        return await anyio.to_thread.run_sync(read, limiter=limiter)

    def submit_capture(
        self, url: str, explore: bool = True, max_actions: int = 20, run_recipe: bool = True
    ) -> Job:
        """Validate and queue a server-side capture of a single-page app."""
        spa = self.settings.spa
        canonical = canonicalize(url)
        self.check_domain(canonical)
        if not 1 <= max_actions <= spa.max_actions:
            raise ValueError(f"maxActions must be between 1 and {spa.max_actions}")
        if spa.policy == "llm" and not spa.llm_base_url:
            raise ValueError("LORE_SPA__POLICY=llm needs LORE_SPA__LLM_BASE_URL")
        if problem := browser_missing(self.browser_options):
            raise BrowserUnavailableError(f"capture: {problem}")
        request: dict[str, object] = {
            "url": canonical,
            "explore": explore,
            "maxActions": max_actions,
            "runRecipe": run_recipe,
        }
        if (address := fetch_address(canonical, url.strip())) != canonical:
            request["address"] = address  # a server may answer `/app/` and not `/app`
        return self.catalog.create_job(self.tenant, "spa-capture", request)

    # retrieval --------------------------------------------------------------------------------

    def search(self, text: str, flt: ChunkFilter, k: int, mode: SearchMode = "hybrid") -> list[Hit]:
        """The engine's best candidates, re-scored by the reranker when one is configured, then
        re-ranked for freshness with near-duplicates collapsed."""
        with tracer.start_as_current_span("embed", attributes={"lore.texts": 1}):
            vector = self.embedder.embed_query(text)
        # One candidate pool for every k, as deep as the deepest k allowed: the engine's fusion
        # normalises over the pool, and freshness and the duplicate collapse choose from it, so
        # a pool that grew with k gave k=1 a different first result than k=10. Now the best k
        # are a prefix of the best k+1 (at 50 clients it costs 8 % of resolve's answers/s
        # against a pool of 3k for k=8: docs/serving.md).
        limit = candidate_pool(self.settings.max_k, k)
        if self.reranker is not None:
            limit = max(limit, self.settings.search.rerank_candidates)
        query = SearchQuery(text=text, vector=vector, filter=flt, limit=limit, mode=mode)
        with tracer.start_as_current_span("search", attributes={"lore.mode": mode, "lore.k": k}):
            if self.reranker is None:  # the store ranks (in its own process, if it has one)
                return ranked_search(self.store, query, self.freshness, k)
            candidates = self.store.search(query)
        with tracer.start_as_current_span("rerank", attributes={"lore.pool": len(candidates)}):
            candidates = self.reranker.rerank(text, candidates)
        return rerank(candidates, self.freshness, k, query=text)

    def resolve(
        self, url: str, query: str | None, k: int, include_superseded: bool = False
    ) -> ResolveResult:
        """What lore knows for an agent on `url`: the page's domain, org knowledge first."""
        domain = page_domain(url)
        self.check_domain(url)
        flt = ChunkFilter(
            tenant_ids=(self.tenant, PUBLIC_TENANT),
            domains=(domain,),
            include_superseded=include_superseded,
        )
        if query and query.strip():
            hits = self.search(query, flt, k)
        else:  # the page's own chunks: a client-side route (`#/plugins`) is a page too
            with suppress(ValueError):
                url = canonicalize(url)
            page = replace(flt, domains=(), urls=(url,))
            hits = [Hit(c, 1.0) for c in self.store.scroll(page, k)]
        org = [h for h in hits if h.chunk.tenant_id == self.tenant]
        public = [h for h in hits if h.chunk.tenant_id != self.tenant]
        return ResolveResult(org + public, bool(org))

    def site_model(self, url: str) -> dict[str, Any] | None:
        """What captures learned about this page (else the domain's latest page), compact."""
        models = self.catalog.site_models(self.tenant, page_domain(url))
        if not models:
            return None
        with suppress(ValueError):
            url = canonicalize(url)
        chosen = next((m for m in models if m.url == url), models[0])
        return compact_site_model(chosen.url, chosen.model)

    def agent_context(
        self,
        url: str,
        query: str | None = None,
        goal: str | None = None,
        k: int = 8,
        parameter: str | None = None,
    ) -> AgentContext:
        """Everything an agent should know before planning a step on `url`: the knowledge for
        its query (or, with `parameter`, the chunks most likely to hold that value), skill
        hints for its goal on this domain, and what captures learned about the page."""
        if parameter:
            query = f"{parameter} {query or ''}".strip()
        resolved = self.resolve(url, query or goal, k)
        skills = self.skills.search(self.tenant, page_domain(url), goal, 3) if goal else []
        return AgentContext(resolved.hits, resolved.has_org_knowledge, skills, self.site_model(url))

    def query(
        self,
        text: str,
        k: int,
        flt: ChunkFilter | None = None,
        include_public: bool = True,
        mode: SearchMode = "hybrid",
    ) -> list[Hit]:
        """General search; the tenant scope is set here whatever `flt` says."""
        tenants = (self.tenant, PUBLIC_TENANT) if include_public else (self.tenant,)
        flt = flt or ChunkFilter()
        scoped = replace(flt, tenant_ids=tenants, domains=tuple(d.lower() for d in flt.domains))
        hits = self.search(text, scoped, k, mode)
        if self.allowed is not None:  # uploads without a URL have no domain: the tenant's own
            hits = [
                h
                for h in hits
                if not h.chunk.domain or domain_allowed(self.allowed, h.chunk.domain)
            ]
        return hits

    def explain(self, text: str, hits: Sequence[Hit]) -> dict[str, Explanation]:
        """How each hit's score was made: its dense and lexical scores (a dense and a sparse
        search over the hits' documents alone), the fused score before freshness, and the
        freshness, phrase and section factors."""
        if not hits:
            return {}
        vector = self.embedder.embed_query(text)
        within = ChunkFilter(
            tenant_ids=tuple({h.chunk.tenant_id for h in hits}),
            document_ids=tuple({h.chunk.document_id for h in hits}),
            include_superseded=True,
            include_flagged=True,
        )
        scores: dict[str, dict[str, float]] = {}
        for mode in ("dense", "sparse"):
            query = SearchQuery(text, vector, within, EXPLAIN_POOL, mode)
            scores[mode] = {h.chunk.id: h.score for h in self.store.search(query)}
        now = datetime.now(UTC)
        quoted = phrase_overlap(text, list(hits), len(hits)) if self.freshness.phrase_boost else []
        grams = naming_grams(text)
        explained = {}
        for index, hit in enumerate(hits):
            fresh = freshness_factor(hit.chunk, self.freshness, now)
            phrase = 1 + self.freshness.phrase_boost * quoted[index] if quoted else 1.0
            section = section_factor(hit.chunk, self.freshness, grams)
            factor = fresh * phrase * section
            fused = hit.score / factor if hit.score >= 0 else hit.score * factor
            explained[hit.chunk.id] = Explanation(
                dense=scores["dense"].get(hit.chunk.id),
                lexical=scores["sparse"].get(hit.chunk.id, 0.0),
                fused=fused,
                freshness=fresh,
                phrase=phrase,
                section=section,
                score=hit.score,
            )
        return explained

    # documents --------------------------------------------------------------------------------

    def documents(
        self, limit: int, offset: int, where: DocumentQuery | None = None
    ) -> tuple[list[Document], int]:
        return (
            self.catalog.list_documents(self.tenant, limit, offset, where),
            self.catalog.count_documents(self.tenant, where),
        )

    def document(self, doc_id: str, history: bool = False) -> DocumentContent:
        """A document with its Markdown and its chunks in reading order (`history`: superseded
        and flagged ones too). Raises NotFoundError."""
        doc = self.catalog.get_document(self.tenant, doc_id)
        markdown = self.catalog.document_text(self.tenant, doc_id)
        flt = ChunkFilter(
            tenant_ids=(self.tenant,),
            document_ids=(doc_id,),
            include_superseded=history,
            include_flagged=history,
        )
        chunks = self.store.scroll(flt, MAX_DOCUMENT_CHUNKS)
        chunks.sort(key=lambda c: (c.phase != "static", c.phase, c.position, c.id))
        return DocumentContent(doc, markdown, chunks, self.store.count(flt))

    def delete_document(self, doc_id: str) -> None:
        self.indexer.delete(self.tenant, doc_id)

    def delete_documents(self, where: DocumentQuery) -> int:
        """Delete every document of the tenant that `where` selects; how many were deleted."""
        if where == DocumentQuery():
            raise ValueError("say which documents: urlPrefix, domain, type, source or title")
        deleted = 0
        for doc_id in self.catalog.document_ids(self.tenant, where):
            try:
                self.indexer.delete(self.tenant, doc_id)
            except NotFoundError:  # deleted meanwhile
                continue
            deleted += 1
        return deleted
