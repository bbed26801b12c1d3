"""The `lore` command. With a server running (recorded in DATA_DIR/server.json, or LORE_SERVER_URL)
commands go through its HTTP API; otherwise they open the data directory directly."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Annotated, Any, NoReturn

import httpx
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from api.memory import MemoryTrimmer
from api.settings import Settings

app = typer.Typer(
    help="lore: knowledge ingestion and retrieval for web agents.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(stderr=True)
out = Console()


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import version  # noqa: PLC0415

        out.print(f"lore {version('lore')}", highlight=False)
        raise typer.Exit


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """lore: knowledge ingestion and retrieval for web agents."""


def _settings() -> Settings:
    try:
        return Settings()
    except ValidationError as exc:
        why = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        _fail(f"configuration: {why}", 2)


def _server_url(settings: Settings) -> str | None:
    """The URL of a running lore server for this data directory, if one answers."""
    candidates = [settings.server_url] if settings.server_url else []
    if settings.server_file.exists():
        with suppress(ValueError, KeyError):
            candidates.append(json.loads(settings.server_file.read_text())["url"])
    for url in candidates:
        try:
            if httpx.get(f"{url}/healthz", timeout=2.0).status_code == 200:
                return str(url)
        except httpx.HTTPError:
            continue
    if settings.server_url:
        raise typer.BadParameter(f"no lore server answers at {settings.server_url}")
    return None


@contextmanager
def _progress(label: str) -> Iterator[Any]:
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        yield bar


def _fail(message: str, code: int = 1) -> NoReturn:
    console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)


def _print_chunks(chunks: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        out.print_json(json.dumps(chunks))
        return
    if not chunks:
        console.print("no matching knowledge")
    for n, c in enumerate(chunks, 1):
        path = " > ".join(c["headingPath"])
        out.print(
            f"[bold]{n}. {c['title'] or c['url']}[/bold]  [dim]{c['url']}  "
            f"score {c['score']:.3f}[/dim]"
        )
        if path:
            out.print(f"   [cyan]{path}[/cyan]")
        out.print("   " + c["text"].replace("\n", "\n   "), markup=False, highlight=False)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address")] = None,
    port: Annotated[int | None, typer.Option(help="Port")] = None,
    log_level: Annotated[str, typer.Option(help="Log level")] = "info",
) -> None:
    """Run the API server with the embedded engine and job worker."""
    import uvicorn  # noqa: PLC0415

    from api.app import create_app  # noqa: PLC0415

    settings = _settings()
    host = host or settings.host
    port = port or settings.port
    from api.observe import configure_logging  # noqa: PLC0415

    configure_logging(log_level, settings.log_format)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    _first_key(settings)
    url = f"http://{host}:{port}"
    console.print(f"lore serving {settings.data_dir.resolve()} at {url} (docs: {url}/docs)")
    MemoryTrimmer().start()  # freed memory back to the system, every 2 s
    uvicorn.run(  # uvicorn's own loggers go through lore's handler (with the request id)
        create_app(settings, announce_url=url, freeze_startup=True),
        host=host,
        port=port,
        log_level=log_level,
        log_config=None,
    )


@app.command()
def worker(
    threads: Annotated[
        int | None,
        typer.Option(min=1, max=64, help="Pages stored at once (default: LORE_QUEUE__THREADS)"),
    ] = None,
    log_level: Annotated[str, typer.Option(help="Log level")] = "info",
) -> None:
    """Run a worker of the worker tier: jobs claimed from the catalog, crawls' pages from the
    queue engine (needs LORE_QUEUE__URL, LORE_DATABASE_URL and LORE_QDRANT__URL)."""
    from api.jobs.pages import QueueUnavailableError  # noqa: PLC0415
    from api.jobs.tier import run_worker  # noqa: PLC0415

    settings = _settings()
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    MemoryTrimmer().start()
    logging.getLogger("pika").setLevel(logging.CRITICAL)  # dramatiq reports what matters
    try:
        run_worker(settings, threads or settings.queue.threads)
    except (ValueError, QueueUnavailableError) as exc:
        _fail(str(exc), 2)


def _pairs(values: list[str] | None, sep: str, what: str) -> dict[str, str]:
    """`name<sep>value` options as a dict; exit 2 for one without the separator."""
    pairs = {}
    for value in values or ():
        name, found, rest = value.partition(sep)
        if not found or not name.strip():
            _fail(f"{what} {value!r}: write it as name{sep.strip()}value", 2)
        pairs[name.strip()] = rest.strip()
    return pairs


AsJson = Annotated[bool, typer.Option("--json", help="Print JSON on standard output")]
Meta = Annotated[
    list[str] | None,
    typer.Option("--meta", help="Custom metadata key=value (queries filter on it); repeat"),
]


@app.command("index-link")
def index_link(
    urls: Annotated[list[str], typer.Argument(help="The http(s) URL to index (or several)")],
    strategy: Annotated[str, typer.Option(help="single | sitemap | spider")] = "single",
    max_pages: Annotated[int | None, typer.Option(help="Pages fetched at most")] = None,
    max_depth: Annotated[int | None, typer.Option(help="Link hops from the URL (spider)")] = None,
    include: Annotated[list[str] | None, typer.Option(help="Glob a URL must match")] = None,
    exclude: Annotated[list[str] | None, typer.Option(help="Glob a URL must not match")] = None,
    render: Annotated[str, typer.Option(help="http | browser | auto")] = "http",
    map_only: Annotated[
        bool, typer.Option("--map", help="List the URLs the crawl would ingest; ingest nothing")
    ] = False,
    header: Annotated[
        list[str] | None,
        typer.Option(help="'Name: value' sent to the site's own hosts (a login); repeat"),
    ] = None,
    cookie: Annotated[
        list[str] | None, typer.Option(help="name=value sent like --header; repeat")
    ] = None,
    meta: Meta = None,
    wait: Annotated[bool, typer.Option(help="Wait for the job, with a progress bar")] = True,
    as_json: AsJson = False,
) -> None:
    """Index a URL (or a batch), a sitemap or a whole site (a crawl job), with live progress.
    Login headers and cookies are sent to the crawled hosts only and never shown."""
    from api.client import calls  # noqa: PLC0415

    headers, cookies = _pairs(header, ":", "--header"), _pairs(cookie, "=", "--cookie")
    options = {
        "max_pages": max_pages,
        "max_depth": max_depth,
        "include": include or [],
        "exclude": exclude or [],
        "render": render,
        "map": map_only,
        "headers": headers,
        "cookies": cookies,
        "metadata": _pairs(meta, "=", "--meta"),
    }
    with _api() as lore:
        queued = lore(calls.index_link(urls[0] if len(urls) == 1 else urls, strategy, **options))
        console.print(f"job {queued.id} queued")
        if not wait:
            if as_json:
                _print_json(queued)
            return
        with _progress("index-link") as bar:
            task = bar.add_task(f"crawling {urls[0]}", total=None)
            while True:
                try:
                    job = lore(calls.job(queued.id))
                except httpx.TimeoutException:  # a busy server: the job goes on; ask again
                    continue
                bar.update(task, **_bar_fields(job.counts))
                if job.finished:
                    break
                time.sleep(0.3)
        if as_json:
            _print_json(job)
        if job.status != "completed":
            _fail(f"job {job.status}: {job.error}")
        counts = ", ".join(f"{n} {name}" for name, n in job.counts.items() if n)
        console.print(f"[green]{job.message}[/green] ({counts})")
        if map_only and not as_json:
            for listed in _listed_urls(lore, job.id):
                out.print(listed, markup=False, highlight=False, soft_wrap=True)


def _listed_urls(lore: Any, job_id: str) -> Iterator[str]:
    """The URLs a --map job listed, in discovery order, a page of them at a time."""
    from api.client import calls  # noqa: PLC0415

    offset, page = 0, 1000
    while True:
        urls = [u["url"] for u in lore(calls.job_urls(job_id, ["listed"], page, offset))]
        yield from urls
        if len(urls) < page:
            return
        offset += page


def _bar_fields(counts: dict[str, int]) -> dict[str, Any]:
    total = counts.get("discovered", 0) - counts.get("skipped", 0)
    done = total - counts.get("pending", 0) - counts.get("queued", 0)
    return {
        "completed": done,
        "total": total or None,
        "description": f"{counts.get('ingested', 0)} ingested, "
        f"{counts.get('unchanged', 0)} unchanged, {counts.get('failed', 0)} failed",
    }


@app.command()
def ingest(
    files: Annotated[
        list[Path],
        typer.Argument(help="Files to upload", exists=True, dir_okay=False, readable=True),
    ],
    url: Annotated[str | None, typer.Option(help="Declared URL (one file only)")] = None,
    title: Annotated[str | None, typer.Option(help="Title to store")] = None,
    meta: Meta = None,
    as_json: AsJson = False,
) -> None:
    """Ingest local files: documents (PDF, Office, EPUB, HTML, Markdown, text), structured data
    (CSV, JSON, YAML, XML) and media (transcribed). Exit code 2 when a file failed."""
    from api.client import LoreError, calls  # noqa: PLC0415

    uploads = [(f.name, f.read_bytes()) for f in files]
    metadata = _pairs(meta, "=", "--meta")
    with _api() as lore, console.status(f"extracting and embedding {len(files)} file(s)"):
        try:
            body = lore(calls.ingest(uploads, url, title, metadata))
        except LoreError as exc:
            if exc.status >= 500:
                raise
            _fail(exc.message, 2)  # one file, or none of several: nothing was stored
    for item in body["files"]:
        if item["status"] == "failed":
            console.print(f"[red]failed[/red] {item['filename']}: {item['message']}")
            continue
        console.print(
            f"{item['filename']}: {item['chunks']} chunks ({item['embedded']} embedded)"
            f" -> {item['document']['id']}"
        )
        for warning in item["document"]["warnings"]:
            console.print(f"  warning: {warning}")
    if body["failed"]:
        raise typer.Exit(2)


@app.command()
def query(
    text: Annotated[str, typer.Argument(help="What to search for")],
    url: Annotated[str | None, typer.Option(help="Resolve for this page (its domain)")] = None,
    k: Annotated[int, typer.Option(help="How many chunks", min=1, max=100)] = 5,
    meta: Annotated[
        list[str] | None,
        typer.Option("--meta", help="Only chunks with this metadata key=value; repeat"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Search the knowledge base (or resolve for a page with --url)."""
    from dataclasses import replace  # noqa: PLC0415

    from api.client import calls  # noqa: PLC0415

    metadata = _pairs(meta, "=", "--meta")
    if url and metadata:
        _fail("--meta filters a search; --url resolves for a page without filters", 2)
    call = calls.resolve(url, text, k) if url else calls.search(text, k, metadata=metadata or None)
    with _api() as lore:  # the chunks as the API sends them (every field, for --json)
        chunks = lore(replace(call, read=lambda body: list(body["chunks"])))
    _print_chunks(chunks, as_json)


