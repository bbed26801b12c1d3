"""Structured text: CSV and TSV as tables that keep their header names, JSON, NDJSON and YAML as
key paths (`servers[0].url: …`), XML as element paths (entities refused)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

import yaml
from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeET

from ingest.detect import decode_text
from ingest.errors import EmptyDocumentError, ExtractionError, UnsafeDocumentError
from ingest.formats.base import (
    Extracted,
    ExtractRequest,
    MarkdownWriter,
    fail,
    one_line,
)

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")
_SECTION_LINES = 60  # a top-level entry with more lines than this gets a heading per item


# CSV / TSV ------------------------------------------------------------------------------------


def _dialect(sample: str, doc_type: str) -> type[csv.Dialect] | csv.Dialect:
    if doc_type == "tsv":
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def extract_table(request: ExtractRequest) -> Extracted:
    text = decode_text(request.data, request.content_type)
    csv.field_size_limit(max(request.limits.max_chars, 131072))
    reader = csv.reader(io.StringIO(text), _dialect(text[:65536], request.doc_type))
    out = MarkdownWriter(request.limits)
    try:
        rows = [r for r in reader if any(c.strip() for c in r)]
    except csv.Error as exc:
        raise fail(request, request.doc_type.upper(), exc) from exc
    if not rows:
        raise EmptyDocumentError(f"{request.name} has no rows")
    header, body = rows[0], rows[1:]
    if len(body) > request.limits.max_rows:
        out.warn(
            f"only the first {request.limits.max_rows:,} of {len(body):,} rows were ingested "
            "(LORE_DOCUMENTS__MAX_ROWS)"
        )
        body = body[: request.limits.max_rows]
    out.table(body, header)
    return out.result("", request.doc_type)


# JSON / NDJSON / YAML -------------------------------------------------------------------------


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return one_line(value)
    return json.dumps(value, default=str)


class _Budget:
    """Counts visited values so that alias-heavy YAML cannot expand without bound."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise UnsafeDocumentError(
                "the document expands to too many values (a YAML alias bomb?)"
            )


def key_paths(value: Any, path: str, budget: _Budget) -> Iterator[str]:
    """`path: value` lines for every leaf, in document order."""
    budget.spend()
    if isinstance(value, dict):
        if not value:
            yield f"{path or '(root)'}: {{}}"
        for key, item in value.items():
            yield from key_paths(item, f"{path}.{key}" if path else str(key), budget)
    elif isinstance(value, list | tuple):
        if not value:
            yield f"{path or '(root)'}: []"
        for index, item in enumerate(value):
            yield from key_paths(item, f"{path}[{index}]", budget)
    else:
        yield f"{path or '(root)'}: {_scalar(value)}"


def _write_lines(out: MarkdownWriter, lines: Iterator[str]) -> bool:
    return all(out.add(line) for line in lines)


def _write_tree(out: MarkdownWriter, value: Any, budget: _Budget, prefix: str = "") -> None:
    """A section per top-level entry; a long list gets a heading per item."""
    if isinstance(value, dict) and value:
        entries: list[tuple[str, Any]] = [
            (f"{prefix}.{k}" if prefix else str(k), v) for k, v in value.items()
        ]
    elif isinstance(value, list | tuple) and value:
        entries = [(f"{prefix}[{i}]", v) for i, v in enumerate(value)]
    else:
        _write_lines(out, key_paths(value, prefix, budget))
        return
    for path, item in entries:
        if not out.heading(2, path):
            return
        if isinstance(item, list | tuple) and len(item) > 1 and _long(item):
            for index, element in enumerate(item):
                if not out.heading(3, f"{path}[{index}]"):
                    return
                if not _write_lines(out, key_paths(element, f"{path}[{index}]", budget)):
                    return
        elif not _write_lines(out, key_paths(item, path, budget)):
            return


def _long(items: list[Any] | tuple[Any, ...]) -> bool:
    count = 0
    stack: list[Any] = list(items)
    while stack and count <= _SECTION_LINES:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        else:
            count += 1
    return count > _SECTION_LINES


