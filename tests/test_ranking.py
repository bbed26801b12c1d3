"""Freshness ranking and near-duplicate collapse (pure functions), and the query filters,
history and tenant isolation through the HTTP API."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api import Lore, create_app
from api.auth import Authenticator
from ingest import HashEmbedder, SourceDocument
from retrieval import Chunk, ChunkFilter, Hit
from retrieval.ranking import Freshness, collapse_duplicates, rerank, word_trigrams
from tests.conftest import make_settings

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def chunk(cid: str, text: str, days_old: float, phase: str = "static", **extra: object) -> Chunk:
    fetched = (NOW - timedelta(days=days_old)).isoformat()
    return Chunk(
        id=cid, tenant_id="t", source_id="s", document_id=f"d-{cid}", url=f"https://a.test/{cid}",
        domain="a.test", title="", heading_path=(), text=text, content_hash=cid, doc_type="html",
        position=0, fetched_at=fetched, ingested_at=fetched, phase=phase,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def test_of_two_near_equal_answers_the_fresher_ranks_first() -> None:
    old = Hit(chunk("old", "The plan costs 10 EUR a month.", days_old=400), 0.80)
    new = Hit(chunk("new", "The plan costs 12 EUR a month.", days_old=2), 0.79)
    policy = Freshness(duplicate_similarity=None)
    assert [h.chunk.id for h in rerank([old, new], policy, 2, NOW)] == ["new", "old"]
    # a clearly better answer still wins over a fresher weak one
    weak = Hit(chunk("weak", "Unrelated news.", days_old=0), 0.40)
    assert rerank([old, weak], policy, 2, NOW)[0].chunk.id == "old"


def test_post_interaction_chunks_get_the_boost() -> None:
    static = Hit(chunk("s", "Tab content before the click.", 1), 0.70)
    revealed = Hit(chunk("p", "Tab content after the click.", 1, phase="post_interaction"), 0.66)
    policy = Freshness(half_life_days=None, duplicate_similarity=None)
    assert rerank([static, revealed], policy, 2, NOW)[0].chunk.id == "p"
    none = replace(policy, post_interaction_boost=0.0)
    assert rerank([static, revealed], none, 2, NOW)[0].chunk.id == "s"


def test_a_query_that_quotes_a_chunk_brings_it_first() -> None:
    sibling = Hit(
        chunk("s", "Tuples are immutable sequences, typically used to store data.", 1), 0.80
    )
    quoted = Hit(
        chunk("q", "Using a pair of parentheses to denote the empty tuple: () is allowed.", 1), 0.74
    )
    policy = Freshness(half_life_days=None, duplicate_similarity=None, phrase_boost=0.5)
    sentence = "Using a pair of parentheses to denote the empty tuple"
    assert [h.chunk.id for h in rerank([sibling, quoted], policy, 2, NOW, sentence)] == ["q", "s"]
    # short queries (under 5 words), no boost, or beyond the window: the engine's order
    assert rerank([sibling, quoted], policy, 2, NOW, "empty tuple")[0].chunk.id == "s"
    off = replace(policy, phrase_boost=0.0)
    assert rerank([sibling, quoted], off, 2, NOW, sentence)[0].chunk.id == "s"
    narrow = replace(policy, phrase_window=1)
    assert rerank([sibling, quoted], narrow, 2, NOW, sentence)[0].chunk.id == "s"


def test_a_quoted_phrase_counts_in_the_chunk_s_headings_too() -> None:
    """Scalar: a query naming an operation's path and a parameter boosted the chunks that
    repeat the path in their text (a request example) over the parameter list, whose path is
    its heading."""
    path = ("GET /repositories/{owner}/{slug}/pulls",)
    example = Hit(chunk("ex", "curl http://api.test/repositories/{owner}/{slug}/pulls", 1), 0.75)
    params = Hit(
        replace(chunk("par", "Query Parameters - state: open, merged or declined", 1),
                heading_path=path),
        0.7,
    )  # fmt: skip
    policy = Freshness(half_life_days=None, duplicate_similarity=None, phrase_boost=1.0)
    query = "GET /repositories/{owner}/{slug}/pulls parameter state"
    assert [h.chunk.id for h in rerank([example, params], policy, 2, NOW, query)] == ["par", "ex"]


def test_a_query_that_names_a_section_gets_that_sections_own_text_first() -> None:
    """As on Stoplight Elements: a query naming an operation by its summary found the
    operation's path line, its parameters and the sidebar listing every summary above its
    description; all of them share the operation's heading or words."""
    op = ("Pet API", "Find a pet by its id")
    path = Hit(replace(chunk("path", "GET /pets/{petId}", 1), heading_path=op), 0.80)
    sidebar = Hit(chunk("nav", "Overview List pets Find a pet by its id Add a pet", 1), 0.77)
    params = Hit(
        replace(chunk("par", "petId integer required", 1), heading_path=(*op, "Parameters")), 0.7
    )
    text = "Returns the pet with this id, with its owner and vaccination dates, or a 404 error."
    description = Hit(replace(chunk("desc", text, 1), heading_path=op), 0.62)
    hits = [path, sidebar, params, description]
    policy = Freshness(half_life_days=None, duplicate_similarity=None, section_boost=0.3)
    query = "Find a pet by its id GET /pets/{petId}"
    order = [h.chunk.id for h in rerank(hits, policy, 4, NOW, query)]
    assert order == ["path", "desc", "nav", "par"]
    assert rerank([description], policy, 1, NOW, query)[0].score == pytest.approx(0.62 * 1.3)
    # a query that names no section, or the boost off: the engine's order
    engine = ["path", "nav", "par", "desc"]
    assert [h.chunk.id for h in rerank(hits, policy, 4, NOW, "pets by id")] == engine
    off = replace(policy, section_boost=0.0)
    assert [h.chunk.id for h in rerank(hits, off, 4, NOW, query)] == engine
    # a heading of under 3 words is never named, not even by itself ("Pets" heads every
    # section of a pet API)
    pets = Hit(replace(chunk("p", text, 1), heading_path=("Pets",)), 0.5)
    assert rerank([pets], policy, 1, NOW, "pets")[0].score == 0.5


