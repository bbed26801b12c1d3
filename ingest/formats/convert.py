"""Legacy and open office formats through LibreOffice headless: DOC, ODT and RTF become DOCX,
XLS becomes XLSX, PPT becomes PPTX; then the DOCX/XLSX/PPTX extractor reads them."""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from ingest.errors import ExtractionError, ExtractionTimeoutError, ToolMissingError
from ingest.formats.base import Extracted, ExtractRequest, one_line
from ingest.formats.office import extract_docx, extract_pptx, extract_xlsx

TARGETS = {"doc": "docx", "odt": "docx", "rtf": "docx", "xls": "xlsx", "ppt": "pptx"}
_READERS = {"docx": extract_docx, "xlsx": extract_xlsx, "pptx": extract_pptx}
_TIMEOUT_S = 180


def convert(request: ExtractRequest, target: str) -> bytes:
    """Convert with `soffice --convert-to` in a private profile; the user's filename is never
    used as a path."""
    soffice = request.tools.soffice
    if soffice is None:
        raise ToolMissingError(
            f"{request.doc_type.upper()} files are converted with LibreOffice, which is not "
            "installed: apt-get install -y libreoffice-writer-nogui libreoffice-calc-nogui "
            "libreoffice-impress-nogui (or set LORE_DOCUMENTS__SOFFICE_PATH)"
        )
    with tempfile.TemporaryDirectory(prefix="lore-soffice-") as tmp:
        work = Path(tmp)
        source = work / f"document.{request.doc_type}"
        source.write_bytes(request.data)
        command = [
            soffice,
            f"-env:UserInstallation={(work / 'profile').as_uri()}",
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--convert-to",
            target,
            "--outdir",
            str(work / "out"),
            str(source),
        ]
        try:
            result = subprocess.run(
                command, capture_output=True, timeout=_TIMEOUT_S, check=False, cwd=work
            )
        except subprocess.TimeoutExpired as exc:
            raise ExtractionTimeoutError(
                f"LibreOffice did not convert {request.name} within {_TIMEOUT_S} s"
            ) from exc
        converted = work / "out" / f"document.{target}"
        if result.returncode != 0 or not converted.exists():
            detail = one_line(result.stderr.decode(errors="replace") or result.stdout.decode())
            raise ExtractionError(
                f"LibreOffice could not read {request.name} as {request.doc_type.upper()}"
                + (f": {detail[:300]}" if detail else "")
            )
        return converted.read_bytes()


def extract_converted(request: ExtractRequest) -> Extracted:
    target = TARGETS[request.doc_type]
    data = convert(request, target)
    extracted = _READERS[target](replace(request, data=data, doc_type=target))
    extracted.extractor = f"libreoffice+{extracted.extractor}"
    return extracted
