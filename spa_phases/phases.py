"""Two-phase ingestion of single-page-app snapshots, and supersession.

- `initial`: the DOM at load. Its regions become the page's document (a later initial snapshot
  replaces it: new chunks written before stale ones are deleted).
- `post_interaction`: the DOM after an action. Only chunks the URL does not already hold are
  stored, in one document per trigger action, tagged with the action and their region's scope.
- A client-side route's view (`origin`: the page it was reached from) is its own URL's
  `initial` snapshot, without the navigation and the regions it shares with that page's view
  just before the click that routed: only what the route added; nothing, when it added nothing.

Either way, a stored chunk of the same URL whose scope the new snapshot covers with different
content is marked `superseded_by` (the new chunk of that scope) and `superseded_at`: it stays for
history, and retrieval leaves it out unless asked. A region absent from the new snapshot (a tab
panel unmounted, say) supersedes nothing: absence is not a different answer. What an action did
(`Change`) decides the rest: a view switched or content hidden supersedes nothing, a panel
opened further only the earlier states of it that it says again with more."""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit

from ingest import ChunkingOptions, Indexer, PreparedDocument, chunk_markdown
from retrieval import (
    Chunk,
    ChunkFilter,
    Document,
    NotFoundError,
    chunk_id,
    content_hash,
    document_id,
    utcnow,
)
from spa_phases.dom import Region, regions
from spa_phases.errors import SnapshotError

Phase = Literal["initial", "post_interaction"]
PHASES: tuple[Phase, ...] = ("initial", "post_interaction")
HIDDEN_INSTRUCTIONS = "hidden_instructions"
MAX_TRIGGER = 500
# Sibling blocks this small (a parameter list, a collapsed response, a card) are read together,
# up to a chunk's size: alone, Scalar's "Query Parameters - state" (78 characters) ranked 16th
# for its own operation's query, behind its neighbours' "Path Parameters", which repeat the path.
SMALL_REGION_TOKENS = 64
# A line this short that opens a region, or a heading's part of a route's view, names what
# follows it (see `_pieces` and `_leads`).
LABEL_CHARS = 120
LABEL_WORDS = 6


# The words a disclosure's button changes as it opens ("Show more" -> "Show less", "Expand"
# -> "Collapse"): an open state need not say them again to supersede its shut one.
TOGGLED = frozenset(
    {
        *("open", "opened", "close", "closed", "expand", "expanded", "collapse", "collapsed"),
        *("show", "shown", "hide", "hidden", "more", "less", "fewer"),
    }
)


Change = Literal["replaced", "opened", "switched", "hid"]
"""What an action did to what it changed: "replaced": other content in its place (a Refresh or
Approve button's), and what the scope said before is superseded; "opened": a panel opened
further, and only an earlier state of it that one new chunk says again, every word and more,
is superseded; "switched": another view in the same place (a tab, a list item, a page of
results, a navigation entry): the other views are still true and nothing is superseded;
"hid": less shown (a collapse, a close, a copy): nothing is superseded, and nothing is stored
that a current chunk of its scope says already, and more."""


@dataclass(frozen=True)
class Snapshot:
    tenant_id: str
    url: str  # canonical URL of the page
    phase: Phase
    dom: str | bytes
    trigger_action: str | None = None  # required for post_interaction, e.g. click(#tab-2)
    title: str | None = None
    captured_at: datetime | None = None
    source: str = "spa"  # how it arrived: extension snapshot or server-side capture
    source_id: str = "snapshot"
    # Scopes become "<prefix> >> <selector>": one details panel shown for many list items
    # holds each item's details under its own scope, so no item supersedes another.
    scope_prefix: str | None = None
    # What the action did where the snapshot differs (`Change`): by default it replaced
    # what was there.
    change: Change = "replaced"
    # The DOM just before the action, where the sender knows it (lore's own explorer): only
    # what it showed can be superseded, not another view stored earlier under the same region
    # (an operation a sidebar entry showed before the one on screen). None: whatever of the
    # regions this snapshot covers. For a route's view (see `origin`), what it showed is not
    # stored again under the route.
    shown_before: str | bytes | None = None
    # For a client-side route's view stored as a page of its own: the URL of the page it was
    # reached from. What that page shows already (the navigation they share, a sidebar, a
    # pager; with `shown_before`, the rest of a page that only opened one section) is held
    # there once, not again under every route, where its copies crowded the route's own
    # content out of the answers.
    origin: str | None = None


