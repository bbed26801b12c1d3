"""One conformance suite for both vector stores: the embedded Qdrant Edge store and the server
store on qdrant-client (its in-process `:memory:` engine here; a Qdrant server in the stack).
Both must keep the same data and return the same ids in the same order for the same queries."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import psutil
import pytest

from ingest import Embedder
from retrieval import (
    Chunk,
    ChunkFilter,
    EdgeStore,
    QdrantStore,
    RemoteStore,
    SearchQuery,
    StoreAddress,
    StoreProcess,
    StoreServer,
    StoreUnavailableError,
    VectorStore,
    chunk_id,
    content_hash,
    document_id,
    ranked_search,
)
from retrieval.ranking import Freshness, rerank

TEXTS = [
    "Reset your password from the account settings page.",
    "Invoices can be downloaded as PDF from the billing tab.",
    "The API rate limit is 600 requests per minute per key.",
    "Two-factor authentication uses an authenticator app or SMS.",
    "Delete a project from its settings; this cannot be undone.",
    "Webhooks retry failed deliveries with exponential backoff.",
    "Export your data as CSV or JSON from the reports page.",
    "Invite teammates by email from the members page.",
    "Single sign-on supports SAML and OpenID Connect.",
    "The mobile app works offline and syncs when back online.",
    "Billing runs on the first day of each month.",
    "API keys are shown once; store them in a secret manager.",
]
TENANTS = ("acme", "globex", "public")
DOMAINS = ("docs.acme.test", "help.globex.test")
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)


def corpus(embedder: Embedder) -> list[Chunk]:
    # No two chunks share a text: exact ties have no defined order in any engine.
    texts = [f"{text} ({tenant} handbook)" for tenant, text in itertools.product(TENANTS, TEXTS)]
    vectors = embedder.embed(texts)
    chunks = []
    for n, ((tenant, _), text, vector) in enumerate(
        zip(itertools.product(TENANTS, TEXTS), texts, vectors, strict=True)
    ):
        domain = DOMAINS[n % 2]
        section = "guide" if n % 3 else "api"
        url = f"https://{domain}/{section}/page-{n % 5}.html"
        doc = document_id(tenant, url)
        digest = content_hash(text)
        fetched = (BASE_TIME + timedelta(days=n)).isoformat()
        chunks.append(
            Chunk(
                id=chunk_id(tenant, doc, "static", None, digest, n),
                tenant_id=tenant,
                source="upload" if n % 4 == 0 else "link",
                source_id="conformance",
                document_id=doc,
                url=url,
                domain=domain,
                title=f"Page {n % 5}",
                heading_path=("Help", section),
                text=text,
                content_hash=digest,
                doc_type="pdf" if n % 5 == 0 else "html",
                position=n,
                fetched_at=fetched,
                ingested_at=fetched,
                phase="post_interaction" if n % 7 == 0 else "static",
                trigger_action="click(#more)" if n % 7 == 0 else None,
                superseded_by="newer" if n % 11 == 5 else None,
                flag="hidden_instructions" if n % 13 == 3 else None,
                metadata={"team": ("docs", "support", "sales")[n % 3], "v": str(n % 2)},
                vector=vector,
            )
        )
    return chunks


@pytest.fixture(params=["edge", "qdrant-client", "qdrant-rest", "remote", "store-process"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, real_embedder: Embedder
) -> Iterator[VectorStore]:
    made: VectorStore
    owner: VectorStore | StoreProcess | None = None
    if request.param == "edge":
        made = EdgeStore(tmp_path / "vectors", real_embedder.dim)
    elif request.param == "qdrant-client":
        made = QdrantStore(real_embedder.dim, location=":memory:")
    elif request.param == "qdrant-rest":  # the server code path, over HTTP
        server = request.getfixturevalue("qdrant_url")
        collection = f"conformance_{uuid.uuid4().hex[:8]}"
        made = QdrantStore(real_embedder.dim, url=server, collection=collection)
    elif request.param == "remote":  # the job process's view of the API's shard: a real pipe
        owner = EdgeStore(tmp_path / "vectors", real_embedder.dim)
        near, far = multiprocessing.Pipe()
        StoreServer(owner, far).start()
        made = RemoteStore(near)
    else:  # `lore serve`'s: the shard in a process of its own, over its socket
        owner = StoreProcess(partial(EdgeStore, tmp_path / "vectors", real_embedder.dim))
        made = owner.address.store(2)
    made.upsert(corpus(real_embedder))
    yield made
    made.close()
    if isinstance(owner, StoreProcess):
        owner.stop()
    elif owner is not None:
        owner.close()


def test_a_remote_store_raises_the_owners_errors_and_reports_a_lost_owner(
    tmp_path: Path,
) -> None:
    owner = EdgeStore(tmp_path / "vectors", 4)
    near, far = multiprocessing.Pipe()
    server = StoreServer(owner, far)
    server.start()
    remote = RemoteStore(near)
    try:
        with pytest.raises(Exception) as raised:
            remote.search(SearchQuery("x", [1.0, 0.0], ChunkFilter(), 3))  # the wrong size
        assert not isinstance(raised.value, StoreUnavailableError)
        assert remote.count(ChunkFilter()) == 0  # the connection still serves
    finally:
        remote.close()
        server.join(5)
        owner.close()
    orphan, gone = multiprocessing.Pipe()
    gone.close()  # the owner's end, as when its process died
    with pytest.raises(StoreUnavailableError, match="owns the store is gone"):
        RemoteStore(orphan).count(ChunkFilter())


def test_a_store_process_says_why_it_cannot_open_the_store(tmp_path: Path) -> None:
    first = StoreProcess(partial(EdgeStore, tmp_path / "vectors", 4))
    try:
        with pytest.raises(StoreUnavailableError, match="cannot open the vector store"):
            StoreProcess(partial(EdgeStore, tmp_path / "vectors", 4))  # the first one holds it
        assert first.alive()
    finally:
        first.stop()


def test_a_store_process_refuses_a_wrong_key_and_a_silent_client_holds_up_no_one(
    tmp_path: Path,
) -> None:
    owner = StoreProcess(partial(EdgeStore, tmp_path / "vectors", 4))
    silent = socket.socket(socket.AF_UNIX)
    try:
        silent.connect(owner.address.path)  # and never answers the key's challenge
        with pytest.raises(StoreUnavailableError, match="cannot reach the store process"):
            StoreAddress(owner.address.path, b"not the key").connect()
        remote = owner.address.store(1)
        assert remote.count(ChunkFilter()) == 0
        remote.close()
    finally:
        silent.close()
        owner.stop()


def dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # not reaped yet
    except psutil.NoSuchProcess:
        return True


def test_a_killed_store_process_is_started_again_and_keeps_what_was_written(
    tmp_path: Path, real_embedder: Embedder
) -> None:
    chunks = corpus(real_embedder)
    owner = StoreProcess(partial(EdgeStore, tmp_path / "vectors", real_embedder.dim))
    remote = owner.address.store(2)
    everything = ChunkFilter(include_superseded=True, include_flagged=True)
    try:
        remote.upsert(chunks)
        first = owner.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        while not dead(first):
            time.sleep(0.01)
        # A call made while it is down waits for the new process (and is asked again there).
        assert remote.count(everything) == len(chunks)
        assert owner.restarts == 1 and owner.pid != first and owner.alive()
        for _ in range(4):  # both connections, the other one made again too
            assert remote.count(everything) == len(chunks)
    finally:
        remote.close()
        owner.stop()
    assert not owner.alive()
    reopened = EdgeStore(tmp_path / "vectors", real_embedder.dim)  # closed: free to open
    try:
        assert reopened.count(everything) == len(chunks)
    finally:
        reopened.close()


def test_a_store_that_stays_away_is_unavailable(tmp_path: Path) -> None:
    owner = StoreProcess(partial(EdgeStore, tmp_path / "vectors", 4))
    remote = owner.address.store(1, reconnect_wait_s=1.0)
    owner.stop()  # gone for good: not started again
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match="owns the store is gone"):
        remote.count(ChunkFilter())
    assert time.monotonic() - started >= 0.9  # it waited for a restart first
    remote.close()


@pytest.fixture
def both(tmp_path: Path, real_embedder: Embedder) -> Iterator[tuple[VectorStore, VectorStore]]:
    chunks = corpus(real_embedder)
    edge = EdgeStore(tmp_path / "vectors", real_embedder.dim)
    server = QdrantStore(real_embedder.dim, location=":memory:")
    for made in (edge, server):
        made.upsert(chunks)
    yield edge, server
    edge.close()
    server.close()


FILTERS = {
    "tenant": ChunkFilter(tenant_ids=("acme",)),
    "tenant+public": ChunkFilter(tenant_ids=("acme", "public")),
    "domain": ChunkFilter(tenant_ids=("globex",), domains=("help.globex.test",)),
    "url prefix": ChunkFilter(url_prefixes=("https://docs.acme.test/api/",)),
    "doc type": ChunkFilter(doc_types=("pdf",)),
    "phase": ChunkFilter(phases=("post_interaction",)),
    "source": ChunkFilter(sources=("upload",)),
    "time": ChunkFilter(
        fetched_after=(BASE_TIME + timedelta(days=5)).timestamp(),
        fetched_before=(BASE_TIME + timedelta(days=20)).timestamp(),
    ),
    "history": ChunkFilter(tenant_ids=("acme",), include_superseded=True),
    "metadata": ChunkFilter(metadata=(("team", ("docs", "sales")), ("v", ("1",)))),
    "flagged too": ChunkFilter(tenant_ids=("acme",), include_flagged=True),
    "everything": ChunkFilter(include_superseded=True, include_flagged=True),
}


@pytest.mark.parametrize("name", FILTERS)
def test_filters_select_the_same_chunks(
    store: VectorStore, real_embedder: Embedder, name: str
) -> None:
    flt = FILTERS[name]
    expected = {c.id for c in corpus(real_embedder) if _matches(c, flt)}
    assert expected, name
    assert store.ids_where(flt) == expected
    assert store.count(flt) == len(expected)
    scrolled = store.scroll(flt, 1000)
    assert [c.id for c in scrolled] == [
        c.id
        for c in sorted(
            (c for c in corpus(real_embedder) if c.id in expected),
            key=lambda c: (c.document_id, c.position),
        )
    ]


def _matches(chunk: Chunk, flt: ChunkFilter) -> bool:
    payload = chunk.payload()
    for values, key in (
        (flt.tenant_ids, "tenant_id"),
        (flt.domains, "domain"),
        (flt.doc_types, "doc_type"),
        (flt.phases, "phase"),
        (flt.sources, "source"),
    ):
        if values and payload[key] not in values:
            return False
    if any(chunk.metadata.get(key) not in values for key, values in flt.metadata):
        return False
    if flt.url_prefixes and not any(chunk.url.startswith(p) for p in flt.url_prefixes):
        return False
    ts = payload["fetched_ts"]
    if flt.fetched_after is not None and ts < flt.fetched_after:
        return False
    if flt.fetched_before is not None and ts >= flt.fetched_before:
        return False
    states = flt.states()
    return not states or payload["state"] in states


QUERIES = [
    "how do I reset my password",
    "rate limit for the API",
    "download invoices",
    "SAML single sign-on",
    "export data as CSV",
    "webhook retries",
]
MODES = [("dense", None), ("sparse", None), ("hybrid", "dbsf"), ("hybrid", "rrf")]


@pytest.mark.parametrize(("mode", "fusion"), MODES)
@pytest.mark.parametrize("filter_name", ["tenant+public", "url prefix", "history"])
def test_same_ids_in_the_same_order(
    both: tuple[VectorStore, VectorStore],
    real_embedder: Embedder,
    mode: str,
    fusion: str | None,
    filter_name: str,
) -> None:
    edge, server = both
    for text in QUERIES:
        query = SearchQuery(
            text,
            real_embedder.embed_query(text),
            FILTERS[filter_name],
            8,
            mode,
            fusion,  # type: ignore[arg-type]
        )
        edge_hits, server_hits = edge.search(query), server.search(query)
        assert edge_hits or mode == "sparse", (text, mode)  # sparse: no shared word, no hit
        assert [h.chunk.id for h in edge_hits] == [h.chunk.id for h in server_hits], (text, mode)
        for a, b in zip(edge_hits, server_hits, strict=True):
            assert a.score == pytest.approx(b.score, rel=1e-3, abs=1e-4)
            assert a.chunk == b.chunk  # the whole payload survives the round trip


def test_ranked_search_ranks_as_in_this_process(
    store: VectorStore, real_embedder: Embedder
) -> None:
    """Over a RemoteStore the ranking runs in the store's process: the same hits, the same
    scores, as the engine's candidates ranked here."""
    policy = Freshness(phrase_boost=1.0, section_boost=0.3)
    for text in QUERIES:
        query = SearchQuery(text, real_embedder.embed_query(text), ChunkFilter(), 20)
        here = rerank(store.search(query), policy, 5, query=text)
        assert here, text
        there = ranked_search(store, query, policy, 5)
        assert [h.chunk for h in there] == [h.chunk for h in here], text
        # the engine's scores are float32: two searches may differ in the last bit, which
        # rounding to 6 places turned into a failure when a score sat on a rounding edge
        assert [h.score for h in there] == pytest.approx([h.score for h in here], abs=1e-5), text


