"""Repair Markdown tables into valid GFM: one header row, a separator, equal column counts.

Extractors emit tables with no header separator (markdownify on header-less tables), with a
caption as a first one-cell row (trafilatura), or with separators in the middle. A table that
loses its separator renders as a paragraph of pipes, and its cells lose their columns.
"""

from __future__ import annotations

import re

_SEPARATOR_CELL = re.compile(r"^:?-{1,}:?$")


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def _is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(_SEPARATOR_CELL.match(c) for c in cells if c) and any(cells)


def _render(rows: list[list[str]]) -> str:
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def repair_table(lines: list[str]) -> str:
    """Turn the lines of one table block into a caption paragraph (if any) and a GFM table."""
    rows = [cells for cells in (_cells(line) for line in lines) if not _is_separator(cells)]
    rows = [r for r in rows if any(r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    caption = ""
    if width > 1 and len(rows) > 1 and sum(1 for c in rows[0] if c) == 1 and len(rows[0]) >= 1:
        filled = [c for c in rows[0] if c]
        if rows[0][0] == filled[0] and (len(rows[0]) == 1 or all(not c for c in rows[0][1:])):
            caption = filled[0]
            rows = rows[1:]
    width = max(len(r) for r in rows)
    padded = [r + [""] * (width - len(r)) for r in rows]
    table = _render([padded[0], ["---"] * width, *padded[1:]])
    return f"{caption}\n\n{table}" if caption else table


def repair_tables(markdown: str) -> str:
    """Repair every table block (consecutive lines starting with '|') outside code fences."""
    out: list[str] = []
    block: list[str] = []
    in_fence = False

    after_table = False

    def flush() -> None:
        nonlocal after_table
        if block:
            if out and out[-1].strip():
                out.append("")
            out.append(repair_table(block))
            block.clear()
            after_table = True

    def add(line: str) -> None:
        nonlocal after_table
        if after_table and line.strip():
            out.append("")  # a table is followed by a blank line before anything else
        after_table = False
        out.append(line)

    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            flush()
            in_fence = not in_fence
            add(line)
            continue
        if not in_fence and line.lstrip().startswith("|"):
            block.append(line)
            continue
        flush()
        add(line)
    flush()
    return "\n".join(out).strip("\n") + "\n"
