"""The relational catalog: documents and jobs (SQLite embedded, PostgreSQL in the server stack)."""

from __future__ import annotations

import hashlib
import uuid
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    Integer,
    LargeBinary,
    String,
    Text,
    create_engine,
    delete,
    event,
    func,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from retrieval.errors import NotFoundError, StoreUnavailableError

JOB_STATES = ("queued", "running", "completed", "failed", "cancelled")
FINISHED_STATES = ("completed", "failed", "cancelled")


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Base(DeclarativeBase):
    pass


class _DocumentRow(_Base):
    __tablename__ = "lore_documents"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    url: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text, default="")
    doc_type: Mapped[str] = mapped_column(String(32))
    source: Mapped[str] = mapped_column(String(32))
    content_hash: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(Integer, default=0)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    extractor: Mapped[str] = mapped_column(String(64), default="", server_default="")
    warnings: Mapped[list[str]] = mapped_column(JSON, default=list, nullable=True)
    # What a re-crawl needs to ask "has it changed?": the HTTP validators and the raw body's hash.
    etag: Mapped[str | None] = mapped_column(Text, nullable=True)
    http_last_modified: Mapped[str | None] = mapped_column(Text, nullable=True)
    body_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    links: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)  # a page's out-links
    domain: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    # custom metadata the document was indexed with (`metadata` is SQLAlchemy's own name)
    meta: Mapped[dict[str, str] | None] = mapped_column(JSON, nullable=True)


class _DocumentTextRow(_Base):
    """A document's extracted Markdown, zlib-compressed: what `GET /knowledge/documents/{id}`
    shows (its chunks overlap and leave the headings to their paths)."""

    __tablename__ = "lore_document_texts"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    markdown: Mapped[bytes] = mapped_column(LargeBinary)


class _CrawlUrlRow(_Base):
    __tablename__ = "lore_crawl_urls"
    job_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    url_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    address: Mapped[str | None] = mapped_column(Text, nullable=True)  # see CrawlUrl.address
    seq: Mapped[int] = mapped_column(Integer)  # discovery order within the job
    depth: Mapped[int] = mapped_column(Integer, default=0)
    state: Mapped[str] = mapped_column(String(16), index=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    status_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    content_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    document_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    chunks: Mapped[int] = mapped_column(Integer, default=0)
    embedded: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class _SiteModelRow(_Base):
    """What the SPA explorer learned about a page: key elements, behaviours, a recipe."""

    __tablename__ = "lore_site_models"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # sha256(tenant, url)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    domain: Mapped[str] = mapped_column(String(255), index=True)
    url: Mapped[str] = mapped_column(Text)
    model: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class _TenantRow(_Base):
    __tablename__ = "lore_tenants"
    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    allowed_domains: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class _ApiKeyRow(_Base):
    __tablename__ = "lore_api_keys"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    prefix: Mapped[str] = mapped_column(
        String(32)
    )  # the key's first characters, to tell keys apart
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    name: Mapped[str] = mapped_column(Text, default="")
    rate_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)  # requests per minute
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # may manage keys and tenants (GET/POST/DELETE /admin/...); None in older catalogs: no
    admin: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


class _JobRow(_Base):
    __tablename__ = "lore_jobs"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), index=True)
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    counts: Mapped[dict[str, int]] = mapped_column(JSON)
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    message: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # the runner that holds the job ("host:pid:token") and when it last said it was alive
    claimed_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    notified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class _ScheduleRow(_Base):
    """A job made again every `every_s` seconds (a re-crawl of a source)."""

    __tablename__ = "lore_schedules"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    every_s: Mapped[int] = mapped_column(Integer)
    next_run_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    last_job_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class _SkillStatRow(_Base):
    """A tenant's skill KPIs for one day (UTC): lookups that asked for skills, those that found
    one, and the outcomes agents reported."""

    __tablename__ = "lore_skill_stats"
    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD
    lookups: Mapped[int] = mapped_column(Integer, default=0)
    hits: Mapped[int] = mapped_column(Integer, default=0)
    successes: Mapped[int] = mapped_column(Integer, default=0)
    failures: Mapped[int] = mapped_column(Integer, default=0)


class _SecretRow(_Base):
    """What a job or schedule sends but never shows (login headers and cookies, webhook
    headers): kept apart from its request, which job views echo; deleted when the job ends or
    the schedule is deleted."""

    __tablename__ = "lore_secrets"
    owner_id: Mapped[str] = mapped_column(String(64), primary_key=True)  # a job or schedule id
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


@dataclass(frozen=True)
class Document:
    id: str
    tenant_id: str
    url: str
    title: str
    doc_type: str
    source: str
    content_hash: str
    size_bytes: int
    chunk_count: int
    created_at: datetime
    updated_at: datetime
    extractor: str = ""
    warnings: tuple[str, ...] = ()  # what extraction left out or could not read
    etag: str | None = None
    http_last_modified: str | None = None
    body_hash: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)  # custom, given at indexing