def test_the_best_hit_is_the_relevant_one(store: VectorStore, real_embedder: Embedder) -> None:
    text = "how do I reset my password"
    query = SearchQuery(text, real_embedder.embed_query(text), ChunkFilter(tenant_ids=("acme",)), 3)
    assert "Reset your password" in store.search(query)[0].chunk.text


def test_deletes(store: VectorStore, real_embedder: Embedder) -> None:
    chunks = corpus(real_embedder)
    acme = ChunkFilter(tenant_ids=("acme",), include_superseded=True)
    before = store.count(acme)
    store.delete([chunks[0].id, "00000000-0000-0000-0000-000000000000"])
    assert store.count(acme) == before - 1
    store.delete_where(
        ChunkFilter(
            tenant_ids=("acme",), document_ids=(chunks[1].document_id,), include_superseded=True
        )
    )
    assert chunks[1].id not in store.ids_where(acme)
    with pytest.raises(ValueError, match="empty filter"):
        store.delete_where(ChunkFilter(include_superseded=True))
    assert store.count(ChunkFilter(tenant_ids=("globex",))) > 0  # other tenants untouched
    store.upsert([replace(chunks[0], text="changed")])
    [again] = [c for c in store.scroll(acme, 1000) if c.id == chunks[0].id]
    assert again.text == "changed"