def _first_key(settings: Settings) -> None:
    """With no API key yet, make one for the default tenant (every domain) and print it once."""
    if not settings.auth.required:
        console.print("[yellow]auth is off (LORE_AUTH__REQUIRED=false): no API keys needed")
        return
    from api.auth import Authenticator  # noqa: PLC0415
    from retrieval import Catalog  # noqa: PLC0415

    catalog = Catalog(settings.catalog_url)
    try:
        if any(k.revoked_at is None for k in catalog.api_keys()):
            return
        auth = Authenticator(catalog, settings.auth.rate_limit_per_minute)
        key, record = auth.create_key(
            settings.tenant, "first key", key=settings.auth.bootstrap_key, admin=True
        )
    finally:
        catalog.close()
    if settings.auth.bootstrap_key:
        console.print(f"created API key {record.id} from LORE_AUTH__BOOTSTRAP_KEY")
        return
    console.print(
        f"[bold]API key for tenant {settings.tenant!r}, an admin key (shown once; store it "
        f"now):[/bold] {key}\n"
        "send it as 'Authorization: Bearer <key>'; the CLI reads LORE_API_KEY"
    )


keys_app = typer.Typer(help="API keys: each maps to a tenant and its allowedDomains.")
app.add_typer(keys_app, name="keys")