@dataclass(frozen=True)
class DocumentQuery:
    """Which of a tenant's documents: every condition set must hold (None: any)."""

    url_prefix: str | None = None
    domain: str | None = None  # the host, or any of its subdomains
    doc_type: str | None = None
    source: str | None = None
    title: str | None = None  # a part of the title, in any case


def url_host(url: str) -> str:
    """The URL's host in lower case; "" for an upload (upload://name) or no host."""
    if url.startswith("upload://") or "://" not in url:
        return ""
    return (urlsplit(url).hostname or "").lower()


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _document_conditions(tenant_id: str, where: DocumentQuery | None) -> list[Any]:
    row = _DocumentRow
    conditions: list[Any] = [row.tenant_id == tenant_id]
    if where is None:
        return conditions
    if where.url_prefix:
        conditions.append(row.url.startswith(where.url_prefix, autoescape=True))
    if where.domain:
        host = where.domain.lower().strip(".")
        if any(c.isalpha() for c in host):  # a name: its subdomains too
            subdomain = row.domain.like(f"%.{_escape_like(host)}", escape="\\")
            conditions.append(or_(row.domain == host, subdomain))
        else:  # an address has no subdomains (127.0.0.1 is not in "0.0.1")
            conditions.append(row.domain == host)
    if where.doc_type:
        conditions.append(row.doc_type == where.doc_type)
    if where.source:
        conditions.append(row.source == where.source)
    if where.title:
        conditions.append(
            func.lower(row.title).like(f"%{_escape_like(where.title.lower())}%", escape="\\")
        )
    return conditions


# queued: fetched, and handed to a `lore worker` on the queue engine, which stores it
URL_STATES = (
    "pending",
    "queued",
    "ingested",
    "unchanged",
    "skipped",
    "failed",
    "listed",
    "removed",
)


@dataclass(frozen=True)
class CrawlUrl:
    """One URL of a crawl job and what became of it."""

    url: str
    depth: int
    state: str  # one of URL_STATES
    reason: str = ""  # why it was skipped or failed: robots, duplicate, out_of_scope:host, ...
    status_code: int | None = None
    content_hash: str | None = None
    document_id: str | None = None
    chunks: int = 0
    updated_at: datetime | None = None
    # Where it was found, where that differs from `url` (`/kb/` for `/kb`): where to fetch it,
    # a resumed run too (a host may answer only that form).
    address: str | None = None


@dataclass(frozen=True)
class Tenant:
    id: str
    allowed_domains: tuple[str, ...]  # host names, "*.example.com" for subdomains, "*" for all


@dataclass(frozen=True)
class ApiKey:
    id: str
    prefix: str
    tenant_id: str
    name: str
    rate_limit: int | None
    created_at: datetime
    revoked_at: datetime | None
    admin: bool = False


def _api_key(row: _ApiKeyRow) -> ApiKey:
    return ApiKey(
        row.id,
        row.prefix,
        row.tenant_id,
        row.name,
        row.rate_limit,
        _aware(row.created_at) or utcnow(),
        _aware(row.revoked_at),
        bool(row.admin),
    )


@dataclass(frozen=True)
class SiteModel:
    url: str
    domain: str
    model: dict[str, Any]
    updated_at: datetime


@dataclass(frozen=True)
class Job:
    id: str
    tenant_id: str
    kind: str
    status: str
    request: dict[str, Any]
    counts: dict[str, int] = field(default_factory=dict)
    progress: float = 0.0
    message: str = ""
    error: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    claimed_by: str | None = None
    heartbeat_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_STATES


