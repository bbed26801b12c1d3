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

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^([ \t]*)(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t]*$")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d{1,3}[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*])")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_PERMALINK = re.compile(r"[\s¶§\U0001f517\ue000-\uf8ff]+$")


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


def clean_heading(raw: str) -> str:
    """A heading's text as a reader sees it: code spans, `*` emphasis, links, escapes and
    permalink signs gone, everything else verbatim (`snake_case_name`, `__slots__`, `a * b`,
    `C#`). Underscores are never read as emphasis: in technical headings they are names."""
    text = _LINK.sub(r"\1", raw)
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    text = _EMPHASIS.sub(r"\1", _STRONG.sub(r"\1", text))
    text = _ESCAPE.sub(r"\1", text)
    return " ".join(_PERMALINK.sub("", text).split())


@dataclass(frozen=True)
class _Line:
    """A line of Markdown as the block structure reads it."""

    text: str
    kind: Literal["heading", "fence", "code", "indented", "blank", "text"]
    level: int = 0  # headings: their level and raw text
    title: str = ""
    fence: str = ""  # the opening fence of the code block the line is in


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _scan(markdown: str) -> list[_Line]:
    """Classify lines by CommonMark's block rules, as far as chunking needs them: a fence is
    closed only by a fence of the same character at least as long; nothing inside a fenced or
    indented code block is a heading; a heading is indented at most 3 spaces, or more inside a
    list item."""
    lines: list[_Line] = []
    fence = ""
    in_list = in_indented = False
    previous_blank = True
    for line in markdown.splitlines():
        if fence:
            closing = _FENCE_OPEN.match(line)
            if closing and closing.group(1).startswith(fence) and not closing.group(2).strip():
                lines.append(_Line(line, "fence", fence=fence))
                fence = ""
            else:
                lines.append(_Line(line, "code", fence=fence))
            continue
        if not line.strip():
            lines.append(_Line(line, "blank"))
            previous_blank = True
            continue
        indent = _indent(line)
        opening = _FENCE_OPEN.match(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence = opening.group(1)
            lines.append(_Line(line, "fence", fence=fence))
            in_indented = previous_blank = False
            continue
        if indent >= 4 and not in_list and (previous_blank or in_indented):
            in_indented = True
            lines.append(_Line(line, "indented"))
            previous_blank = False
            continue
        in_indented = False
        heading = _HEADING.match(line)
        if heading and (indent <= 3 or in_list):
            lines.append(_Line(line, "heading", len(heading.group(2)), heading.group(3) or ""))
        else:
            lines.append(_Line(line, "text"))
        if _LIST_ITEM.match(line):
            in_list = True
        elif indent == 0 and previous_blank:
            in_list = False
        previous_blank = False
    return lines


@dataclass
class _Heading:
    level: int
    path: tuple[str, ...]
    parent: _Heading | None
    body: bool = False


def split_sections(markdown: str) -> list[Section]:
    """Split Markdown into sections at ATX headings. A heading with nothing under it is dropped,
    except in a list of them (a bare heading beside a bare sibling, or under a bare parent: the
    trait implementations of an API page), where it is a section whose text is its title."""
    items: list[Section | _Heading] = []
    stack: list[_Heading] = []
    body: list[str] = []

    def flush() -> None:
        text = "\n".join(body).strip("\n")
        if text.strip():
            items.append(Section(stack[-1].path if stack else (), text))
            if stack:
                stack[-1].body = True
        body.clear()

    for line in _scan(markdown):
        if line.kind != "heading":
            body.append(line.text)
            continue
        flush()
        while stack and stack[-1].level >= line.level:
            stack.pop()
        title = clean_heading(line.title)
        if title:
            parent = stack[-1] if stack else None
            stack.append(_Heading(line.level, (*(parent.path if parent else ()), title), parent))
            items.append(stack[-1])
    flush()
    headings = [h for h in items if isinstance(h, _Heading)]
    after = {
        id(h): headings[i + 1] if i + 1 < len(headings) else None for i, h in enumerate(headings)
    }
    before = {id(h): headings[i - 1] if i else None for i, h in enumerate(headings)}

    def bare_leaf(h: _Heading | None, level: int) -> bool:
        if h is None or h.body or h.level != level:
            return False
        following = after[id(h)]
        return following is None or following.level <= h.level

    sections: list[Section] = []
    for item in items:
        if isinstance(item, Section):
            sections.append(item)
        elif bare_leaf(item, item.level) and (
            bare_leaf(before[id(item)], item.level)
            or bare_leaf(after[id(item)], item.level)
            or (item.parent is not None and not item.parent.body)
        ):
            sections.append(Section(item.path, item.path[-1]))
    return sections


def merge_small(
    sections: list[Section], budget: int, count: TokenCounter, whole: bool = False
) -> list[Section]:
    """Each heading's subsection tree that fits in `budget` tokens as one section, under that
    heading, its subheadings kept as Markdown headings in the text: an app's panel that heads
    a status code, "Body" and "Request" over a line each reads as one chunk, not six. Larger
    trees are looked at heading by heading below. Sections under different top-level headings
    are never joined, unless `whole`: the Markdown is one part of a section its caller names
    (a region of a page under that page's heading), so its top-level headings are siblings."""
    if whole:
        return _merge_node(sections, 0, budget, count)
    return _merge_children(sections, 0, budget, count)


def _merge_children(
    sections: list[Section], depth: int, budget: int, count: TokenCounter
) -> list[Section]:
    """`sections` (sharing their first `depth` headings) with each heading at `depth` merged
    as `_merge_node` does; a section of the shared heading itself stays as it is."""
    out: list[Section] = []
    start = 0
    while start < len(sections):
        path = sections[start].heading_path
        if len(path) <= depth:
            out.append(sections[start])
            start += 1
            continue
        end = start + 1
        while (
            end < len(sections)
            and len(sections[end].heading_path) > depth
            and sections[end].heading_path[depth] == path[depth]
        ):
            end += 1
        out += _merge_node(sections[start:end], depth + 1, budget, count)
        start = end
    return out


def _merge_node(
    sections: list[Section], depth: int, budget: int, count: TokenCounter
) -> list[Section]:
    if len(sections) > 1:
        merged = _joined(sections)
        if count(merged.text) <= budget:
            return [merged]
    return _merge_children(sections, depth, budget, count)


def _joined(sections: list[Section]) -> Section:
    """One section under the headings all of `sections` share, the others written as headings
    one level below each other (a bare heading, whose text is its title, only as its heading)."""
    paths = [s.heading_path for s in sections]
    shared = 0
    while all(len(p) > shared and p[shared] == paths[0][shared] for p in paths):
        shared += 1
    parts: list[str] = []
    written: tuple[str, ...] = paths[0][:shared]
    for section in sections:
        path = section.heading_path
        common = 0
        while common < min(len(path), len(written)) and path[common] == written[common]:
            common += 1
        for level in range(common, len(path)):
            parts.append(f"{'#' * min(6, level - shared + 2)} {path[level]}")
        written = path
        if len(path) <= shared or section.text != path[-1]:
            parts.append(section.text)
    return Section(paths[0][:shared], "\n\n".join(parts))


def split_sentences(paragraph: str) -> list[str]:
    return [s for s in (p.strip() for p in _SENTENCE_END.split(paragraph)) if s]


def _table_width(lines: list[str]) -> int:
    return max(len(re.split(r"(?<!\\)\|", ln.strip().strip("|"))) for ln in lines)


def _is_separator(line: str) -> bool:
    return bool(re.fullmatch(r"\s*\|?[\s:|-]*-[\s:|-]*", line))


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    lines = _scan(text)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.kind == "blank":
            i += 1
            continue
        if line.kind == "fence":
            opening, fence = line.text.strip(), line.fence
            code: list[str] = []
            blank = ""
            i += 1
            while i < len(lines) and lines[i].kind == "code":
                if lines[i].text.strip():
                    code.append(blank + lines[i].text)
                    blank = ""
                else:
                    blank += "\n"  # blank lines stay with the line after them
                i += 1
            i += 1  # the closing fence (or the end of the text)
            if code:
                blocks.append(_Block(opening, fence, "\n", code, "line"))
            continue
        if line.kind == "indented":
            code, blank = [], ""
            while i < len(lines) and lines[i].kind in ("indented", "blank"):
                if lines[i].kind == "indented":
                    code.append(blank + lines[i].text)
                    blank = ""
                else:
                    blank += "\n"
                i += 1
            blocks.append(_Block("", "", "\n", code, "line"))
            continue
        group: list[str] = []
        while i < len(lines) and lines[i].kind in ("text", "heading"):
            group.append(lines[i].text.rstrip())
            i += 1
        if all(g.lstrip().startswith("|") for g in group):
            # Rows after lines of spaces, without a header of their own, continue the table.
            while True:
                j = i
                while j < len(lines) and lines[j].kind == "blank":
                    j += 1
                more: list[str] = []
                while (
                    j < len(lines) and lines[j].kind == "text" and lines[j].text.lstrip()[:1] == "|"
                ):
                    more.append(lines[j].text.rstrip())
                    j += 1
                if j == i or not more or any(_is_separator(m) for m in more):
                    break
                if _table_width(more) != _table_width(group):
                    break
                group += more
                i = j
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
    merge_tokens: int = 0,
    whole: bool = False,
) -> list[TextChunk]:
    """Split Markdown into heading-aware chunks, in document order. With `merge_tokens`, a
    heading's subsections that fit in that many tokens together are one chunk (`merge_small`)."""
    sections = split_sections(markdown)
    if merge_tokens:
        sections = merge_small(sections, min(merge_tokens, max_tokens), count, whole)
    return [
        chunk
        for section in sections
        for chunk in chunk_section(section, max_tokens, overlap_tokens, count)
    ]