def _budget(request: ExtractRequest) -> _Budget:
    # Without aliases a document cannot hold more values than it has bytes; allow some reuse.
    return _Budget(len(request.data) + 10_000)


def extract_json(request: ExtractRequest) -> Extracted:
    try:
        value = json.loads(decode_text(request.data, request.content_type))
    except ValueError as exc:
        raise fail(request, "JSON", exc) from exc
    out = MarkdownWriter(request.limits)
    _write_tree(out, value, _budget(request))
    return out.result("", "json")


def extract_ndjson(request: ExtractRequest) -> Extracted:
    out = MarkdownWriter(request.limits)
    budget = _budget(request)
    bad = records = 0
    for number, line in enumerate(decode_text(request.data).splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            bad += 1
            continue
        records += 1
        if records > request.limits.max_rows:
            out.warn(f"only the first {request.limits.max_rows:,} records were ingested")
            break
        if not out.heading(2, f"record {records} (line {number})"):
            break
        if not _write_lines(out, key_paths(value, "", budget)):
            break
    if records == 0:
        raise ExtractionError(f"{request.name} has no JSON lines")
    warnings = [f"{bad} lines are not JSON and were skipped"] if bad else []
    return out.result("", "ndjson", warnings)


def extract_yaml(request: ExtractRequest) -> Extracted:
    try:
        documents = list(yaml.safe_load_all(decode_text(request.data, request.content_type)))
    except yaml.YAMLError as exc:
        raise fail(request, "YAML", exc) from exc
    out = MarkdownWriter(request.limits)
    budget = _budget(request)
    documents = [d for d in documents if d is not None]
    for index, document in enumerate(documents):
        if len(documents) > 1 and not out.heading(1, f"document {index + 1}"):
            break
        _write_tree(out, document, budget)
    return out.result("", "yaml")


# XML ------------------------------------------------------------------------------------------


def _local(tag: object) -> str:
    name = str(tag)
    return name.rsplit("}", 1)[-1] if "}" in name else name


def _label(element: Any) -> str:
    for key in ("name", "id", "title", "key"):
        for attr, value in element.attrib.items():
            if _local(attr) == key and str(value).strip():
                return f"{_local(element.tag)} {one_line(value)}"
    return _local(element.tag)


def _xml_own(element: Any, path: str) -> Iterator[str]:
    for attr, value in element.attrib.items():
        yield f"{path}@{_local(attr)}: {one_line(value)}"
    text = one_line(element.text or "")
    if text:
        yield f"{path}: {text}"


def _xml_lines(element: Any, path: str) -> Iterator[str]:
    yield from _xml_own(element, path)
    for child in element:
        if isinstance(child.tag, str):  # not a comment or processing instruction
            yield from _xml_lines(child, f"{path}/{_local(child.tag)}")


def _parse_decoded(request: ExtractRequest, first: Exception) -> Any:
    """Parse again from decoded text: files whose declaration names the wrong encoding."""
    text = _XML_DECLARATION.sub("", decode_text(request.data, request.content_type), count=1)
    try:
        return SafeET.fromstring(text, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except (SafeET.ParseError, DefusedXmlException):
        raise fail(request, "XML", first) from first


def extract_xml(request: ExtractRequest) -> Extracted:
    try:
        root = SafeET.fromstring(
            request.data, forbid_dtd=False, forbid_entities=True, forbid_external=True
        )
    except DefusedXmlException as exc:
        raise UnsafeDocumentError(
            f"{request.name} declares XML entities or external references, which lore refuses "
            f"(entity expansion attacks): {exc}"
        ) from exc
    except SafeET.ParseError as exc:
        root = _parse_decoded(request, exc)
    out = MarkdownWriter(request.limits)
    root_name = _local(root.tag)
    _write_lines(out, _xml_own(root, root_name))
    for child in root:
        if not isinstance(child.tag, str):
            continue
        if not out.heading(2, _label(child)):
            break
        if not _write_lines(out, _xml_lines(child, f"{root_name}/{_local(child.tag)}")):
            break
    return out.result(root_name, "xml")
