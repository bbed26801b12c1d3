"""GFM tables from rows: one header row, a separator, equal column counts (a table that loses
its separator renders as a paragraph of pipes, and its cells lose their columns)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_SPACES = re.compile(r"\s+")
_PIPE = re.compile(r"(\\*)\|")
WIDE_HEADER_CHARS = 600


def cell(value: object) -> str:
    """A value as a GFM table cell: one line, pipes escaped (a backslash only where it would
    escape a pipe, so paths and regular expressions keep theirs)."""
    if value is None:
        return ""
    text = _SPACES.sub(" ", str(value)).strip()
    return _PIPE.sub(lambda m: m.group(1) * 2 + "\\|", text)


def _split_header(
    rows: Sequence[Sequence[object]], header: Sequence[object] | None
) -> tuple[list[object], list[list[object]]]:
    """(header, body): the given header, else the first row."""
    body = [list(r) for r in rows]
    head = list(header) if header is not None else (body.pop(0) if body else [])
    return head, body


def _column_names(head: Sequence[object], width: int) -> list[str]:
    """Header cells, with `column N` for blank or missing ones."""
    cells = [cell(c) for c in head] + [""] * (width - len(head))
    return [name or f"column {i + 1}" for i, name in enumerate(cells)]


def gfm_table(rows: Sequence[Sequence[object]], header: Sequence[object] | None = None) -> str:
    """A valid GFM table: the header row (the first row when none is given), its separator,
    every row padded to the same width."""
    head, body = _split_header(rows, header)
    width = max(len(head), *(len(r) for r in body)) if body else len(head)
    if width == 0:
        return ""
    lines = [
        "| " + " | ".join(_column_names(head, width)) + " |",
        "|" + "---|" * width,
    ]
    for row in body:
        padded = list(row) + [""] * (width - len(row))
        lines.append("| " + " | ".join(cell(c) for c in padded) + " |")
    return "\n".join(lines)


def table_blocks(
    rows: Sequence[Sequence[object]], header: Sequence[object] | None = None
) -> list[str]:
    """A table as Markdown blocks: one GFM table, or, for a table too wide to read as one (its
    header alone longer than `WIDE_HEADER_CHARS`), one `column: value` record per row."""
    head, body = _split_header(rows, header)
    if sum(len(cell(c)) + 3 for c in head) <= WIDE_HEADER_CHARS:
        table = gfm_table(body, head)
        return [table] if table else []
    records = []
    for number, row in enumerate(body, 1):
        names = _column_names(head, max(len(head), len(row)))
        pairs = [f"{names[i]}: {cell(v)}" for i, v in enumerate(row) if cell(v)]
        records.append(f"Row {number}: " + "; ".join(pairs))
    return records