def test_a_query_that_names_an_operation_by_its_id_gets_that_operations_own_text_first() -> None:
    """Stoplight Elements heads each operation with its id alone ("findPets"): the sidebar
    listing every operation and another operation's path line ranked above the description.
    A heading that is one identifier (camelCase, snake_case) is named by a query that holds
    it as a word; plain words of one or two ("Pets", "Parameters") still are not."""
    text = "Returns all pets from the system that the user has access to."
    description = Hit(replace(chunk("desc", text, 1), heading_path=("findPets",)), 0.62)
    sidebar = Hit(chunk("nav", "findPets GET addPet POST find pet by id GET", 1), 0.7)
    other = Hit(replace(chunk("add", "POST /pets", 1), heading_path=("addPet",)), 0.68)
    hits = [sidebar, other, description]
    policy = Freshness(half_life_days=None, duplicate_similarity=None, section_boost=0.3)
    order = [h.chunk.id for h in rerank(hits, policy, 3, NOW, "findPets GET /pets")]
    assert order == ["desc", "nav", "add"]
    # another operation's id, or the words of one split apart, name nothing
    assert [h.chunk.id for h in rerank(hits, policy, 3, NOW, "listPets GET /pets")] == [
        "nav",
        "add",
        "desc",
    ]
    assert rerank([description], policy, 1, NOW, "find pets")[0].score == 0.62
    snake = Hit(replace(chunk("s", text, 1), heading_path=("find_pets",)), 0.5)
    assert rerank([snake], policy, 1, NOW, "find_pets")[0].score == pytest.approx(0.5 * 1.3)
    for plain in ("Parameters", "JSON", "Pets"):
        hit = Hit(replace(chunk("w", text, 1), heading_path=(plain,)), 0.5)
        assert rerank([hit], policy, 1, NOW, plain.lower())[0].score == 0.5, plain


def test_a_query_that_names_an_operation_by_its_id_names_the_words_a_site_titles_it_with() -> None:
    """Fumadocs' OpenAPI pages title the operation `findPets` "Find Pets": the page's playground
    form and the other operations' lines ranked above its description for a query naming it
    by its id. Its words run together are that id (in any case, or in snake_case); a query
    holding them apart, or holding another id, names nothing (a two-word heading is never
    named by its words)."""
    text = "Returns all pets from the system that the user has access to."
    description = Hit(replace(chunk("desc", text, 1), heading_path=("Find Pets",)), 0.62)
    form = Hit(chunk("form", "Server URL GET /pets Send Query tags limit", 1), 0.7)
    other = Hit(replace(chunk("add", "POST /pets", 1), heading_path=("Add Pet",)), 0.68)
    hits = [form, other, description]
    policy = Freshness(half_life_days=None, duplicate_similarity=None, section_boost=0.3)
    order = [h.chunk.id for h in rerank(hits, policy, 3, NOW, "findPets GET /pets")]
    assert order == ["desc", "form", "add"]
    for query in ("find_pets", "FindPets"):
        assert rerank([description], policy, 1, NOW, query)[0].score == pytest.approx(0.62 * 1.3)
    for query in ("find pets", "Find Pets GET /pets", "listPets GET /pets", ""):
        assert [h.chunk.id for h in rerank(hits, policy, 3, NOW, query)] == ["form", "add", "desc"]
    # a heading of one word is no identifier's words run together
    pets = Hit(replace(chunk("p", text, 1), heading_path=("Pets",)), 0.5)
    assert rerank([pets], policy, 1, NOW, "pets")[0].score == 0.5