@dataclass(frozen=True)
class SnapshotResult:
    document_id: str | None  # None when a post_interaction snapshot held nothing new
    phase: Phase
    regions: int
    chunks: int  # chunks this snapshot's document holds
    embedded: int
    known: int  # post_interaction: chunks the URL already held, not stored again
    superseded: int
    flagged: int
    changed_scopes: tuple[str, ...]  # scopes that got new content


def snapshot_document_id(tenant_id: str, url: str, phase: Phase, trigger: str | None) -> str:
    if phase == "initial":
        return document_id(tenant_id, url)
    return document_id(tenant_id, f"{url}#lore-after:{trigger}")


class PhaseIngestor:
    """Stores snapshots for one vector store and catalog (through the ingest `Indexer`)."""

    def __init__(
        self,
        indexer: Indexer,
        chunking: ChunkingOptions,
        count_tokens: Callable[[str], int],
        max_dom_bytes: int = 5 * 1024 * 1024,
    ) -> None:
        self._indexer = indexer
        self._chunking = chunking
        self._count_tokens = count_tokens
        self._max_dom_bytes = max_dom_bytes
        self._lock = threading.Lock()  # one snapshot of a URL at a time: read, compare, write

    def ingest(self, snapshot: Snapshot) -> SnapshotResult:
        with self._lock:
            return self._ingest(snapshot)

    def _ingest(self, snapshot: Snapshot) -> SnapshotResult:
        if snapshot.phase not in PHASES:
            raise SnapshotError(f"unknown phase {snapshot.phase!r}; choose one of {list(PHASES)}")
        trigger = (snapshot.trigger_action or "").strip() or None
        if snapshot.phase == "post_interaction" and trigger is None:
            raise SnapshotError("a post_interaction snapshot needs its triggerAction")
        if trigger is not None and len(trigger) > MAX_TRIGGER:
            raise SnapshotError(f"triggerAction is longer than {MAX_TRIGGER} characters")
        if snapshot.phase == "initial":
            trigger = None
        doc_id = snapshot_document_id(snapshot.tenant_id, snapshot.url, snapshot.phase, trigger)
        found = self._regions(snapshot, snapshot.dom)
        before = None
        if snapshot.shown_before is not None:
            try:
                before = self._regions(snapshot, snapshot.shown_before)
            except SnapshotError:  # it showed nothing lore reads
                before = []
        chunks: list[Chunk] = []
        parts: dict[str, set[str]] = {}
        if snapshot.origin is not None and before:
            # What the view showed before the click that routed is not the route's (a section
            # a deep link opened earlier stays open; it is stored under its own route), nor,
            # after a click inside a route's view, what the click left as it was (stored
            # already, under the route or the page). By region, as packing runs them together
            # with their new neighbours. A route that added nothing holds nothing (what it
            # held before goes).
            seen = {(r.heading_path, r.markdown) for r in before}
            view = found
            found = [r for r in found if (r.heading_path, r.markdown) not in seen]
            if found:
                chunks, parts = self._read(snapshot, trigger, doc_id, found, view)
        else:
            chunks, parts = self._read(snapshot, trigger, doc_id, found)
        store = self._indexer.store
        stored = store.scroll(
            ChunkFilter(
                tenant_ids=(snapshot.tenant_id,),
                urls=(snapshot.url,),
                include_superseded=True,
                include_flagged=True,
            ),
            100_000,
        )
        others = [c for c in stored if c.document_id != doc_id and c.superseded_by is None]
        # A section that holds nothing but its heading (a form's empty "Headers" and "Body")
        # says nothing its path does not: stored, it matched every query naming the path and
        # pushed what is under the path out of the answers. It is not stored and, like a
        # block collapsed to its name, supersedes nothing. A page that holds nothing else
        # keeps it.
        said = [c for c in chunks if not _heading_only(c)]
        keep = (said or chunks) if snapshot.phase == "initial" else said
        known = 0
        if snapshot.phase == "post_interaction":
            held = {c.content_hash for c in others}
            if snapshot.change == "hid":  # a panel shut again: its open state says it all
                fuller = _by_scope(others)
                held |= {c.content_hash for c in chunks if _fuller(c, fuller) is not None}
            known = sum(1 for c in chunks if c.content_hash in held)
            keep = [c for c in keep if c.content_hash not in held]
        embedded = 0
        if keep:
            result = self._indexer.index(self._prepared(snapshot, doc_id, keep))
            embedded = result.embedded
            # What this snapshot shows again is current again, even if it was superseded.
            kept = {c.id for c in keep}
            revived = [c.id for c in stored if c.superseded_by and c.id in kept]
            store.set_payload(
                revived, {"superseded_by": None, "superseded_at": None, "state": "current"}
            )
        elif self._exists(snapshot.tenant_id, doc_id):
            self._indexer.delete(snapshot.tenant_id, doc_id)  # all of it is held elsewhere now
        superseded = 0
        if snapshot.change in ("replaced", "opened"):
            shown = others if before is None else self._shown(snapshot, before, others)
            if snapshot.change == "replaced":
                superseded = self._supersede(shown, chunks, keep, parts)
            else:
                superseded = self._supersede_opened(shown, chunks, keep)
        return SnapshotResult(
            document_id=doc_id if keep else None,
            phase=snapshot.phase,
            regions=len(found),
            chunks=len(keep),
            embedded=embedded,
            known=known,
            superseded=superseded,
            flagged=sum(1 for c in keep if c.flag),
            changed_scopes=tuple(dict.fromkeys(c.scope or "" for c in keep)),
        )

    def _regions(self, snapshot: Snapshot, dom: str | bytes) -> list[Region]:
        """The regions of one of the snapshot's DOMs. Raises SnapshotError."""
        found = regions(dom, self._max_dom_bytes, snapshot.url)
        if snapshot.origin is not None:
            found = [r for r in found if not r.navigation] or found
        return found

    def _read(
        self,
        snapshot: Snapshot,
        trigger: str | None,
        doc_id: str,
        found: list[Region],
        view: list[Region] | None = None,
    ) -> tuple[list[Chunk], dict[str, set[str]]]:
        """The chunks of a snapshot's regions, and each packed run's members' own words by
        scope (see `_packed`). For a route, `view`: all the regions its view shows, where
        `found` keeps only some (their labels still lead). Raises SnapshotError when they
        hold no text."""
        packed, parts = _packed(found, self._count_tokens, self._chunking.max_tokens)
        if snapshot.scope_prefix:
            parts = {f"{snapshot.scope_prefix} >> {m}": w for m, w in parts.items()}
        pieces = [self._pieces(region) for region in packed]
        leads: dict[str, str] = {}
        if snapshot.origin is not None:
            every = pieces
            if view is not None:
                shown = _packed(view, self._count_tokens, self._chunking.max_tokens)[0]
                every = [self._pieces(region) for region in shown]
            leads = _leads(piece for run in every for piece in run)
        return self._chunks(
            snapshot, trigger, doc_id, list(zip(packed, pieces, strict=True)), leads
        ), parts

    def _shown(self, snapshot: Snapshot, before: list[Region], others: list[Chunk]) -> list[Chunk]:
        """The stored chunks the regions `before` showed: the same chunk, or (its regions run
        together otherwise) words all shown in its region."""
        try:
            chunks, _ = self._read(snapshot, None, "", before)
        except SnapshotError:  # it showed nothing lore reads
            return []
        hashes = {c.content_hash for c in chunks}
        words: dict[str, set[str]] = defaultdict(set)
        for chunk in chunks:
            for scope in _members(chunk.scope or ""):
                words[scope].update(_words(chunk.text))
        return [
            c
            for c in others
            if c.content_hash in hashes
            or any(_words(c.text) <= words[scope] for scope in _members(c.scope or ""))
        ]

    def _exists(self, tenant_id: str, doc_id: str) -> bool:
        try:
            self._indexer.catalog.get_document(tenant_id, doc_id)
        except NotFoundError:
            return False
        return True

    def _pieces(self, region: Region) -> list[tuple[tuple[str, ...], str]]:
        """A region's chunks' heading paths and texts."""
        options = self._chunking
        # An app heads a line or two with each label (a status code, "Body", "Request"): a
        # heading's small subsections are read as one chunk. A region under a heading (an
        # operation's panel) is one section of it.
        pieces = chunk_markdown(
            region.markdown,
            options.max_tokens,
            options.overlap_tokens,
            self._count_tokens,
            merge_tokens=options.max_tokens,
            whole=bool(region.heading_path),
        )
        # A region that opens with a short line and no heading (an API operation's "GET
        # /pets", a card's name) gets that line as context for its other chunks; not one
        # over a page's title (`# `), which names the page: the line is its breadcrumb or
        # eyebrow (Fumadocs' "Part 2" over each page's `h1`).
        label: tuple[str, ...] = ()
        if (
            len(pieces) > 1
            and not pieces[0].heading_path
            and len(pieces[0].text) <= LABEL_CHARS
            and not _over_title(region.markdown)
        ):
            label = (" ".join(pieces[0].text.split()),)
        return [
            (region.heading_path + (label if n else ()) + piece.heading_path, piece.text)
            for n, piece in enumerate(pieces)
        ]

    def _chunks(
        self,
        snapshot: Snapshot,
        trigger: str | None,
        doc_id: str,
        found: list[tuple[Region, list[tuple[tuple[str, ...], str]]]],
        leads: dict[str, str],
    ) -> list[Chunk]:
        captured = (snapshot.captured_at or utcnow()).isoformat()
        now = utcnow().isoformat()
        domain = urlsplit(snapshot.url).hostname or ""
        title = snapshot.title or _title([region for region, _ in found]) or snapshot.url
        seen: dict[str, int] = {}
        chunks: list[Chunk] = []
        for region, pieces in found:
            for heading_path, text in pieces:
                path = _led(heading_path, text, leads)
                digest = content_hash("\x1f".join((*path, text)))
                occurrence = seen.get(digest, 0)
                seen[digest] = occurrence + 1
                chunks.append(
                    Chunk(
                        id=chunk_id(
                            snapshot.tenant_id, doc_id, snapshot.phase, trigger, digest, occurrence
                        ),
                        tenant_id=snapshot.tenant_id,
                        source=snapshot.source,
                        source_id=snapshot.source_id,
                        document_id=doc_id,
                        url=snapshot.url,
                        domain=domain,
                        title=title,
                        heading_path=path,
                        text=text,
                        content_hash=digest,
                        doc_type="html",
                        position=len(chunks),
                        fetched_at=captured,
                        ingested_at=now,
                        phase=snapshot.phase,
                        trigger_action=trigger,
                        scope=f"{snapshot.scope_prefix} >> {region.scope}"
                        if snapshot.scope_prefix
                        else region.scope,
                        flag=HIDDEN_INSTRUCTIONS if region.injection else None,
                    )
                )
        if not chunks:
            raise SnapshotError(f"the snapshot of {snapshot.url} holds no text")
        return chunks

    def _prepared(self, snapshot: Snapshot, doc_id: str, chunks: list[Chunk]) -> PreparedDocument:
        now = datetime.now(UTC)
        dom = snapshot.dom.encode("utf-8") if isinstance(snapshot.dom, str) else snapshot.dom
        positioned = [replace(c, position=n) for n, c in enumerate(chunks)]
        return PreparedDocument(
            Document(
                id=doc_id,
                tenant_id=snapshot.tenant_id,
                url=snapshot.url,
                title=chunks[0].title,
                doc_type="html",
                source=snapshot.source,
                content_hash=content_hash("\n".join(c.content_hash for c in chunks)),
                size_bytes=len(dom),
                chunk_count=len(chunks),
                created_at=now,
                updated_at=now,
                extractor=f"spa:{snapshot.phase}",
                warnings=(),
            ),
            positioned,
        )

    def _supersede(
        self,
        others: list[Chunk],
        chunks: list[Chunk],
        keep: list[Chunk],
        parts: dict[str, set[str]],
    ) -> int:
        """Mark older chunks of a scope this snapshot shows with different content. A scope
        whose new content is only part of what it held (a model collapsed to its name, a list
        with a row hidden) supersedes nothing: less shown is not a different answer. A joined
        run of blocks counts for each of its members (`parts`: a new member's own words), so a
        run whose edges moved (a block grew out of it, or collapsed into it) still meets what
        it overlaps; an old run's words count for each of its members, which errs towards
        superseding less."""
        shown: dict[str, set[str]] = defaultdict(set)
        words: dict[str, set[str]] = defaultdict(set)
        for chunk in chunks:
            for scope in _members(chunk.scope or ""):
                shown[scope].add(chunk.content_hash)
                words[scope].update(parts[scope] if scope in parts else _words(chunk.text))
        held: dict[str, set[str]] = defaultdict(set)
        for old in others:
            for scope in _members(old.scope or ""):
                held[scope].update(_words(old.text))
        newest: dict[str, str] = {}
        for chunk in keep:
            for scope in _members(chunk.scope or ""):
                if not words[scope] <= held[scope]:
                    newest.setdefault(scope, chunk.id)
        stale: dict[str, list[str]] = defaultdict(list)
        for old in others:
            if old.flag is not None:
                continue
            for scope in _members(old.scope or ""):
                if scope in newest and old.content_hash not in shown[scope]:
                    stale[newest[scope]].append(old.id)
                    break
        return self._mark(stale)

    def _mark(self, stale: dict[str, list[str]]) -> int:
        """Mark chunks superseded, by the chunk each list is keyed by; how many."""
        at = utcnow().isoformat()
        for by, ids in stale.items():
            self._indexer.store.set_payload(
                ids, {"superseded_by": by, "superseded_at": at, "state": "superseded"}
            )
        return sum(len(ids) for ids in stale.values())

    def _supersede_opened(self, shown: list[Chunk], chunks: list[Chunk], keep: list[Chunk]) -> int:
        """After a panel opened further: mark each chunk on screen before whose every word the
        new state of its scope says again, with more. Scalar stored each operation with its
        responses shut, then one open, then both: three near-copies that filled an agent's
        top results. The new state may take more chunks than the old (a response opened
        pushes the request sample into a chunk of its own): its words are the scope's, all
        chunks together (and the headings they were cut at), and the new chunk sharing most
        words with the old supersedes it.
        The button that opened it may say so ("Show schema" is now "Hide schema"): its words
        (`TOGGLED`) need not be said again. What the new state does not say again stays."""
        stale: dict[str, list[str]] = defaultdict(list)
        hashes = {c.content_hash for c in chunks}
        said: dict[str, set[str]] = defaultdict(set)  # the new state's words, by scope
        for scope, alike in _by_scope(chunks).items():
            for chunk, words in alike:  # a heading it was cut at is a word it says
                said[scope] |= words | _words(" ".join(chunk.heading_path))
        fresh = _by_scope(keep)
        for old in shown:
            if old.flag is not None or old.content_hash in hashes:
                continue
            words = _words(old.text)
            for scope in _members(old.scope or ""):
                lost, more = words - said[scope], said[scope] - words - TOGGLED
                if lost <= TOGGLED and more and (new := fresh.get(scope)):
                    by = max(new, key=lambda pair: len(pair[1] & words))[0]
                    stale[by.id].append(old.id)
                    break
        return self._mark(stale)


