"""`Lore.ingest`: extraction of the next documents runs while a pass is embedded, results come
back in order with failures in their place, and an error stops the pipeline without losing what
was stored. A deterministic fake embedder (hashed words) keeps these fast; what they check is
the pipeline, not the model's vectors."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from api import Lore
from ingest import HashEmbedder, IngestError, PreparedDocument, SourceDocument
from ingest.embed import Vector
from ingest.errors import EmbeddingError
from retrieval import ChunkFilter
from tests.conftest import make_settings


def page(n: int, words: int = 60) -> bytes:
    body = " ".join(f"word{n}x{i}" for i in range(words))
    head = f"<head><title>Page {n}</title></head>"
    return f"<html>{head}<body><h1>Page {n}</h1><p>{body}</p></body></html>".encode()


def source(lore: Lore, n: int, data: bytes | None = None) -> SourceDocument:
    return SourceDocument(
        tenant_id=lore.tenant,
        data=page(n) if data is None else data,
        url=f"https://docs.test/{n}.html",
        source="upload",
        source_id="test",
        filename=f"{n}.html",
        content_type="text/html",
    )


class GatedEmbedder(HashEmbedder):
    """Its first batch waits until a later pass's document is prepared, and that document's
    preparation waits until the first batch has started (see the test): only extraction and
    embedding running at once gets through; one after the other waits 20 s and fails."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = threading.Event()
        self.prepared_while_embedding = threading.Event()
        self.calls = 0

    def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        self.calls += 1
        self.embedding.set()
        if self.calls == 1 and not self.prepared_while_embedding.wait(20):
            raise EmbeddingError("no document was prepared while the first pass was embedded")
        return super().embed_batch(texts)


MakeLore = Callable[..., Lore]


@pytest.fixture
def make_lore(tmp_path: Path) -> Iterator[MakeLore]:
    made: list[Lore] = []

    def start(embedder: HashEmbedder | None = None, name: str = "data") -> Lore:
        lore = Lore(make_settings(tmp_path / name), embedder=embedder or HashEmbedder())
        made.append(lore)
        return lore

    yield start
    for lore in made:
        lore.close()


def test_the_next_documents_are_extracted_while_a_pass_is_embedded(make_lore: MakeLore) -> None:
    embedder = GatedEmbedder()
    lore = make_lore(embedder)
    prepare = lore.prepare

    def watched(src: SourceDocument) -> PreparedDocument:
        if src.filename == "5.html":  # a document of a later pass
            if not embedder.embedding.wait(20):
                raise RuntimeError("every document is prepared before any is embedded")
            embedder.prepared_while_embedding.set()
        return prepare(src)

    lore.prepare = watched  # type: ignore[method-assign]
    # passes of at most 2 chunks (a page here is one): page 5 is three passes on
    results = lore.indexer.ingest([source(lore, n) for n in range(8)], lore.prepare, max_chunks=2)
    assert [r.document.url for r in results if not isinstance(r, IngestError)] == [
        f"https://docs.test/{n}.html" for n in range(8)
    ]
    assert embedder.calls == 4


def test_results_come_in_order_with_failures_in_place_and_match_one_by_one(
    make_lore: MakeLore,
) -> None:
    piped, plain = make_lore(name="piped"), make_lore(name="plain")
    datas = [page(0), b"", page(2), b"\x00\x01\x02 not a document \xff" * 10, page(4)]
    results = piped.ingest([source(piped, n, d) for n, d in enumerate(datas)])
    assert [type(r).__name__ for r in results] == [
        "IndexResult",
        "EmptyDocumentError",
        "IndexResult",
        results[3].__class__.__name__,
        "IndexResult",
    ]
    assert isinstance(results[3], IngestError)  # binary bytes: unsupported, stored nowhere
    expected = []
    for n, data in enumerate(datas):
        try:
            expected.append(plain.index([plain.prepare(source(plain, n, data))])[0])
        except IngestError:
            expected.append(None)
    for got, want in zip(results, expected, strict=True):
        if want is None:
            continue
        assert not isinstance(got, IngestError)
        assert (got.document.id, got.chunks, got.embedded) == (
            want.document.id,
            want.chunks,
            want.embedded,
        )
    stored = piped.store.ids_where(ChunkFilter(tenant_ids=(piped.tenant,)))
    assert stored == plain.store.ids_where(ChunkFilter(tenant_ids=(plain.tenant,)))
    assert len(piped.catalog.list_documents(piped.tenant)) == 3


def test_an_embedding_error_stops_the_pipeline_and_keeps_the_passes_before(
    make_lore: MakeLore,
) -> None:
    class FailsOnThirdPass(HashEmbedder):
        calls = 0

        def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
            self.calls += 1
            if self.calls == 3:
                raise EmbeddingError("the model ran out of memory")
            return super().embed_batch(texts)

    lore = make_lore(FailsOnThirdPass())
    pulled: list[int] = []

    def sources() -> Iterator[SourceDocument]:
        for n in range(200):
            pulled.append(n)
            yield source(lore, n)

    before = threading.active_count()
    with pytest.raises(EmbeddingError, match="out of memory"):
        lore.indexer.ingest(sources(), lore.prepare, max_chunks=2, ahead=4)
    assert threading.active_count() == before  # the extracting thread ended
    assert len(pulled) < 200  # it stopped reading the sources
    stored = lore.catalog.list_documents(lore.tenant)
    assert 1 <= len(stored) < 10  # the passes embedded before the error are kept, whole


def test_a_failing_source_is_raised_once_what_came_before_is_stored(make_lore: MakeLore) -> None:
    lore = make_lore()

    def sources() -> Iterator[SourceDocument]:
        yield source(lore, 0)
        yield source(lore, 1)
        raise OSError("the upload directory went away")

    with pytest.raises(OSError, match="went away"):
        lore.ingest(sources())
    assert sorted(d.url for d in lore.catalog.list_documents(lore.tenant)) == [
        "https://docs.test/0.html",
        "https://docs.test/1.html",
    ]
