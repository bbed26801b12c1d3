"""Ranking after the engine: freshness (a boost for content revealed by interaction, a decay on
age) and near-duplicate collapse (the fresher copy stays). Pure functions over hits, so every
store ranks the same way."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import lru_cache

from retrieval.types import Chunk, Hit, ranked

_WORD = re.compile(r"\w+")
# \w on ASCII text is [A-Za-z0-9_]: every other ASCII byte becomes a space, and splitting on
# whitespace gives the regex's words three times as fast (a resolve makes the words of ~58
# candidates); the regex reads only the tokens that hold other characters.
_ASCII_WORD_BYTES = bytes(
    b if b >= 128 or chr(b).isalnum() or chr(b) == "_" else 32 for b in range(256)
)
_DAY_S = 86400.0


@dataclass(frozen=True)
class Freshness:
    post_interaction_boost: float = 0.1  # +10 % for chunks seen after a click
    half_life_days: float | None = 180.0  # None: no decay on age
    decay_floor: float = 0.8  # however old, a chunk keeps this share of its score
    duplicate_similarity: float | None = 0.9  # None: keep near-duplicates
    # Two views of one section of an app's page (snapshot chunks of one URL and heading path,
    # a region stored after two actions that each changed a line of it) collapse at this
    # similarity instead; None: as `duplicate_similarity`.
    view_duplicate_similarity: float | None = 0.8
    # A query that quotes a chunk (a sentence, an error message): its score grows by up to this
    # share with the query's word trigrams found in the chunk's headings and text; for queries
    # of 5 words or more, over the engine's best `phrase_window` candidates (lore's pool is 58).
    phrase_boost: float = 0.0
    phrase_window: int = 64
    # A query that names a section (it holds every word trigram of a chunk's own heading, of
    # 3 words or more): the chunks under that heading itself (the section's own text, not
    # its subsections') gain this share of their score.
    section_boost: float = 0.0


def age_reference(chunk: Chunk) -> datetime | None:
    """When the content was last known to change: Last-Modified when given, else fetch time."""
    if chunk.last_modified:
        try:
            when = parsedate_to_datetime(chunk.last_modified)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            return when if when.tzinfo else when.replace(tzinfo=UTC)
    try:
        when = datetime.fromisoformat(chunk.fetched_at)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def freshness_factor(chunk: Chunk, policy: Freshness, now: datetime) -> float:
    factor = 1.0
    if chunk.phase == "post_interaction":
        factor *= 1.0 + policy.post_interaction_boost
    reference = age_reference(chunk)
    if policy.half_life_days and reference is not None:
        age_days = max(0.0, (now - reference).total_seconds() / _DAY_S)
        decay = 0.5 ** (age_days / policy.half_life_days)
        factor *= policy.decay_floor + (1.0 - policy.decay_floor) * decay
    return factor


def _words(text: str) -> list[str]:
    """The text's lowercased words (`\\w+`)."""
    lowered = text.lower()
    ascii_split = lowered.encode(errors="surrogatepass").translate(_ASCII_WORD_BYTES)
    tokens = ascii_split.decode(errors="surrogatepass").split()
    if lowered.isascii():
        return tokens
    return [w for token in tokens for w in ((token,) if token.isascii() else _WORD.findall(token))]


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    if len(words) < 3:
        return {tuple(words)}
    return set(zip(words, words[1:], words[2:], strict=False))


def _similar(a: set[tuple[str, ...]], b: set[tuple[str, ...]], threshold: float) -> bool:
    """Jaccard(a, b) >= threshold; sets whose sizes alone rule it out are not intersected."""
    small, large = sorted((len(a), len(b)))
    if not large or small < threshold * large:
        return False
    common = len(a & b)
    return common / (len(a) + len(b) - common) >= threshold


def _newer(a: Chunk, b: Chunk) -> bool:
    ref_a, ref_b = age_reference(a), age_reference(b)
    if ref_a is None or ref_b is None:
        return ref_b is None and ref_a is not None
    return ref_a > ref_b