def _packed(
    found: list[Region], count_tokens: Callable[[str], int], max_tokens: int
) -> tuple[list[Region], dict[str, set[str]]]:
    """Runs of small sibling regions (unnamed containers under one parent, below the same
    headings) joined into one, up to `max_tokens`. The joined scope lists its members
    (`parent > :is(div:nth-of-type(2), div:nth-of-type(3))`), and supersession compares it
    member by member (`_members`). A block with a heading of its own is not joined: the
    chunker would cut the run there again. Also returns each joined member's words by its
    own scope."""
    out: list[Region] = []
    parts: dict[str, set[str]] = {}
    run: list[Region] = []
    size = 0

    def close(run: list[Region]) -> list[Region]:
        if len(run) < 2:
            return run
        parts.update((r.scope, _words(r.markdown)) for r in run)
        return [_joined(run)]

    for region in found:
        parent = _parent(region.scope)
        tokens = count_tokens(region.markdown)
        small = (
            parent is not None
            and not region.injection
            and tokens <= SMALL_REGION_TOKENS
            and not _HEADING_LINE.search(region.markdown)  # the chunker would cut there again
        )
        joins = (
            small
            and bool(run)
            and _parent(run[0].scope) == parent
            and (run[0].heading_path, run[0].hidden) == (region.heading_path, region.hidden)
            and size + tokens <= max_tokens
        )
        if not joins:
            out += close(run)
            run, size = [], 0
        if not small:
            out.append(region)
        else:
            run.append(region)
            size += tokens
    out += close(run)
    return out, parts


