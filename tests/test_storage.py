"""The Qdrant Edge store and the relational catalog (SQLite, and PostgreSQL when it runs)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from ingest import HashEmbedder
from retrieval import (
    Catalog,
    Chunk,
    ChunkFilter,
    Document,
    EdgeStore,
    NotFoundError,
    SearchQuery,
    StoreUnavailableError,
    chunk_id,
    content_hash,
    document_id,
    utcnow,
)

# A deterministic fake embedder keeps these storage tests fast; the API tests use the real model.
EMBEDDER = HashEmbedder()


def make_chunk(
    tenant: str,
    url: str,
    text: str,
    position: int = 0,
    domain: str = "a.test",
    doc_type: str = "html",
) -> Chunk:
    doc = document_id(tenant, url)
    digest = content_hash(text)
    return Chunk(
        id=chunk_id(tenant, doc, "static", None, digest),
        tenant_id=tenant,
        source_id="test",
        document_id=doc,
        url=url,
        domain=domain,
        title="T",
        heading_path=("H",),
        text=text,
        content_hash=digest,
        doc_type=doc_type,
        position=position,
        fetched_at=utcnow().isoformat(),
        ingested_at=utcnow().isoformat(),
        vector=EMBEDDER.embed_query(text),
    )


def search(store: EdgeStore, text: str, flt: ChunkFilter, mode: str = "hybrid") -> list[str]:
    hits = store.search(SearchQuery(text, EMBEDDER.embed_query(text), flt, 10, mode))  # type: ignore[arg-type]
    return [h.chunk.text for h in hits]


def test_edge_store_round_trip_filters_and_persistence(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "v", EMBEDDER.dim)
    chunks = [
        make_chunk("t1", "http://a.test/1", "solar panels convert sunlight into power"),
        make_chunk("t1", "http://a.test/1", "wind turbines need steady wind", position=1),
        make_chunk("t1", "http://b.test/2", "solar farms in spain", domain="b.test"),
        make_chunk("t2", "http://a.test/1", "solar secrets of tenant two"),
    ]
    store.upsert(chunks)
    store.upsert(chunks)  # idempotent: same ids
    assert store.count(ChunkFilter()) == 4
    t1 = ChunkFilter(tenant_ids=("t1",))
    for mode in ("hybrid", "dense", "sparse"):
        found = search(store, "solar", t1, mode)
        assert "solar secrets of tenant two" not in found
        assert found[0].startswith("solar")
    assert search(store, "solar", ChunkFilter(tenant_ids=("t1",), domains=("b.test",))) == [
        "solar farms in spain"
    ]
    page = store.scroll(ChunkFilter(tenant_ids=("t1",), urls=("http://a.test/1",)), 10)
    assert [c.position for c in page] == [0, 1]
    assert page[0].heading_path == ("H",) and page[0].vector == ()
    store.close()

    reopened = EdgeStore(tmp_path / "v", EMBEDDER.dim)
    assert reopened.count(ChunkFilter()) == 4
    doc = chunks[0].document_id
    reopened.delete_where(ChunkFilter(tenant_ids=("t1",), document_ids=(doc,)))
    assert reopened.count(ChunkFilter(tenant_ids=("t1",))) == 1
    assert reopened.count(ChunkFilter(tenant_ids=("t2",))) == 1  # same URL, other tenant
    with pytest.raises(ValueError, match="empty filter"):
        reopened.delete_where(ChunkFilter(include_superseded=True))
    with pytest.raises(ValueError, match="384"):
        reopened.upsert([replace(chunks[0], vector=[0.1, 0.2])])
    reopened.close()


def test_superseded_chunks_are_hidden_unless_asked(tmp_path: Path) -> None:
    store = EdgeStore(tmp_path / "v", EMBEDDER.dim)
    old = replace(
        make_chunk("t", "http://a.test/", "status pending"),
        superseded_by="x",
        superseded_at=utcnow().isoformat(),
    )
    store.upsert([old, make_chunk("t", "http://a.test/", "status approved")])
    assert search(store, "status", ChunkFilter(tenant_ids=("t",))) == ["status approved"]
    both = search(store, "status", ChunkFilter(tenant_ids=("t",), include_superseded=True))
    assert sorted(both) == ["status approved", "status pending"]
    store.close()


def test_a_second_process_cannot_open_a_held_store(tmp_path: Path) -> None:
    import subprocess
    import sys

    store = EdgeStore(tmp_path / "v", EMBEDDER.dim)
    code = (
        "import sys; from pathlib import Path; from retrieval import EdgeStore, "
        "StoreUnavailableError\ntry:\n    EdgeStore(Path(sys.argv[1]), 384)\n"
        "except StoreUnavailableError as e:\n    print('refused:', e); sys.exit(3)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "v")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3, result.stderr
    assert "Another lore process" in result.stdout
    store.close()
    assert StoreUnavailableError.__doc__


def test_catalog_documents_and_jobs(catalog: Catalog) -> None:
    tenant = f"tenant-{uuid.uuid4()}"  # PostgreSQL is shared between runs: isolate by tenant
    now = utcnow()
    doc = Document(
        id=str(uuid.uuid4()),
        tenant_id=tenant,
        url="http://a.test/",
        title="A",
        doc_type="html",
        source="link",
        content_hash="h",
        size_bytes=10,
        chunk_count=2,
        created_at=now,
        updated_at=now,
    )
    catalog.put_document(doc)
    catalog.put_document(replace(doc, chunk_count=3, updated_at=now + timedelta(seconds=1)))
    stored = catalog.get_document(tenant, doc.id)
    assert stored.chunk_count == 3 and stored.created_at.tzinfo is not None
    assert catalog.count_documents(tenant) == 1
    assert [d.id for d in catalog.list_documents(tenant)] == [doc.id]
    with pytest.raises(NotFoundError):
        catalog.get_document("someone-else", doc.id)
    catalog.delete_document(tenant, doc.id)
    with pytest.raises(NotFoundError):
        catalog.delete_document(tenant, doc.id)

    job = catalog.create_job(tenant, "index-link", {"url": "http://a.test/"})
    assert catalog.get_job(job.id).status == "queued"
    assert job.id in [j.id for j in catalog.jobs_with_status("queued")]
    done = catalog.update_job(
        job.id, status="completed", counts={"chunks": 4}, progress=1.0, finished_at=utcnow()
    )
    assert done.finished and done.counts == {"chunks": 4}
    with pytest.raises(NotFoundError):
        catalog.get_job(job.id, tenant_id="someone-else")
    with pytest.raises(ValueError, match="status"):
        catalog.update_job(job.id, status="exploded")
    with pytest.raises(ValueError, match="fields"):
        catalog.update_job(job.id, tenant_id="x")


def test_catalog_reports_an_unreachable_database() -> None:
    with pytest.raises(StoreUnavailableError, match="catalog"):
        Catalog("postgresql+psycopg://nobody@127.0.0.1:1/none")


def test_a_catalog_made_before_a_column_gets_it_once_whoever_adds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog from before `lore_crawl_urls.address` gets the column when lore opens it; a
    process that finds it missing and then added by another one (the API starting beside a
    worker) starts all the same."""
    import sqlalchemy

    from retrieval import CrawlUrl
    from retrieval import catalog as catalog_module

    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    Catalog(url).close()
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as connection:
        connection.execute(sqlalchemy.text("ALTER TABLE lore_crawl_urls DROP COLUMN address"))
    cat = Catalog(url)
    cat.add_crawl_urls(
        "job", [CrawlUrl("http://a.test/kb", 0, "pending", address="http://a.test/kb/")]
    )
    assert cat.crawl_urls("job")[0].address == "http://a.test/kb/"
    cat.close()

    real = catalog_module.inspect
    calls = {"n": 0}

    class Stale:  # the first look, taken before the other process added the column
        def __init__(self, engine: sqlalchemy.Engine) -> None:
            self.inspector = real(engine)

        def get_columns(self, table: str) -> list[dict[str, object]]:
            columns = self.inspector.get_columns(table)
            if table != "lore_crawl_urls":
                return columns
            calls["n"] += 1
            return [c for c in columns if c["name"] != "address" or calls["n"] > 1]

    monkeypatch.setattr(catalog_module, "inspect", Stale)
    catalog_module._add_missing_columns(engine)  # ALTER fails: the column is there; no error
    assert calls["n"] == 2  # looked again after the ALTER failed
    engine.dispose()