Shingles = dict[str, set[tuple[str, ...]]]  # chunk id -> its word trigrams, made once a call


def _same_view(a: Chunk, b: Chunk) -> bool:
    """Two snapshots' chunks of one section of an app's page. Scalar's parameter list stored
    with one group open, then two, read 0.86 alike and filled two of the top 8; crawled pages
    keep the one threshold (0.85 for all cost a Python-docs known item its top-3 rank)."""
    return (
        a.phase != "static"
        and b.phase != "static"
        and a.url == b.url
        and a.heading_path == b.heading_path
    )


def _shingles_of(chunk: Chunk, cache: Shingles) -> set[tuple[str, ...]]:
    found = cache.get(chunk.id)
    if found is None:
        found = cache[chunk.id] = _shingles(chunk.text)
    return found


def collapse_duplicates(
    hits: list[Hit],
    threshold: float,
    limit: int | None = None,
    cache: Shingles | None = None,
    view_threshold: float | None = None,
) -> list[Hit]:
    """Keep one hit per group of near-identical texts (two views of one section of an app's
    page: alike above `view_threshold`): the fresher, at the better rank. With
    `limit`, only the best `limit` kept hits are returned, the same as the first `limit` of the
    whole collapse: once that many are kept, a later hit can only replace one of them with a
    fresher copy (it is compared with those alone) and is otherwise dropped."""
    cache = {} if cache is None else cache
    kept: list[Hit] = []
    shingles: list[set[tuple[str, ...]]] = []
    for hit in hits:
        mine = _shingles_of(hit.chunk, cache)
        for index, other in enumerate(kept):
            bar = threshold
            if view_threshold is not None and _same_view(hit.chunk, other.chunk):
                bar = view_threshold
            if _similar(mine, shingles[index], bar):
                if _newer(hit.chunk, other.chunk):
                    kept[index] = Hit(hit.chunk, max(hit.score, other.score))
                    shingles[index] = mine
                break
        else:
            if limit is None or len(kept) < limit:
                kept.append(hit)
                shingles.append(mine)
    return kept


def phrase_overlap(
    query: str, hits: list[Hit], window: int, cache: Shingles | None = None
) -> list[float]:
    """For each of the first `window` hits, the share of the query's word trigrams its headings
    and text contain (0 for the rest, and for queries of fewer than 5 words)."""
    grams = _shingles(query)
    if len(grams) < 3:
        return [0.0] * len(hits)
    cache = {} if cache is None else cache
    return [
        len(grams & _quotable(hit.chunk, cache)) / len(grams) if index < window else 0.0
        for index, hit in enumerate(hits)
    ]


def _quotable(chunk: Chunk, cache: Shingles) -> set[tuple[str, ...]]:
    """The word trigrams a query can quote: the chunk's headings' and its text's. An API
    operation's path is its heading, not its parameter list's text: with the text alone, a
    query naming the path and a parameter boosted the chunks that repeat the path in their
    text (request examples, a sibling operation's) over the parameter's own."""
    key = "\x1f" + chunk.id
    found = cache.get(key)
    if found is None:
        found = cache[key] = _shingles_of(chunk, cache) | _path_trigrams(chunk.heading_path)
    return found