_HEADING_LINE = re.compile(r"^#{1,6}\s", re.MULTILINE)
# A block of code of one line that opens a text, and an HTTP method with a path or URL.
_OPENING_CODE = re.compile(r"\A```[^\n]*\n([^\n]+)\n```")
_METHOD_PATH = re.compile(r"(?i:get|put|post|delete|patch|head|options|trace) (?:/|https?://)\S*")
_RUN = re.compile(r"^(.*) > :is\((.*)\)$")


def _members(scope: str) -> tuple[str, ...]:
    """The scopes a joined run's scope stands for (a scope that is no run: itself)."""
    run = _RUN.match(scope)
    if run is None:
        return (scope,)
    return tuple(f"{run[1]} > {member}" for member in run[2].split(", "))


def _parent(scope: str) -> str | None:
    """The parent's selector of an unnamed container's scope; None for a named one (an id, a
    test id) or a section cut at a heading, which stay regions of their own."""
    if " >> " in scope or " > " not in scope:
        return None
    parent, last = scope.rsplit(" > ", 1)
    return None if last.startswith(("#", "[")) else parent


def _joined(run: list[Region]) -> Region:
    parent = _parent(run[0].scope)
    members = ", ".join(r.scope.rsplit(" > ", 1)[1] for r in run)
    return replace(
        run[0],
        scope=f"{parent} > :is({members})",
        markdown="\n\n".join(r.markdown for r in run),
    )


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _by_scope(chunks: list[Chunk]) -> dict[str, list[tuple[Chunk, set[str]]]]:
    """Unflagged chunks, with their words, by each scope they stand for (`_members`)."""
    out: dict[str, list[tuple[Chunk, set[str]]]] = defaultdict(list)
    for chunk in chunks:
        if chunk.flag is None:
            words = _words(chunk.text)
            for scope in _members(chunk.scope or ""):
                out[scope].append((chunk, words))
    return out