def test_a_query_that_names_an_operation_and_a_part_of_it_gets_that_part() -> None:
    """Slate's layout (Widdershins, Shins): each operation headed by its id, its code samples
    in eight languages directly under it, its parameters and responses in subsections. A query
    naming the operation, its path and "parameter state" ranked the code samples, which repeat
    the path, above the parameter list (11th), and "response 200 The repository" the responses
    23rd. A subsection whose every word the query holds (singular or plural) is named with the
    section the query names above it: named at two levels, its chunks gain the boost twice."""
    op = ("Default", "getPullRequestsByRepository")
    own = "curl -X GET /2.0/repositories/{username}/{slug}/pullrequests"
    sample = Hit(replace(chunk("own", own, 1), heading_path=op), 0.8)
    near = "curl -X GET /2.0/repositories/{username}/{slug}"
    other = Hit(replace(chunk("other", near, 1), heading_path=("Default", "getRepository")), 0.75)
    table = "| Name | In | Type | Required |\n| state | query | string | false |"
    params = Hit(replace(chunk("par", table, 1), heading_path=(*op, "Parameters")), 0.7)
    schema = Hit(replace(chunk("sch", "id integer", 1), heading_path=(*op, "Response Schema")), 0.7)
    hits = [sample, other, params, schema]
    policy = Freshness(half_life_days=None, duplicate_similarity=None, section_boost=0.3)
    about = "getPullRequestsByRepository GET /2.0/repositories/{username}/{slug}/pullrequests"
    order = [h.chunk.id for h in rerank(hits, policy, 4, NOW, f"{about} parameter state")]
    assert order == ["par", "own", "other", "sch"]
    assert rerank([params], policy, 1, NOW, f"{about} parameter")[0].score == pytest.approx(
        0.7 * 1.3 * 1.3
    )
    # "responses" holds "Response", not "Response Schema"; without the part's word, or
    # naming no section above it, the part gets nothing
    response = Hit(replace(chunk("r", "200 OK", 1), heading_path=(*op, "Response")), 0.5)
    assert rerank([response], policy, 1, NOW, f"{about} responses")[0].score == pytest.approx(
        0.5 * 1.3 * 1.3
    )
    assert rerank([schema], policy, 1, NOW, f"{about} response")[0].score == 0.7
    assert rerank([params], policy, 1, NOW, f"{about} state")[0].score == 0.7
    pets = Hit(replace(chunk("p", table, 1), heading_path=("Pets", "Parameters")), 0.5)
    assert rerank([pets], policy, 1, NOW, "pets parameters state")[0].score == 0.5
    # deeper parts too, when the query holds every heading below the one it names
    code = Hit(
        replace(chunk("c", "The repository", 1), heading_path=(*op, "Responses", "200")), 0.5
    )
    assert rerank([code], policy, 1, NOW, f"{about} response 200")[0].score == pytest.approx(
        0.5 * 1.3 * 1.3
    )
    assert rerank([code], policy, 1, NOW, f"{about} response 404")[0].score == 0.5


def test_last_modified_counts_over_fetch_time() -> None:
    stale = chunk("a", "x y z", days_old=0, last_modified="Mon, 01 Jan 2024 00:00:00 GMT")
    fresh = chunk("b", "p q r", days_old=30)
    ranked = rerank([Hit(stale, 0.5), Hit(fresh, 0.5)], Freshness(), 2, NOW)
    assert ranked[0].chunk.id == "b"


def test_near_duplicates_collapse_to_the_fresher_copy() -> None:
    text = "Support is open Monday to Friday from nine to five, except public holidays."
    hits = [
        Hit(chunk("mirror-old", text, 300), 0.9),
        Hit(chunk("other", "Refunds take five working days.", 1), 0.5),
        Hit(chunk("mirror-new", text.replace("holidays.", "holidays!"), 3), 0.85),
    ]
    collapsed = collapse_duplicates(hits, 0.9)
    assert [h.chunk.id for h in collapsed] == ["mirror-new", "other"]
    assert collapsed[0].score == 0.9  # at the better rank
    assert len(collapse_duplicates(hits, 1.01)) == 3