def _keys() -> Any:
    from api.auth import Authenticator  # noqa: PLC0415
    from retrieval import Catalog  # noqa: PLC0415

    settings = _settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    where = settings.database_url and "the catalog in LORE_DATABASE_URL"
    console.print(f"lore: {where or settings.data_dir.resolve()} (keys are kept in the catalog)")
    catalog = Catalog(settings.catalog_url)
    return catalog, Authenticator(catalog, settings.auth.rate_limit_per_minute)


@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option(help="The tenant the key acts for")] = "default",
    name: Annotated[str, typer.Option(help="What the key is for")] = "",
    allowed_domain: Annotated[
        list[str] | None,
        typer.Option(help="A domain the tenant may use ('*.example.com', '*' for all); repeat"),
    ] = None,
    rate_limit: Annotated[
        int | None, typer.Option(help="Requests per minute (default: the server's)", min=1)
    ] = None,
    admin: Annotated[
        bool, typer.Option(help="It may also manage keys and tenants (/admin, the console)")
    ] = False,
    as_json: AsJson = False,
) -> None:
    """Create a key (and the tenant, if new); the key is printed once."""
    catalog, auth = _keys()
    try:
        key, record = auth.create_key(tenant, name, allowed_domain, rate_limit, admin=admin)
        domains = catalog.get_tenant(tenant).allowed_domains
    except ValueError as exc:
        _fail(str(exc), 2)
    finally:
        catalog.close()
    console.print(
        f"key {record.id} for tenant {tenant!r} (allowedDomains: {', '.join(domains)}); "
        "the key, on standard output, is shown once:"
    )
    if as_json:
        _print_json({"id": record.id, "tenant": tenant, "allowedDomains": domains, "key": key})
        return
    out.print(key, markup=False, highlight=False, soft_wrap=True)  # KEY=$(lore keys create ...)