def _fuller(chunk: Chunk, by_scope: dict[str, list[tuple[Chunk, set[str]]]]) -> Chunk | None:
    """A chunk of `chunk`'s scope (`_by_scope`) that says every word of it, and more."""
    said = _words(chunk.text)
    for scope in _members(chunk.scope or ""):
        for other, words in by_scope.get(scope, ()):
            if said < words:
                return other
    return None


def _heading_only(chunk: Chunk) -> bool:
    """Whether a chunk's words are all its heading path's (code aside)."""
    return "```" not in chunk.text and not _says_more(chunk.text, chunk.heading_path)


def _says_more(text: str, path: tuple[str, ...]) -> bool:
    """Whether `text` has a word its heading path does not."""
    return not _words(text) <= _words(" ".join(path))


def _over_title(markdown: str) -> bool:
    """Whether the first heading of a region's Markdown is a page's title (`# `)."""
    return next((line for line in markdown.splitlines() if line.startswith("#")), "").startswith(
        "# "
    )


def _leads(pieces: Iterable[tuple[tuple[str, ...], str]]) -> dict[str, str]:
    """For a route's view: the label each top heading's part opens with, by heading (an
    operation's "get /2.0/repositories/{username}/{slug}" under its name). The view is about
    what that heading names, and its blocks drawn apart (the responses, say) name only the
    heading."""
    leads: dict[str, str] = {}
    under: set[str] = set()
    for path, text in pieces:
        label = _label(text)
        first = len(path) == 1 and path[0] not in under
        if first and label and _says_more(label, path):
            leads[path[0]] = label
        under.update(path[:1])
    return leads