def test_two_views_of_one_section_of_an_app_collapse_at_a_lower_similarity() -> None:
    """An app's parameter list stored after two actions, one line apart (0.85 alike): one
    copy. The same texts under another heading, on another page or crawled are both kept."""
    words = [f"w{n}" for n in range(40)]
    other = [*words[:20], "changed", *words[21:]]
    view = replace(
        chunk("view-1", " ".join(words), 2, phase="initial"), heading_path=("GET /pets", "Query")
    )
    later = replace(view, id="view-2", text=" ".join(other), phase="post_interaction")

    def kept(a: Chunk, b: Chunk) -> list[str]:
        found = collapse_duplicates([Hit(a, 0.9), Hit(b, 0.8)], 0.9, view_threshold=0.8)
        return [h.chunk.id for h in found]

    assert kept(view, later) == ["view-1"]
    assert len(kept(view, replace(later, heading_path=("GET /pets", "Path")))) == 2
    assert len(kept(view, replace(later, url="https://a.test/another-page"))) == 2
    crawled = replace(view, phase="static"), replace(later, phase="static")
    assert len(kept(*crawled)) == 2
    assert len(collapse_duplicates([Hit(view, 0.9), Hit(later, 0.8)], 0.9)) == 2  # rule off


# through the API ------------------------------------------------------------------------------

PAGE = b"# Pricing\n\nThe team plan costs 12 EUR per user and month.\n"


@pytest.mark.slow
def test_query_filters(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    for url in ("https://docs.acme.test/api/limits", "https://docs.acme.test/guide/limits"):
        response = client.post(
            "/knowledge/ingest",
            data={"url": url},
            files={"files": ("limits.md", b"# Limits\n\nThe API allows 600 requests a minute.")},
        )
        assert response.status_code == 201

    def urls(**body: object) -> list[str]:
        response = client.post("/knowledge/query", json={"query": "API request limit", **body})
        assert response.status_code == 200, response.text
        return sorted({c["url"] for c in response.json()["chunks"]})

    assert urls(urlPrefixes=["https://docs.acme.test/api/"]) == [
        "https://docs.acme.test/api/limits"
    ]
    # the same text under two URLs collapses to one result: the fresher (indexed second)
    assert urls() == ["https://docs.acme.test/guide/limits"]
    assert urls(sources=["link"]) == []
    assert urls(phases=["post_interaction"]) == []
    assert urls(fetchedAfter="2000-01-01T00:00:00Z", fetchedBefore="2001-01-01T00:00:00Z") == []
    assert len(urls(fetchedAfter="2000-01-01T00:00:00Z")) >= 1
    bad = client.post("/knowledge/query", json={"query": "x", "urlPrefixes": ["docs.acme.test"]})
    assert bad.status_code == 422 and "directory prefix" in bad.json()["message"]


tenant_names = st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=8).filter(
    lambda t: t != "public"
)


@pytest.mark.slow
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tenants=st.lists(tenant_names, min_size=2, max_size=4, unique=True), data=st.data())
def test_no_endpoint_returns_another_tenants_chunk(
    tmp_path_factory: pytest.TempPathFactory, tenants: list[str], data: st.DataObject
) -> None:
    """One server, a key per tenant; each tenant indexes its own secret and then asks for all
    of them through every reading endpoint. The hash embedder (a fake) keeps this fast:
    isolation does not depend on what the vectors mean."""
    from retrieval import document_id

    root: Path = tmp_path_factory.mktemp("tenants")
    secrets = {t: f"The {t} vault code is {data.draw(st.integers(1000, 9999))}." for t in tenants}
    domain = data.draw(st.sampled_from(["shared.test", "intranet.test"]))
    settings = make_settings(root, embedding={"backend": "hash"})
    lore = Lore(settings, embedder=HashEmbedder())
    with TestClient(create_app(settings, lore=lore)) as client:
        auth: Authenticator = client.app.state.auth  # type: ignore[attr-defined]
        keys = {
            t: {"Authorization": f"Bearer {auth.create_key(t, 'p', ['*'])[0]}"} for t in tenants
        }
        for tenant in tenants:
            response = client.post(
                "/knowledge/ingest",
                data={"url": f"https://{domain}/{tenant}/vault"},
                files={"files": ("vault.md", f"# Vault\n\n{secrets[tenant]}".encode())},
                headers=keys[tenant],
            )
            assert response.status_code == 201, response.text
        for tenant in tenants:
            mine = keys[tenant]
            seen: list[str] = []
            for other in tenants:
                body = {"query": f"{other} vault code", "k": 50, "includeSuperseded": True}
                found = client.post("/knowledge/query", json=body, headers=mine).json()
                seen += [c["tenantId"] for c in found["chunks"]]
                url = f"https://{domain}/{other}/vault"
                for params in ({"url": url, "query": "vault code", "k": 50}, {"url": url}):
                    resolved = client.get("/knowledge/resolve", params=params, headers=mine)
                    seen += [c["tenantId"] for c in resolved.json()["chunks"]]
                context = client.post(
                    "/agent/context", json={"url": url, "query": "vault code"}, headers=mine
                ).json()
                seen += [c["tenantId"] for c in context["chunks"]]
            assert set(seen) == {tenant}
            documents = client.get("/knowledge/documents", headers=mine).json()["documents"]
            assert [d["url"] for d in documents] == [f"https://{domain}/{tenant}/vault"]
            for other in tenants:
                if other != tenant:  # another tenant's document id is "not found"
                    foreign = document_id(other, f"https://{domain}/{other}/vault")
                    gone = client.delete(f"/knowledge/documents/{foreign}", headers=mine)
                    assert gone.status_code == 404
    lore.close()