def test_set_payload_marks_supersession_and_filters_follow(store: VectorStore) -> None:
    current = ChunkFilter(tenant_ids=("globex",))
    before = store.ids_where(current)
    target = sorted(before)[0]
    store.set_payload(
        [target],
        {
            "superseded_by": "fresh",
            "superseded_at": "2026-11-22T00:00:00+00:00",
            "state": "superseded",
        },
    )
    assert store.ids_where(current) == before - {target}
    history = store.scroll(ChunkFilter(tenant_ids=("globex",), include_superseded=True), 1000)
    [marked] = [c for c in history if c.id == target]
    assert marked.superseded_by == "fresh" and marked.text  # the rest of the payload is kept
    store.set_payload([], {"state": "superseded"})  # nothing to do
    assert store.ids_where(current) == before - {target}


def test_flagged_chunks_are_left_out_unless_asked_for(store: VectorStore) -> None:
    flagged = ChunkFilter(include_flagged=True, include_superseded=True)
    everything = store.scroll(flagged, 1000)
    marked = {c.id for c in everything if c.flag}
    assert marked
    assert not marked & store.ids_where(ChunkFilter(include_superseded=True, tenant_ids=TENANTS))
    assert marked <= store.ids_where(ChunkFilter(include_flagged=True, tenant_ids=TENANTS))