def _label(text: str) -> str | None:
    """The label a part opens with: all its text when that is a short line that names
    something, or a method and path drawn as a block of code (Docusaurus' OpenAPI plugin's
    "GET /2.0/repositories/:username/:slug" over the operation's name); not a sentence, nor
    other code ("npm install x")."""
    line = " ".join(text.split())
    if _is_label(line):
        return line
    code = _OPENING_CODE.match(text)
    if code and _METHOD_PATH.fullmatch(called := " ".join(code[1].split())):
        return called
    return None


def _is_label(text: str) -> bool:
    """A short line that names something ("GET /pets", "get /2.0/users/{username}"), not a
    sentence or code."""
    return (
        len(text) <= LABEL_CHARS
        and len(text.split()) <= LABEL_WORDS
        and not _HEADING_LINE.match(text)
        and "`" not in text
        and not text.endswith((".", "!", "?", ":"))
    )


def _led(path: tuple[str, ...], text: str, leads: dict[str, str]) -> tuple[str, ...]:
    """A heading path with its top heading's lead just before it ("get /pets > findPets >
    Responses"): a query naming the heading a chunk sits directly under still names its
    section (`retrieval.ranking.section_factor`). The lead itself keeps its path."""
    lead = leads.get(path[0]) if path else None
    if lead is None or (len(path) == 1 and _label(text) == lead):
        return path
    return (lead, *path)


def _title(found: list[Region]) -> str | None:
    """The first heading a person sees, else the first at all (a closed panel's). A closed
    chat dialog ahead of the page's own content (Scalar's "How can I help you today?") titled
    every chunk of the page."""
    shut = None
    for region in found:
        for line in region.markdown.splitlines():
            if line.startswith("#") and (title := line.lstrip("#").strip()):
                if not region.hidden and title not in region.hidden_headings:
                    return title
                shut = shut or title
    return shut