WORDS = [
    "invoice",
    "billing",
    "refund",
    "account",
    "password",
    "reset",
    "export",
    "report",
    "webhook",
    "retry",
    "limit",
    "key",
    "token",
    "session",
    "cookie",
    "login",
    "upload",
    "crawl",
    "page",
    "sitemap",
    "robots",
    "delay",
    "search",
    "filter",
]


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lore]:
    """60 pages of 3 sections each over a shared vocabulary (so queries match many chunks with
    close scores), some fetched long ago (freshness moves them), some near-duplicates. The
    hash embedder: a deterministic fake, enough for a property of the ranking pipeline."""
    import random

    rng = random.Random(11)
    data = tmp_path_factory.mktemp("k-prefix")
    lore = Lore(make_settings(data, embedding={"backend": "hash"}))
    sources = []
    for n in range(60):
        sections = []
        for s in range(3):
            words = " ".join(rng.choice(WORDS) for _ in range(40))
            sections.append(f"## Part {s} of {n}\n\n{words.capitalize()}.\n")
        if n % 10 == 3:  # a near-duplicate of an earlier page
            sections[0] = sources[-1][1].split("\n\n## ")[0].replace(f"of {n - 1}", f"of {n}")
        text = f"# Page {n}\n\n" + "\n\n".join(sections)
        fetched = NOW - timedelta(days=rng.choice((1, 30, 400, 900)))
        sources.append((n, text, fetched))
    prepared = [
        lore.prepare(
            SourceDocument(
                tenant_id=lore.tenant,
                data=text.encode(),
                url=f"https://docs.k.test/p{n}",
                source="link",
                source_id="k-prefix",
                content_type="text/markdown",
                fetched_at=fetched,
            )
        )
        for n, text, fetched in sources
    ]
    lore.index(prepared)
    yield lore
    lore.close()


@settings(max_examples=40, deadline=None)
@given(
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join),
    mode=st.sampled_from(["hybrid", "dense", "sparse"]),
)
def test_the_best_k_are_a_prefix_of_the_best_k_plus_more(
    small_index: Lore, query: str, mode: str
) -> None:
    flt = ChunkFilter(tenant_ids=(small_index.tenant,))
    deepest = [h.chunk.id for h in small_index.search(query, flt, 50, mode)]  # type: ignore[arg-type]
    assert len(deepest) >= 20
    for k in (1, 2, 3, 5, 10, 20):
        top = [h.chunk.id for h in small_index.search(query, flt, k, mode)]  # type: ignore[arg-type]
        assert top == deepest[:k], (query, mode, k)


@given(
    st.text(
        alphabet=string.printable + "éüßİǅ２３ｆ—’“”\u00a0\u2028\u3000日本語、。_-\ud800",
        max_size=80,
    )
)
@settings(max_examples=300, deadline=None)
def test_word_trigrams_are_the_regex_words_whatever_the_text(text: str) -> None:
    """The fast path (ASCII bytes split on a translated table) keeps `\\w+`'s words."""
    words = re.findall(r"\w+", text.lower())
    expected = (
        set(zip(words, words[1:], words[2:], strict=False)) if len(words) >= 3 else {tuple(words)}
    )
    assert word_trigrams(text) == expected