@keys_app.command("list")
def keys_list(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's keys")] = None,
    as_json: AsJson = False,
) -> None:
    """Keys with their tenant, name, limit and state (never the keys themselves)."""
    catalog, _ = _keys()
    try:
        keys = catalog.api_keys(tenant)
        if as_json:
            _print_json(keys)
            return
        for key in keys:
            state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
            limit = f"{key.rate_limit}/min" if key.rate_limit else "default limit"
            out.print(  # people's output on stdout
                f"{key.id}  {key.prefix}…  tenant={key.tenant_id}  {state}  {limit}  {key.name}",
                markup=False,
                highlight=False,
            )
    finally:
        catalog.close()


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The id `lore keys list` shows")],
) -> None:
    """Revoke a key: a running server refuses it within a few seconds."""
    from retrieval import NotFoundError  # noqa: PLC0415

    catalog, auth = _keys()
    try:
        record = auth.revoke(key_id)
    except NotFoundError as exc:
        _fail(str(exc), 2)
    finally:
        catalog.close()
    console.print(f"revoked {record.id} (tenant {record.tenant_id})")


@contextmanager
def _api() -> Iterator[Any]:
    """The typed client on the running server, else on one started in this process (the model
    loads first) with a key for this command only; lore's error answers end the command."""
    from api.client import LoreClient, LoreError  # noqa: PLC0415

    settings = _settings()
    url, key, running = _server_url(settings), settings.api_key, None
    done: Callable[[], None] = lambda: None  # noqa: E731
    if url is None:
        from api.mcp import embedded_server, session_key  # noqa: PLC0415

        logging.basicConfig(level="WARNING", format="%(levelname)s %(name)s: %(message)s")
        where = settings.data_dir.resolve()
        console.print(f"lore: {where} (no server runs on it: one starts in this command)")
        with console.status("starting lore in this process"):
            key, done = session_key(settings)
            # one command's jobs run on its own event loop: no job process to start
            url, running = embedded_server(settings.model_copy(update={"job_process": False}))
    else:
        console.print(f"lore: the server at {url}")
    try:
        with LoreClient(url, key) as client:
            yield client
    except LoreError as exc:
        _fail(f"{exc.status} {exc.code}: {exc.message}", 2 if exc.status < 500 else 1)
    except httpx.HTTPError as exc:
        _fail(f"lore at {url} cannot be reached: {exc}")
    finally:
        if running is not None:
            running.should_exit = True
        done()


