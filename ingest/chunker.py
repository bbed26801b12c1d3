"""Heading-aware chunking of Markdown.

A document is split into sections at its ATX headings (outside code fences); each section keeps
its heading path, outermost first. A section's body is split into blocks (paragraphs, lists,
tables, code fences) and blocks into units (sentences, list items, table rows, code lines).
Units are packed greedily into chunks of at most `max_tokens` tokens; a table or code block that
spans chunks repeats its header row or fence in each, so every chunk is valid Markdown. A new
chunk starts with the last sentences of the previous one (up to `overlap_tokens`). A unit longer
than the budget is split at word boundaries. Chunks never span sections.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

TokenCounter = Callable[[str], int]
UnitKind = Literal["sentence", "line"]

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d{1,3}[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_INLINE_MARKS = re.compile(r"[*_`]+")


def count_words(text: str) -> int:
    """A whitespace token counter: the deterministic stand-in for a model tokenizer."""
    return len(text.split())


@dataclass(frozen=True)
class Section:
    heading_path: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class TextChunk:
    text: str
    heading_path: tuple[str, ...]
    tokens: int


@dataclass
class _Block:
    prefix: str  # repeated in every chunk holding part of the block (table header, opening fence)
    suffix: str  # closing fence
    joiner: str
    units: list[str]
    kind: UnitKind


def _clean_heading(raw: str) -> str:
    return " ".join(_INLINE_MARKS.sub("", raw).split())


def split_sections(markdown: str) -> list[Section]:
    """Split Markdown into sections at ATX headings; sections with no body are dropped."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    fence: str | None = None

    def flush() -> None:
        text = "\n".join(body).strip("\n")
        if text.strip():
            sections.append(Section(tuple(t for _, t in stack), text))
        body.clear()

    for line in markdown.splitlines():
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            body.append(line)
            continue
        heading = None if fence else _HEADING.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            title = _clean_heading(heading.group(2))
            if title:
                stack.append((level, title))
            continue
        body.append(line)
    flush()
    return sections


def split_sentences(paragraph: str) -> list[str]:
    return [s for s in (p.strip() for p in _SENTENCE_END.split(paragraph)) if s]


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)[0] * 3
            code: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                code.append(lines[i])
                i += 1
            i += 1  # closing fence (or end of text)
            units = [c for c in code if c.strip()]
            if units:
                blocks.append(_Block(line.strip(), marker, "\n", units, "line"))
            continue
        group: list[str] = []
        while i < len(lines) and lines[i].strip() and not _FENCE.match(lines[i]):
            group.append(lines[i].rstrip())
            i += 1
        if all(g.lstrip().startswith("|") for g in group):
            header, rows = "\n".join(group[:2]), group[2:]
            if rows:
                blocks.append(_Block(header, "", "\n", rows, "line"))
            else:
                blocks.append(_Block("", "", "\n", [header], "line"))
        elif _LIST_ITEM.match(group[0]):
            blocks.append(_Block("", "", "\n", group, "line"))
        else:
            sentences = split_sentences(" ".join(g.strip() for g in group))
            blocks.append(_Block("", "", " ", sentences, "sentence"))
    return blocks


@dataclass
class _Unit:
    block: int
    text: str
    tokens: int
    kind: UnitKind


def _hard_split(text: str, budget: int, count: TokenCounter) -> list[str]:
    """Split text at spaces (or inside an over-long word) into pieces of at most `budget` tokens."""
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for whole in text.split():
        word = whole
        cost = count(word)
        while cost > budget:
            # A single word longer than the budget: cut it by characters.
            cut = max(1, len(word) * budget // cost)
            while cut > 1 and count(word[:cut]) > budget:
                cut -= 1
            if current:
                pieces.append(" ".join(current))
                current, used = [], 0
            pieces.append(word[:cut])
            word = word[cut:]
            cost = count(word)
        if current and used + cost > budget:
            pieces.append(" ".join(current))
            current, used = [], 0
        if word:
            current.append(word)
            used += cost
    if current:
        pieces.append(" ".join(current))
    return pieces


def _render(units: list[_Unit], blocks: list[_Block]) -> str:
    parts: list[str] = []
    i = 0
    while i < len(units):
        block_no = units[i].block
        block = blocks[block_no]
        group: list[str] = []
        while i < len(units) and units[i].block == block_no:
            group.append(units[i].text)
            i += 1
        body = block.joiner.join(group)
        parts.append("\n".join(p for p in (block.prefix, body, block.suffix) if p))
    return "\n\n".join(parts)


def chunk_section(
    section: Section,
    max_tokens: int = 200,
    overlap_tokens: int = 32,
    count: TokenCounter = count_words,
) -> list[TextChunk]:
    """Pack one section's units into chunks of at most `max_tokens` tokens."""
    if max_tokens < 8:
        raise ValueError("max_tokens must be at least 8")
    if not 0 <= overlap_tokens < max_tokens // 2:
        raise ValueError("overlap_tokens must be between 0 and max_tokens / 2")
    blocks = _blocks(section.text)
    frame = [count(b.prefix) + count(b.suffix) for b in blocks]
    for no, block in enumerate(blocks):
        if frame[no] > max_tokens // 2:
            # A header too big to repeat (a very wide table): it becomes ordinary content.
            framing = [p for p in (block.prefix,) if p]
            closing = [s for s in (block.suffix,) if s]
            blocks[no] = _Block("", "", block.joiner, [*framing, *block.units, *closing], "line")
            frame[no] = 0
    units: list[_Unit] = []
    for no, block in enumerate(blocks):
        budget = max(1, max_tokens - frame[no])
        for text in block.units:
            tokens = count(text)
            if tokens <= budget:
                units.append(_Unit(no, text, tokens, block.kind))
            else:
                units.extend(
                    _Unit(no, piece, count(piece), block.kind)
                    for piece in _hard_split(text, budget, count)
                )

    def cost(unit: _Unit, held: list[_Unit]) -> int:
        fresh_block = not held or held[-1].block != unit.block
        return unit.tokens + (frame[unit.block] if fresh_block else 0)

    def total(held: list[_Unit]) -> int:
        return sum(cost(u, held[:n]) for n, u in enumerate(held))

    chunks: list[TextChunk] = []
    current: list[_Unit] = []
    used = 0
    for unit in units:
        if current and used + cost(unit, current) > max_tokens:
            chunks.append(TextChunk(_render(current, blocks), section.heading_path, used))
            tail: list[_Unit] = []
            for prev in reversed(current):
                if prev.kind != "sentence" or total([prev, *tail]) > overlap_tokens:
                    break
                tail.insert(0, prev)
            while tail and total([*tail, unit]) > max_tokens:
                tail.pop(0)
            if len(tail) == len(current):
                tail = []
            current = tail
            used = total(current)
        used += cost(unit, current)
        current.append(unit)
    if current:
        chunks.append(TextChunk(_render(current, blocks), section.heading_path, used))
    return chunks


def chunk_markdown(
    markdown: str,
    max_tokens: int = 200,
    overlap_tokens: int = 32,
    count: TokenCounter = count_words,
) -> list[TextChunk]:
    """Split Markdown into heading-aware chunks, in document order."""
    return [
        chunk
        for section in split_sections(markdown)
        for chunk in chunk_section(section, max_tokens, overlap_tokens, count)
    ]