@lru_cache(maxsize=8192)
def _path_trigrams(path: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """A heading path's word trigrams, cached as `_heading_trigrams` is."""
    return frozenset(_shingles(" ".join(path))) if path else frozenset()


def word_trigrams(text: str) -> set[tuple[str, ...]]:
    """The text's lowercased word trigrams (its words as one tuple under 3 words)."""
    return _shingles(text)


# A heading that is one identifier: an API operation's id or a function's name in camelCase or
# snake_case ("findPets", "get_repository"), which names one section, unlike one or two plain
# words ("Parameters", "Pets") that head many.
_IDENTIFIER = re.compile(r"(?=\w{5,}$)(?=.*(?:[a-z][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]))[A-Za-z_]\w*")


@lru_cache(maxsize=8192)
def _heading_trigrams(heading: str) -> frozenset[tuple[str, ...]]:
    """What a query must hold to name a heading: its word trigrams, of 3 words or more, or the
    identifier it is (as one word); else nothing. Cached: the same headings come back query
    after query, and making them was a third of a rerank's time."""
    grams = _shingles(heading)
    if len(next(iter(grams), ())) == 3:
        return frozenset(grams)
    name = heading.strip()
    return frozenset({(name.lower(),)}) if _IDENTIFIER.fullmatch(name) else frozenset()


@lru_cache(maxsize=8192)
def _heading_run_together(heading: str) -> tuple[str, ...]:
    """A heading of two words or more as an identifier writes them, run together ("Find Pets":
    "findpets"), else (): a site generator titles an operation `findPets` "Find Pets", and a
    query naming the operation by its id names that heading."""
    words = _words(heading)
    return ("".join(words),) if len(words) > 1 else ()


def naming_grams(query: str) -> set[tuple[str, ...]]:
    """The query's word trigrams and its words (a snake_case one also without its
    underscores), as `section_factor` compares them."""
    words = _words(query)
    joined = {(w.replace("_", ""),) for w in words if "_" in w}
    return _shingles(query) | {(word,) for word in words} | joined


def section_factor(chunk: Chunk, policy: Freshness, query_grams: set[tuple[str, ...]]) -> float:
    """1 + the section boost when the query (its `naming_grams`) names the section `chunk` sits
    directly under (`_names`); that squared for a part of a section it names whose headings it
    also holds word for word ("getRepository responses": the chunks under getRepository >
    Responses, named at two levels, over getRepository's own code samples); else 1."""
    if not policy.section_boost or not chunk.heading_path:
        return 1.0
    path = chunk.heading_path
    at = len(path) - 1
    if _names(path[at], query_grams):
        return 1.0 + policy.section_boost
    while at > 0 and _holds_words(path[at], query_grams):
        at -= 1
        if _names(path[at], query_grams):
            return (1.0 + policy.section_boost) ** 2
    return 1.0


def _names(heading: str, query_grams: set[tuple[str, ...]]) -> bool:
    """Whether the query names the heading: every word trigram of it, of 3 words or more, the
    identifier it is, or its words run together as an identifier writes them."""
    grams = _heading_trigrams(heading)
    run = _heading_run_together(heading)
    return bool((grams and grams <= query_grams) or (run and run in query_grams))


def _holds_words(heading: str, query_grams: set[tuple[str, ...]]) -> bool:
    """Whether the query holds each word of the heading, in the singular or the plural
    ("parameter" holds "Parameters", "responses" "Response")."""
    words = _words(heading)
    return bool(words) and all(
        (w,) in query_grams
        or (w + "s",) in query_grams
        or (w[-1:] == "s" and (w[:-1],) in query_grams)
        for w in words
    )


def rerank(
    hits: list[Hit],
    policy: Freshness,
    limit: int,
    now: datetime | None = None,
    query: str | None = None,
) -> list[Hit]:
    """Apply freshness (and, with `query`, the phrase and section boosts) to the engine's
    scores, collapse near-duplicates, keep the best `limit`."""
    moment = now or datetime.now(UTC)
    cache: Shingles = {}  # the phrase boost's trigrams serve the duplicate collapse too
    overlap = (
        phrase_overlap(query, hits, policy.phrase_window, cache)
        if query and policy.phrase_boost
        else [0.0] * len(hits)
    )
    query_grams = naming_grams(query) if query and policy.section_boost else set()
    adjusted = []
    for hit, quoted in zip(hits, overlap, strict=True):
        factor = freshness_factor(hit.chunk, policy, moment) * (1 + policy.phrase_boost * quoted)
        factor *= section_factor(hit.chunk, policy, query_grams)
        score = hit.score * factor if hit.score >= 0 else hit.score / factor
        adjusted.append(replace(hit, score=score))
    result = ranked(adjusted)
    if policy.duplicate_similarity is not None:
        result = collapse_duplicates(
            result, policy.duplicate_similarity, limit, cache, policy.view_duplicate_similarity
        )
    return result[:limit]