def _print_json(value: Any) -> None:
    from dataclasses import asdict, is_dataclass  # noqa: PLC0415

    def plain(v: Any) -> Any:
        return asdict(v) if is_dataclass(v) and not isinstance(v, type) else v

    data = [plain(v) for v in value] if isinstance(value, list) else plain(value)
    out.print_json(json.dumps(data, default=str))


jobs_app = typer.Typer(help="Jobs: crawls and SPA captures.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")
docs_app = typer.Typer(help="Documents: list, read, delete.", no_args_is_help=True)
app.add_typer(docs_app, name="docs")
skills_app = typer.Typer(help="Skills agents recorded: list, delete.", no_args_is_help=True)
app.add_typer(skills_app, name="skills")
Limit = Annotated[int, typer.Option(min=1, max=500, help="How many at most")]


@jobs_app.command("list")
def jobs_list(
    status: Annotated[list[str] | None, typer.Option(help="queued, running, ...; repeat")] = None,
    kind: Annotated[list[str] | None, typer.Option(help="index-link or spa-capture")] = None,
    limit: Limit = 20,
    as_json: AsJson = False,
) -> None:
    """The jobs, newest first."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        found = lore(calls.jobs(status, kind, limit))
    if as_json:
        _print_json(found)
        return
    for job in found:
        counts = ", ".join(f"{n} {name}" for name, n in job.counts.items() if n)
        out.print(f"{job.id}  {job.kind}  {job.status}  {job.message}  ({counts})", markup=False)


@jobs_app.command("show")
def jobs_show(job_id: str, as_json: AsJson = False) -> None:
    """A job's state and counts."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        job = lore(calls.job(job_id))
    if as_json:
        _print_json(job)
    else:
        out.print(f"{job.status}: {job.message}", markup=False)


@jobs_app.command("cancel")
def jobs_cancel(job_id: str, as_json: AsJson = False) -> None:
    """Stop a queued or running job; what it stored stays."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        job = lore(calls.cancel_job(job_id))
    console.print(f"job {job.id}: {job.status}")
    if as_json:
        _print_json(job)


UrlPrefix = Annotated[str | None, typer.Option(help="URLs starting so")]
Domain = Annotated[str | None, typer.Option(help="A host and its subdomains")]
DocType = Annotated[str | None, typer.Option("--type", help="html, pdf, markdown, ...")]
Source = Annotated[str | None, typer.Option(help="upload, link or spa")]
Title = Annotated[str | None, typer.Option(help="A part of the title")]


@docs_app.command("list")
def docs_list(
    url_prefix: UrlPrefix = None,
    domain: Domain = None,
    doc_type: DocType = None,
    source: Source = None,
    title: Title = None,
    limit: Limit = 50,
    as_json: AsJson = False,
) -> None:
    """Documents, most recently updated first; the filters combine."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        found = lore(calls.documents(url_prefix, domain, doc_type, source, title, limit))
    if as_json:
        _print_json(found)
        return
    for doc in found:
        out.print(
            f"{doc.id}  {doc.doc_type}  {doc.chunk_count} chunks  {doc.url}  {doc.title}",
            markup=False,
            highlight=False,
        )


@docs_app.command("show")
def docs_show(document_id: str, as_json: AsJson = False) -> None:
    """A document's Markdown (or, for an SPA page, its chunks in order)."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        whole = lore(calls.document(document_id))
    if as_json:
        _print_json(whole)
    elif whole.markdown is not None:
        out.print(whole.markdown, markup=False, highlight=False)
    else:
        for chunk in whole.chunks:
            path = " > ".join(chunk["headingPath"])
            out.print(f"[{chunk['phase']}] {path}\n{chunk['text']}\n", markup=False)


@docs_app.command("delete")
def docs_delete(
    document_id: Annotated[str | None, typer.Argument(help="One document")] = None,
    url_prefix: UrlPrefix = None,
    domain: Domain = None,
    doc_type: DocType = None,
    source: Source = None,
    title: Title = None,
    as_json: AsJson = False,
) -> None:
    """Delete one document, or every document the filters select, with their chunks."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        if document_id is not None:
            lore(calls.delete_document(document_id))
            deleted = 1
        else:
            deleted = lore(calls.delete_documents(url_prefix, domain, doc_type, source, title))
    console.print(f"deleted {deleted} document(s)")
    if as_json:
        _print_json({"deleted": deleted})