def _aware(value: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; everything lore stores is UTC.
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _document(row: _DocumentRow) -> Document:
    return Document(
        id=row.id,
        tenant_id=row.tenant_id,
        url=row.url,
        title=row.title,
        doc_type=row.doc_type,
        source=row.source,
        content_hash=row.content_hash,
        size_bytes=row.size_bytes,
        chunk_count=row.chunk_count,
        created_at=_aware(row.created_at) or utcnow(),
        updated_at=_aware(row.updated_at) or utcnow(),
        extractor=row.extractor or "",
        warnings=tuple(row.warnings or ()),
        etag=row.etag,
        http_last_modified=row.http_last_modified,
        body_hash=row.body_hash,
        metadata=dict(row.meta or {}),
    )


def _job(row: _JobRow) -> Job:
    return Job(
        id=row.id,
        tenant_id=row.tenant_id,
        kind=row.kind,
        status=row.status,
        request=dict(row.request),
        counts=dict(row.counts),
        progress=row.progress,
        message=row.message,
        error=row.error,
        created_at=_aware(row.created_at) or utcnow(),
        started_at=_aware(row.started_at),
        finished_at=_aware(row.finished_at),
        claimed_by=row.claimed_by,
        heartbeat_at=_aware(row.heartbeat_at),
    )


@dataclass(frozen=True)
class SkillStat:
    tenant_id: str
    day: str
    lookups: int = 0
    hits: int = 0
    successes: int = 0
    failures: int = 0


@dataclass(frozen=True)
class CatalogStats:
    """What the catalog holds across tenants, for metrics."""

    jobs: dict[tuple[str, str], int]  # (kind, status) -> jobs
    urls: dict[tuple[str, str], int]  # (state, reason code) -> URLs of all jobs
    embedded: int  # chunks embedded for crawled pages
    documents: int


@dataclass(frozen=True)
class Schedule:
    id: str
    tenant_id: str
    kind: str
    request: dict[str, Any]
    every_s: int
    next_run_at: datetime
    last_job_id: str | None
    created_at: datetime


def _schedule(row: _ScheduleRow) -> Schedule:
    return Schedule(
        id=row.id,
        tenant_id=row.tenant_id,
        kind=row.kind,
        request=dict(row.request),
        every_s=row.every_s,
        next_run_at=_aware(row.next_run_at) or utcnow(),
        last_job_id=row.last_job_id,
        created_at=_aware(row.created_at) or utcnow(),
    )


def _add_missing_columns(engine: Engine) -> None:
    """Columns added since a catalog was created (create_all only creates missing tables)."""
    inspector = inspect(engine)
    for table in _Base.metadata.sorted_tables:
        present = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name not in present:
                kind = column.type.compile(dialect=engine.dialect)
                try:
                    with engine.begin() as connection:
                        connection.execute(
                            text(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}')
                        )
                except DBAPIError:
                    # Another process (the API beside a worker) added it first.
                    again = {c["name"] for c in inspect(engine).get_columns(table.name)}
                    if column.name not in again:
                        raise


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


class Catalog:
    """Documents and jobs in any SQLAlchemy database (`sqlite:///...`, `postgresql+psycopg://...`)."""

    def __init__(self, url: str) -> None:
        try:
            self._engine: Engine = create_engine(url, pool_pre_ping=True)
            if self._engine.dialect.name == "sqlite":
                # The API and lore's job process write one catalog: readers do not block the
                # writer, and a writer waits for another instead of failing at once.
                event.listen(self._engine, "connect", _sqlite_pragmas)
            _Base.metadata.create_all(self._engine)
            _add_missing_columns(self._engine)
            self._fill_domains()
        except SQLAlchemyError as exc:
            raise StoreUnavailableError(f"cannot open the catalog database {url!r}: {exc}") from exc

    def close(self) -> None:
        self._engine.dispose()

    def _fill_domains(self) -> None:
        """Documents stored before the catalog kept their host (once per catalog)."""
        with Session(self._engine) as session, session.begin():
            rows = session.execute(
                select(_DocumentRow.id, _DocumentRow.url).where(_DocumentRow.domain.is_(None))
            ).all()
            for doc_id, url in rows:
                session.execute(
                    update(_DocumentRow)
                    .where(_DocumentRow.id == doc_id)
                    .values(domain=url_host(url))
                )

    # documents -------------------------------------------------------------------------------

    def put_document(self, doc: Document) -> Document:
        with Session(self._engine) as session, session.begin():
            row = session.get(_DocumentRow, doc.id)
            if row is None:
                row = _DocumentRow(id=doc.id, created_at=doc.created_at)
                session.add(row)
            row.tenant_id = doc.tenant_id
            row.url = doc.url
            row.title = doc.title
            row.doc_type = doc.doc_type
            row.source = doc.source
            row.content_hash = doc.content_hash
            row.size_bytes = doc.size_bytes
            row.chunk_count = doc.chunk_count
            row.updated_at = doc.updated_at
            row.extractor = doc.extractor
            row.warnings = list(doc.warnings)
            row.etag = doc.etag
            row.http_last_modified = doc.http_last_modified
            row.body_hash = doc.body_hash
            row.domain = url_host(doc.url)
            row.meta = dict(doc.metadata) or None
            session.flush()
            return _document(row)

    def set_document_links(self, tenant_id: str, doc_id: str, links: Sequence[str]) -> None:
        """Keep a crawled page's links: a re-crawl that gets 304 for it still follows them."""
        with Session(self._engine) as session, session.begin():
            row = session.get(_DocumentRow, doc_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFoundError(f"no document {doc_id}")
            row.links = list(links)

    def document_links(self, tenant_id: str, doc_id: str) -> tuple[str, ...]:
        with Session(self._engine) as session:
            row = session.get(_DocumentRow, doc_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFoundError(f"no document {doc_id}")
            return tuple(row.links or ())

    # tenants and API keys --------------------------------------------------------------------

    def put_tenant(self, tenant_id: str, allowed_domains: Sequence[str]) -> Tenant:
        with Session(self._engine) as session, session.begin():
            row = session.get(_TenantRow, tenant_id)
            if row is None:
                row = _TenantRow(id=tenant_id, created_at=utcnow(), allowed_domains=[])
                session.add(row)
            row.allowed_domains = [d.lower() for d in allowed_domains]
            return Tenant(row.id, tuple(row.allowed_domains))

    def get_tenant(self, tenant_id: str) -> Tenant:
        with Session(self._engine) as session:
            row = session.get(_TenantRow, tenant_id)
            if row is None:
                raise NotFoundError(f"no tenant {tenant_id!r}")
            return Tenant(row.id, tuple(row.allowed_domains or ()))

    def tenants(self) -> list[Tenant]:
        with Session(self._engine) as session:
            rows = session.scalars(select(_TenantRow).order_by(_TenantRow.id))
            return [Tenant(r.id, tuple(r.allowed_domains or ())) for r in rows]

    def add_api_key(
        self,
        key_hash: str,
        prefix: str,
        tenant_id: str,
        name: str,
        rate_limit: int | None,
        admin: bool = False,
    ) -> ApiKey:
        self.get_tenant(tenant_id)
        row = _ApiKeyRow(
            id=uuid.uuid4().hex[:16],
            key_hash=key_hash,
            prefix=prefix,
            tenant_id=tenant_id,
            name=name,
            rate_limit=rate_limit,
            created_at=utcnow(),
            admin=admin,
        )
        with Session(self._engine) as session, session.begin():
            session.add(row)
            session.flush()
            return _api_key(row)

    def api_key_by_hash(self, key_hash: str) -> ApiKey | None:
        with Session(self._engine) as session:
            row = session.scalars(select(_ApiKeyRow).where(_ApiKeyRow.key_hash == key_hash)).first()
            return _api_key(row) if row is not None else None

    def api_keys(self, tenant_id: str | None = None) -> list[ApiKey]:
        with Session(self._engine) as session:
            query = select(_ApiKeyRow).order_by(_ApiKeyRow.created_at)
            if tenant_id is not None:
                query = query.where(_ApiKeyRow.tenant_id == tenant_id)
            return [_api_key(r) for r in session.scalars(query)]

    def revoke_api_key(self, key_id: str) -> ApiKey:
        with Session(self._engine) as session, session.begin():
            row = session.get(_ApiKeyRow, key_id)
            if row is None:
                raise NotFoundError(f"no API key {key_id!r}")
            row.revoked_at = row.revoked_at or utcnow()
            return _api_key(row)

    def put_site_model(self, tenant_id: str, url: str, domain: str, model: dict[str, Any]) -> None:
        key = hashlib.sha256(f"{tenant_id}\x1f{url}".encode()).hexdigest()
        with Session(self._engine) as session, session.begin():
            row = session.get(_SiteModelRow, key)
            if row is None:
                row = _SiteModelRow(id=key, tenant_id=tenant_id, domain=domain.lower(), url=url)
                session.add(row)
            row.model = model
            row.updated_at = utcnow()

    def site_models(self, tenant_id: str, domain: str, limit: int = 20) -> list[SiteModel]:
        """What was learned about pages of `domain`, most recent first."""
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_SiteModelRow)
                .where(_SiteModelRow.tenant_id == tenant_id, _SiteModelRow.domain == domain.lower())
                .order_by(_SiteModelRow.updated_at.desc())
                .limit(limit)
            )
            return [SiteModel(r.url, r.domain, dict(r.model), r.updated_at) for r in rows]

    def get_document(self, tenant_id: str, doc_id: str) -> Document:
        with Session(self._engine) as session:
            row = session.get(_DocumentRow, doc_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFoundError(f"no document {doc_id}")
            return _document(row)

    def list_documents(
        self,
        tenant_id: str,
        limit: int = 100,
        offset: int = 0,
        where: DocumentQuery | None = None,
    ) -> list[Document]:
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_DocumentRow)
                .where(*_document_conditions(tenant_id, where))
                .order_by(_DocumentRow.updated_at.desc(), _DocumentRow.id)
                .limit(limit)
                .offset(offset)
            )
            return [_document(r) for r in rows]

    def count_documents(self, tenant_id: str, where: DocumentQuery | None = None) -> int:
        with Session(self._engine) as session:
            total = session.scalar(
                select(func.count())
                .select_from(_DocumentRow)
                .where(*_document_conditions(tenant_id, where))
            )
            return int(total or 0)

    def document_ids(self, tenant_id: str, where: DocumentQuery) -> list[str]:
        with Session(self._engine) as session:
            return list(
                session.scalars(
                    select(_DocumentRow.id)
                    .where(*_document_conditions(tenant_id, where))
                    .order_by(_DocumentRow.id)
                )
            )

    def delete_document(self, tenant_id: str, doc_id: str) -> None:
        with Session(self._engine) as session, session.begin():
            result = session.execute(
                delete(_DocumentRow).where(
                    _DocumentRow.id == doc_id, _DocumentRow.tenant_id == tenant_id
                )
            )
            if getattr(result, "rowcount", 0) == 0:
                raise NotFoundError(f"no document {doc_id}")
            session.execute(delete(_DocumentTextRow).where(_DocumentTextRow.id == doc_id))

    def put_document_text(self, doc_id: str, markdown: str) -> None:
        data = zlib.compress(markdown.encode(), 6)
        with Session(self._engine) as session, session.begin():
            row = session.get(_DocumentTextRow, doc_id)
            if row is None:
                session.add(_DocumentTextRow(id=doc_id, markdown=data))
            else:
                row.markdown = data

    def document_text(self, tenant_id: str, doc_id: str) -> str | None:
        """The document's Markdown; None for one stored without it (an SPA's phases, or
        indexed before lore kept texts). Raises NotFoundError for an unknown document."""
        self.get_document(tenant_id, doc_id)
        with Session(self._engine) as session:
            row = session.get(_DocumentTextRow, doc_id)
            return None if row is None else zlib.decompress(row.markdown).decode()

    # jobs ------------------------------------------------------------------------------------

    def create_job(
        self,
        tenant_id: str,
        kind: str,
        request: dict[str, Any],
        secrets: dict[str, Any] | None = None,
    ) -> Job:
        """A queued job; `secrets` are kept apart from its request (see `secrets`)."""
        job = Job(
            id=str(uuid.uuid4()), tenant_id=tenant_id, kind=kind, status="queued", request=request
        )
        with Session(self._engine) as session, session.begin():
            if secrets:
                session.add(_SecretRow(owner_id=job.id, data=secrets))
            session.add(
                _JobRow(
                    id=job.id,
                    tenant_id=tenant_id,
                    kind=kind,
                    status=job.status,
                    request=request,
                    counts={},
                    progress=0.0,
                    message="queued",
                    created_at=job.created_at,
                )
            )
        return job

    def secrets(self, owner_id: str) -> dict[str, Any]:
        """The secrets a job or schedule was created with ({} when none, or forgotten)."""
        with Session(self._engine) as session:
            row = session.get(_SecretRow, owner_id)
            return {} if row is None else dict(row.data)

    def set_secrets(self, owner_id: str, secrets: dict[str, Any]) -> None:
        with Session(self._engine) as session, session.begin():
            session.merge(_SecretRow(owner_id=owner_id, data=secrets))

    def forget_secrets(self, owner_id: str) -> None:
        with Session(self._engine) as session, session.begin():
            session.execute(delete(_SecretRow).where(_SecretRow.owner_id == owner_id))

    def get_job(self, job_id: str, tenant_id: str | None = None) -> Job:
        with Session(self._engine) as session:
            row = session.get(_JobRow, job_id)
            if row is None or (tenant_id is not None and row.tenant_id != tenant_id):
                raise NotFoundError(f"no job {job_id}")
            return _job(row)

    def update_job(self, job_id: str, **changes: Any) -> Job:
        unknown = set(changes) - {
            "status",
            "counts",
            "progress",
            "message",
            "error",
            "started_at",
            "finished_at",
        }
        if unknown:
            raise ValueError(f"cannot update job fields {sorted(unknown)}")
        if "status" in changes and changes["status"] not in JOB_STATES:
            raise ValueError(f"unknown job status {changes['status']!r}")
        with Session(self._engine) as session, session.begin():
            row = session.get(_JobRow, job_id)
            if row is None:
                raise NotFoundError(f"no job {job_id}")
            for key, value in changes.items():
                setattr(row, key, value)
            session.flush()
            return _job(row)

    def claim_job(
        self, job_id: str, owner: str, stale: Callable[[Job], bool] = lambda job: False
    ) -> Job | None:
        """Claim a queued or running job for `owner`, unless another owner holds it and
        `stale(job)` says that owner is alive; None when it cannot be claimed. The claim is a
        compare-and-set on the previous owner and heartbeat, so two runners never both win."""
        with Session(self._engine) as session, session.begin():
            row = session.get(_JobRow, job_id)
            if row is None or row.status not in ("queued", "running"):
                return None
            job = _job(row)
            if row.claimed_by not in (None, owner) and not stale(job):
                return None
            result = session.execute(
                update(_JobRow)
                .where(
                    _JobRow.id == job_id,
                    _JobRow.claimed_by.is_(None)
                    if row.claimed_by is None
                    else _JobRow.claimed_by == row.claimed_by,
                    _JobRow.heartbeat_at.is_(None)
                    if row.heartbeat_at is None
                    else _JobRow.heartbeat_at == row.heartbeat_at,
                )
                .values(claimed_by=owner, heartbeat_at=utcnow())
                .execution_options(synchronize_session=False)
            )
            if getattr(result, "rowcount", 0) != 1:
                return None
        return self.get_job(job_id)

    def heartbeat(self, owner: str, job_ids: Sequence[str]) -> None:
        """Say that `owner` is still running these jobs."""
        if job_ids:
            with Session(self._engine) as session, session.begin():
                session.execute(
                    update(_JobRow)
                    .where(_JobRow.id.in_(job_ids), _JobRow.claimed_by == owner)
                    .values(heartbeat_at=utcnow())
                )

    def release_jobs(self, owner: str) -> None:
        """Give up `owner`'s unfinished jobs (a clean stop): another runner takes them at once."""
        with Session(self._engine) as session, session.begin():
            session.execute(
                update(_JobRow)
                .where(_JobRow.claimed_by == owner, _JobRow.status.in_(("queued", "running")))
                .values(claimed_by=None, heartbeat_at=None)
            )

    def mark_notified(self, job_id: str) -> bool:
        """Record that a job's webhook is being sent; False when it was recorded before."""
        with Session(self._engine) as session, session.begin():
            result = session.execute(
                update(_JobRow)
                .where(_JobRow.id == job_id, _JobRow.notified_at.is_(None))
                .values(notified_at=utcnow())
            )
            return getattr(result, "rowcount", 0) == 1

    def list_jobs(
        self,
        tenant_id: str,
        statuses: Sequence[str] = (),
        kinds: Sequence[str] = (),
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[Job], int]:
        """The tenant's jobs, newest first, and how many match in all."""
        conditions: list[Any] = [_JobRow.tenant_id == tenant_id]
        if statuses:
            conditions.append(_JobRow.status.in_(statuses))
        if kinds:
            conditions.append(_JobRow.kind.in_(kinds))
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_JobRow)
                .where(*conditions)
                .order_by(_JobRow.created_at.desc(), _JobRow.id)
                .limit(limit)
                .offset(offset)
            )
            jobs = [_job(r) for r in rows]
            total = session.scalar(select(func.count()).select_from(_JobRow).where(*conditions))
            return jobs, int(total or 0)

    # statistics ------------------------------------------------------------------------------

    def stats(self) -> CatalogStats:
        """Jobs by kind and status, crawled URLs by state and reason code (the reason up to its
        first ':'), chunks embedded for crawled pages, and documents, over all tenants."""
        with Session(self._engine) as session:
            jobs = session.execute(
                select(_JobRow.kind, _JobRow.status, func.count()).group_by(
                    _JobRow.kind, _JobRow.status
                )
            ).all()
            urls: dict[tuple[str, str], int] = {}
            for state, reason, n in session.execute(
                select(_CrawlUrlRow.state, _CrawlUrlRow.reason, func.count()).group_by(
                    _CrawlUrlRow.state, _CrawlUrlRow.reason
                )
            ).all():
                key = (state, (reason or "").split(":", 1)[0].strip())
                urls[key] = urls.get(key, 0) + int(n)
            embedded = session.scalar(select(func.sum(_CrawlUrlRow.embedded)))
            documents = session.scalar(select(func.count()).select_from(_DocumentRow))
        return CatalogStats(
            {(kind, status): int(n) for kind, status, n in jobs},
            urls,
            int(embedded or 0),
            int(documents or 0),
        )

    def add_skill_stats(self, stat: SkillStat) -> None:
        """Add to a tenant's KPIs of a day, in one statement (several processes may add at
        once); raises when the catalog cannot take it."""
        row = _SkillStatRow
        increments = {
            "lookups": row.lookups + stat.lookups,
            "hits": row.hits + stat.hits,
            "successes": row.successes + stat.successes,
            "failures": row.failures + stat.failures,
        }
        where = (row.tenant_id == stat.tenant_id, row.day == stat.day)
        for _ in range(3):
            with Session(self._engine) as session, session.begin():
                result = session.execute(update(row).where(*where).values(**increments))
                if getattr(result, "rowcount", 0):
                    return
            try:
                with Session(self._engine) as session, session.begin():
                    session.add(
                        row(
                            tenant_id=stat.tenant_id,
                            day=stat.day,
                            lookups=stat.lookups,
                            hits=stat.hits,
                            successes=stat.successes,
                            failures=stat.failures,
                        )
                    )
                return
            except IntegrityError:  # another process made the day's row first: add to it
                continue
        raise StoreUnavailableError(f"skill KPIs of {stat.tenant_id} on {stat.day} not written")

    def skill_stats(
        self, tenant_id: str | None = None, since: str | None = None
    ) -> list[SkillStat]:
        """Daily skill KPIs, oldest day first (a tenant's, or every tenant's)."""
        conditions: list[Any] = []
        if tenant_id is not None:
            conditions.append(_SkillStatRow.tenant_id == tenant_id)
        if since is not None:
            conditions.append(_SkillStatRow.day >= since)
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_SkillStatRow)
                .where(*conditions)
                .order_by(_SkillStatRow.day, _SkillStatRow.tenant_id)
            )
            return [
                SkillStat(r.tenant_id, r.day, r.lookups, r.hits, r.successes, r.failures)
                for r in rows
            ]

    # schedules -------------------------------------------------------------------------------

    def create_schedule(
        self,
        tenant_id: str,
        kind: str,
        request: dict[str, Any],
        every_s: int,
        first_run_at: datetime,
        secrets: dict[str, Any] | None = None,
    ) -> Schedule:
        """A job of `kind` with `request` made at `first_run_at` and every `every_s` after;
        `secrets` are kept apart, for every job it makes."""
        row = _ScheduleRow(
            id=str(uuid.uuid4()),
            tenant_id=tenant_id,
            kind=kind,
            request=request,
            every_s=every_s,
            next_run_at=first_run_at,
            last_job_id=None,
            created_at=utcnow(),
        )
        with Session(self._engine) as session, session.begin():
            session.add(row)
            if secrets:
                session.add(_SecretRow(owner_id=row.id, data=secrets))
            session.flush()
            return _schedule(row)

    def get_schedule(self, schedule_id: str, tenant_id: str | None = None) -> Schedule:
        with Session(self._engine) as session:
            row = session.get(_ScheduleRow, schedule_id)
            if row is None or (tenant_id is not None and row.tenant_id != tenant_id):
                raise NotFoundError(f"no schedule {schedule_id}")
            return _schedule(row)

    def list_schedules(self, tenant_id: str) -> list[Schedule]:
        """The tenant's schedules, oldest first."""
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_ScheduleRow)
                .where(_ScheduleRow.tenant_id == tenant_id)
                .order_by(_ScheduleRow.created_at, _ScheduleRow.id)
            )
            return [_schedule(r) for r in rows]

    def delete_schedule(self, schedule_id: str, tenant_id: str) -> None:
        """Delete a schedule and its secrets (the jobs it made stay); NotFoundError if none."""
        self.get_schedule(schedule_id, tenant_id)
        with Session(self._engine) as session, session.begin():
            session.execute(delete(_ScheduleRow).where(_ScheduleRow.id == schedule_id))
            session.execute(delete(_SecretRow).where(_SecretRow.owner_id == schedule_id))

    def due_schedules(self, now: datetime) -> list[Schedule]:
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_ScheduleRow)
                .where(_ScheduleRow.next_run_at <= now)
                .order_by(_ScheduleRow.next_run_at)
            )
            return [_schedule(r) for r in rows]

    def advance_schedule(self, schedule: Schedule, next_run_at: datetime) -> bool:
        """Move a due schedule to its next run; False when another process did first (it
        makes this run's job)."""
        with Session(self._engine) as session, session.begin():
            result = session.execute(
                update(_ScheduleRow)
                .where(
                    _ScheduleRow.id == schedule.id,
                    _ScheduleRow.next_run_at == schedule.next_run_at,
                )
                .values(next_run_at=next_run_at)
            )
            return bool(getattr(result, "rowcount", 0))

    def set_schedule_job(self, schedule_id: str, job_id: str) -> None:
        with Session(self._engine) as session, session.begin():
            session.execute(
                update(_ScheduleRow)
                .where(_ScheduleRow.id == schedule_id)
                .values(last_job_id=job_id)
            )

    def jobs_with_status(self, *statuses: str) -> list[Job]:
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_JobRow).where(_JobRow.status.in_(statuses)).order_by(_JobRow.created_at)
            )
            return [_job(r) for r in rows]

    # crawl URLs ------------------------------------------------------------------------------

    def add_crawl_urls(self, job_id: str, entries: Sequence[CrawlUrl]) -> list[CrawlUrl]:
        """Record URLs a job found; returns the entries that were new to the job (a URL seen
        before keeps its first record)."""
        by_hash: dict[str, CrawlUrl] = {}
        for entry in entries:
            by_hash.setdefault(_url_hash(entry.url), entry)
        if not by_hash:
            return []
        now = utcnow()
        with Session(self._engine) as session, session.begin():
            known = set(
                session.scalars(
                    select(_CrawlUrlRow.url_hash).where(
                        _CrawlUrlRow.job_id == job_id, _CrawlUrlRow.url_hash.in_(list(by_hash))
                    )
                )
            )
            seq = session.scalar(
                select(func.count()).select_from(_CrawlUrlRow).where(_CrawlUrlRow.job_id == job_id)
            )
            added = []
            for digest, entry in by_hash.items():
                if digest in known:
                    continue
                seq = int(seq or 0) + 1
                session.add(
                    _CrawlUrlRow(
                        job_id=job_id,
                        url_hash=digest,
                        url=entry.url,
                        address=entry.address if entry.address != entry.url else None,
                        seq=seq,
                        depth=entry.depth,
                        state=entry.state,
                        reason=entry.reason,
                        status_code=entry.status_code,
                        content_hash=entry.content_hash,
                        document_id=entry.document_id,
                        chunks=entry.chunks,
                        updated_at=now,
                    )
                )
                added.append(entry)
            return added

    def set_crawl_url(
        self, job_id: str, url: str, when_state: Sequence[str] = (), **changes: Any
    ) -> bool:
        """Record what became of a URL (state, reason, status_code, content_hash, ...); with
        `when_state`, only if the URL is in one of those states (False: nothing changed)."""
        allowed = {
            "state",
            "reason",
            "status_code",
            "content_hash",
            "document_id",
            "chunks",
            "embedded",
        }
        if unknown := set(changes) - allowed:
            raise ValueError(f"cannot update crawl URL fields {sorted(unknown)}")
        if changes.get("state", "pending") not in URL_STATES:
            raise ValueError(f"unknown URL state {changes['state']!r}")
        with Session(self._engine) as session, session.begin():
            row = session.get(_CrawlUrlRow, (job_id, _url_hash(url)), with_for_update=True)
            if row is None:
                raise NotFoundError(f"job {job_id} has no URL {url}")
            if when_state and row.state not in when_state:
                return False
            for key, value in changes.items():
                setattr(row, key, value)
            row.updated_at = utcnow()
            return True

    def get_crawl_url(self, job_id: str, url: str) -> CrawlUrl | None:
        with Session(self._engine) as session:
            row = session.get(_CrawlUrlRow, (job_id, _url_hash(url)))
            return None if row is None else _crawl_url(row)

    def crawl_urls(
        self,
        job_id: str,
        states: Sequence[str] = (),
        limit: int | None = None,
        offset: int = 0,
    ) -> list[CrawlUrl]:
        """A job's URLs in discovery order, optionally only those in `states`."""
        query = select(_CrawlUrlRow).where(_CrawlUrlRow.job_id == job_id)
        if states:
            query = query.where(_CrawlUrlRow.state.in_(list(states)))
        query = query.order_by(_CrawlUrlRow.seq).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        with Session(self._engine) as session:
            return [_crawl_url(r) for r in session.scalars(query)]

    def count_crawl_urls(self, job_id: str) -> dict[str, int]:
        """How many of a job's URLs are in each state."""
        with Session(self._engine) as session:
            rows = session.execute(
                select(_CrawlUrlRow.state, func.count())
                .where(_CrawlUrlRow.job_id == job_id)
                .group_by(_CrawlUrlRow.state)
            )
            return {state: int(n) for state, n in rows}

    def crawl_tally(self, job_id: str) -> tuple[dict[str, int], dict[str, int]]:
        """In one query, how many of a job's URLs are in each state and what they add up to:
        answers fetched, chunks stored, chunks embedded (kept in the catalog, so a job resumed
        after a crash, or run by several workers, counts every page once)."""
        states: dict[str, int] = {}
        totals = {"fetched": 0, "chunks": 0, "embedded": 0}
        with Session(self._engine) as session:
            rows = session.execute(
                select(
                    _CrawlUrlRow.state,
                    func.count(),
                    func.count(_CrawlUrlRow.status_code),
                    func.coalesce(func.sum(_CrawlUrlRow.chunks), 0),
                    func.coalesce(func.sum(_CrawlUrlRow.embedded), 0),
                )
                .where(_CrawlUrlRow.job_id == job_id)
                .group_by(_CrawlUrlRow.state)
            )
            for state, n, fetched, chunks, embedded in rows:
                states[state] = int(n)
                totals["fetched"] += int(fetched)
                totals["chunks"] += int(chunks)
                totals["embedded"] += int(embedded or 0)  # coalesced; typed nullable
        return states, totals

    def documents_by_source(self, tenant_id: str, source: str, url_prefix: str) -> list[Document]:
        """The tenant's documents from `source` whose URL starts with `url_prefix`."""
        with Session(self._engine) as session:
            rows = session.scalars(
                select(_DocumentRow).where(
                    _DocumentRow.tenant_id == tenant_id,
                    _DocumentRow.source == source,
                    _DocumentRow.url.startswith(url_prefix, autoescape=True),
                )
            )
            return [_document(r) for r in rows]


def _url_hash(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def _crawl_url(row: _CrawlUrlRow) -> CrawlUrl:
    return CrawlUrl(
        url=row.url,
        depth=row.depth,
        state=row.state,
        reason=row.reason,
        status_code=row.status_code,
        content_hash=row.content_hash,
        document_id=row.document_id,
        chunks=row.chunks,
        updated_at=_aware(row.updated_at),
        address=row.address,
    )
