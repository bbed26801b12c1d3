"""The optional reranking stage: wired between the engine and freshness for query and resolve,
its failures answered with 503, and the cross-encoder loader (local directories only).

The service tests use a deterministic stand-in reranker (it prefers texts with a marker word) so
that the expected order is known; the cross-encoder tests load a tiny randomly initialised BERT
cross-encoder built here, because no trained cross-encoder can be installed on this machine."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api import Lore, Settings, create_app
from api.auth import Authenticator
from ingest import Embedder
from retrieval import CrossEncoderReranker, Reranker, RerankerError
from tests.conftest import make_settings

QUERY = "how many requests a minute does the API allow"
PAGES = {
    # The better match for the query by the engine's scores...
    "https://docs.acme.test/limits": "# Limits\n\nThe API allows 600 requests a minute per key.",
    # ...and the one the stand-in reranker prefers (it carries the marker).
    "https://docs.acme.test/faq": "# FAQ\n\nQuotas are listed on the limits page. verified",
}


class MarkerReranker(Reranker):
    """Test stand-in: scores 1.0 for texts containing 'verified', 0.1 otherwise."""

    name = "marker"

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        self.seen.append(list(texts))
        return [1.0 if "verified" in t else 0.1 for t in texts]


class BrokenReranker(Reranker):
    name = "broken"

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        raise RuntimeError("model crashed")


class ShortReranker(Reranker):
    name = "short"

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        return [0.5]


@contextmanager
def serve(tmp_path: Path, embedder: Embedder, reranker: Reranker | None) -> Iterator[TestClient]:
    settings = make_settings(tmp_path / "data", search={"rerank_candidates": 5})
    lore = Lore(settings, embedder=embedder, reranker=reranker)
    key, _ = Authenticator(lore.catalog, 600).create_key(settings.tenant, "tests")
    with TestClient(
        create_app(settings, lore=lore), headers={"Authorization": f"Bearer {key}"}
    ) as client:
        for url, text in PAGES.items():
            response = client.post(
                "/knowledge/ingest", data={"url": url}, files={"files": ("p.md", text.encode())}
            )
            assert response.status_code == 201, response.text
        yield client
    lore.close()


def first_urls(client: TestClient) -> tuple[str, str]:
    query = client.post("/knowledge/query", json={"query": QUERY, "k": 2})
    assert query.status_code == 200, query.text
    resolve = client.get(
        "/knowledge/resolve", params={"url": "https://docs.acme.test/x", "query": QUERY}
    )
    assert resolve.status_code == 200, resolve.text
    return query.json()["chunks"][0]["url"], resolve.json()["chunks"][0]["url"]


def test_the_reranker_orders_query_and_resolve_results(
    tmp_path: Path, real_embedder: Embedder
) -> None:
    with serve(tmp_path / "plain", real_embedder, None) as client:
        assert first_urls(client) == ("https://docs.acme.test/limits",) * 2

    marker = MarkerReranker()
    with serve(tmp_path / "reranked", real_embedder, marker) as client:
        assert first_urls(client) == ("https://docs.acme.test/faq",) * 2
        query = client.post("/knowledge/query", json={"query": QUERY, "k": 2}).json()
    assert query["chunks"][0]["score"] == pytest.approx(1.0)  # the reranker's score, reported
    # it read each candidate with its title and headings, as the engine indexed it
    assert any(t.startswith("FAQ") and "verified" in t for t in marker.seen[0])


def test_a_failing_reranker_is_a_503_not_a_silent_fallback(
    tmp_path: Path, real_embedder: Embedder
) -> None:
    for name, reranker in (("broken", BrokenReranker()), ("short", ShortReranker())):
        with serve(tmp_path / name, real_embedder, reranker) as client:
            response = client.post("/knowledge/query", json={"query": QUERY})
        assert response.status_code == 503
        assert response.json()["error"] == "reranker_failed"
        assert name in response.json()["message"]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT cross-encoder with random weights and the bundled model's tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from ingest.embed import bundled_model_path

    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_path()), local_files_only=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=1,
    )  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_cross_encoder_scores_each_candidate_from_a_local_directory(
    tiny_cross_encoder: Path,
) -> None:
    reranker = CrossEncoderReranker(tiny_cross_encoder)
    scores = reranker.scores("api limits", ["600 requests a minute", "opening hours", "x"])
    assert len(scores) == 3 and all(0.0 < s < 1.0 for s in scores)  # sigmoid outputs
    assert reranker.name == tiny_cross_encoder.name


def test_cross_encoder_refuses_what_is_not_a_local_relevance_model(
    tmp_path: Path, tiny_cross_encoder: Path
) -> None:
    with pytest.raises(RerankerError, match="does not exist"):
        CrossEncoderReranker(tmp_path / "cross-encoder/ms-marco-MiniLM-L6-v2")
    two_labels = tmp_path / "two-labels"
    from transformers import AutoConfig, BertForSequenceClassification

    config = AutoConfig.from_pretrained(tiny_cross_encoder, num_labels=2)
    BertForSequenceClassification(config).save_pretrained(two_labels)
    (two_labels / "tokenizer.json").write_bytes(
        (tiny_cross_encoder / "tokenizer.json").read_bytes()
    )
    with pytest.raises(RerankerError, match="2 output labels"):
        CrossEncoderReranker(two_labels)
    # configured by settings: lore does not start with a reranker it cannot load
    settings = Settings(
        data_dir=tmp_path / "data", search={"reranker_model_path": tmp_path / "missing"}
    )  # type: ignore[arg-type]
    with pytest.raises(RerankerError, match="does not exist"):
        Lore(settings)