@skills_app.command("list")
def skills_list(
    domain: Annotated[str | None, typer.Option(help="Only this domain's skills")] = None,
    limit: Limit = 50,
    as_json: AsJson = False,
) -> None:
    """Skills, most recently used first."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        found = lore(calls.skills(domain, limit))
    if as_json:
        _print_json(found)
        return
    for skill in found:
        out.print(f"{skill.id}  {skill.domain}  {skill.hint}", markup=False, highlight=False)


@skills_app.command("delete")
def skills_delete(skill_id: str) -> None:
    """Forget a skill."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        lore(calls.delete_skill(skill_id))
    console.print(f"deleted skill {skill_id}")


schedules_app = typer.Typer(help="Re-crawls every so often: list, create, delete.")
app.add_typer(schedules_app, name="schedules", no_args_is_help=True)


@schedules_app.command("list")
def schedules_list(as_json: AsJson = False) -> None:
    """The schedules and when each runs next."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        found = lore(calls.schedules())
    if as_json:
        _print_json(found)
        return
    for schedule in found:
        starts = schedule.request.get("urls") or [schedule.request["url"]]
        out.print(
            f"{schedule.id}  every {schedule.interval_minutes} min  next {schedule.next_run_at}"
            f"  last job {schedule.last_job_id or '-'}  {' '.join(starts)}",
            markup=False,
        )


@schedules_app.command("create")
def schedules_create(
    urls: Annotated[list[str], typer.Argument(help="The http(s) URL to crawl (or several)")],
    every: Annotated[int, typer.Option(help="Minutes between runs (5 at least)")],
    strategy: Annotated[str, typer.Option(help="single | sitemap | spider")] = "single",
    max_pages: Annotated[int | None, typer.Option(help="Pages fetched at most")] = None,
    now: Annotated[bool, typer.Option(help="Make the first run now")] = True,
    header: Annotated[
        list[str] | None, typer.Option(help="'Name: value' for a login; repeat")
    ] = None,
    cookie: Annotated[list[str] | None, typer.Option(help="name=value; repeat")] = None,
    meta: Meta = None,
    as_json: AsJson = False,
) -> None:
    """Re-crawl a source every --every minutes (each run is an index-link job)."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        made = lore(
            calls.create_schedule(
                urls[0] if len(urls) == 1 else urls,
                every,
                strategy,
                now,
                max_pages=max_pages,
                headers=_pairs(header, ":", "--header"),
                cookies=_pairs(cookie, "=", "--cookie"),
                metadata=_pairs(meta, "=", "--meta"),
            )
        )
    if as_json:
        _print_json(made)
    else:
        out.print(f"{made.id}: next run {made.next_run_at}", markup=False)


@schedules_app.command("delete")
def schedules_delete(schedule_id: str) -> None:
    """Stop a schedule (the jobs it made stay) and forget its login."""
    from api.client import calls  # noqa: PLC0415

    with _api() as lore:
        lore(calls.delete_schedule(schedule_id))
    console.print(f"deleted schedule {schedule_id}")


@app.command()
def mcp() -> None:
    """Serve lore's agent tools over MCP on stdio (agent_context, resolve, search,
    record_skill, skill_outcome), through the running server or one started in-process."""
    from api.mcp import build_server, embedded_server, session_key  # noqa: PLC0415

    settings = _settings()
    logging.basicConfig(level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    url = _server_url(settings)
    key: str | None = settings.api_key
    done: Callable[[], None] = lambda: None  # noqa: E731
    running = None
    if url is None:
        key, done = session_key(settings)
        url, running = embedded_server(settings)
    try:
        build_server(url, key).run("stdio")
    finally:
        if running is not None:
            running.should_exit = True
        done()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
