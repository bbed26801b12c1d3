"""The typed client, sync and async, against a real server on 127.0.0.1 (uvicorn in a thread,
the real model): the same `calls` through both transports, and errors as `LoreError`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from api import Lore, create_app
from api.app import serve_in_thread
from api.auth import Authenticator
from api.client import AsyncLoreClient, LoreClient, LoreError, calls
from ingest import Embedder
from tests.conftest import make_settings

PAGE = "https://ehr.clinic.test/patients"
DOM = (
    "<html><body><h1>Patients</h1><section id='help'><p>New patients are added from the "
    "New/Search entry of the Patient menu.</p></section></body></html>"
)


@pytest.fixture
def server(tmp_path: Path, real_embedder: Embedder) -> Iterator[tuple[str, str]]:
    settings = make_settings(tmp_path / "data")
    lore = Lore(settings, embedder=real_embedder)
    key, _ = Authenticator(lore.catalog, 600).create_key(settings.tenant, "client tests")
    url, running = serve_in_thread(create_app(settings, lore=lore))
    yield url, key
    running.should_exit = True
    lore.close()


def test_sync_client(server: tuple[str, str]) -> None:
    with LoreClient(*server) as lore:
        stored = lore(calls.snapshot(PAGE, "initial", DOM))
        assert stored["chunks"] >= 1
        skill = lore(
            calls.record_skill(
                PAGE, "Add a new patient", "click(68)", "click(79)", "Patient menu", "New/Search"
            )
        )
        assert lore(calls.skill_outcome(skill.id, success=True)).success_count == 2
        context = lore(calls.agent_context(PAGE, query="add a patient", goal="add a new patient"))
        assert "New/Search" in context.chunks[0].text
        assert context.skills[0].hint.startswith("Last time 'click(68)' (Patient menu)")
        assert [s.id for s in lore(calls.search_skills(PAGE, "add a new patient"))] == [skill.id]
        with pytest.raises(LoreError) as error:
            lore(calls.skill_outcome("00000000-0000-0000-0000-000000000000", True))
        assert error.value.status == 404 and error.value.code == "not_found"
        with pytest.raises(LoreError) as error:
            lore(calls.snapshot(PAGE, "post_interaction", DOM))
        assert error.value.status == 422 and "triggerAction" in error.value.message


def test_async_client_sends_the_same_calls(server: tuple[str, str]) -> None:
    async def run() -> None:
        async with AsyncLoreClient(*server) as lore:
            await lore(calls.snapshot(PAGE, "initial", DOM))
            chunks = await lore(calls.resolve(PAGE, "how are new patients added?"))
            assert "New/Search" in chunks[0].text
            found = await lore(calls.search("patient menu", k=3))
            assert found and found[0].url == PAGE
            context = await lore(calls.agent_context(PAGE, parameter="patient menu entry"))
            assert context.skills == [] and context.chunks

    asyncio.run(run())


def _python(code: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def test_the_client_and_the_clis_help_do_not_import_the_server() -> None:
    server = "('fastapi', 'sqlalchemy', 'crawlee', 'playwright', 'qdrant_edge')"
    loaded = _python(
        f"import sys, api.client; print(sorted(m for m in {server} if m in sys.modules))"
    )
    assert loaded == "[]", loaded
    loaded = _python(
        "import sys; from typer.testing import CliRunner; from api.cli import app; "
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0; "
        "print('fastapi' in sys.modules, 'sqlalchemy' in sys.modules)"
    )
    assert loaded == "False False", loaded


def test_the_client_finds_reads_and_deletes_what_lore_holds(server: tuple[str, str]) -> None:
    with LoreClient(*server) as lore:
        lore(calls.snapshot(PAGE, "initial", DOM))
        (doc,) = lore(calls.documents(domain="ehr.clinic.test", source="spa"))
        assert doc.url == PAGE and doc.chunk_count >= 1
        whole = lore(calls.document(doc.id))
        assert whole.document == doc and whole.markdown is None  # an SPA page: its phases
        assert whole.chunks and whole.chunks[0]["phase"] == "initial"
        skill = lore(calls.record_skill(PAGE, "Open billing", "click(1)", "click(2)"))
        assert skill.id in {s.id for s in lore(calls.skills(domain="ehr.clinic.test"))}
        assert lore(calls.delete_skill(skill.id)) is None
        assert skill.id not in {s.id for s in lore(calls.skills())}
        assert lore(calls.jobs(status=["running"])) == []
        assert lore(calls.delete_documents(url_prefix="https://ehr.clinic.test/")) == 1
        assert lore(calls.documents(domain="ehr.clinic.test")) == []
        with pytest.raises(LoreError) as error:
            lore(calls.delete_documents())
        assert error.value.status == 422 and "urlPrefix" in error.value.message
        with pytest.raises(LoreError) as error:
            lore(calls.document(doc.id))
        assert error.value.status == 404
        made = lore(
            calls.create_schedule(
                ["https://ehr.clinic.test/a", "https://ehr.clinic.test/b"],
                interval_minutes=90,
                run_now=False,
                cookies={"sid": "never-shown"},
                metadata={"team": "ehr"},
            )
        )
        assert made.interval_minutes == 90 and made.last_job_id is None
        assert made.request["urls"] == ["https://ehr.clinic.test/a", "https://ehr.clinic.test/b"]
        assert made.request["login"] == {"headers": [], "cookies": ["sid"]}
        assert [s.id for s in lore(calls.schedules())] == [made.id]
        assert lore(calls.delete_schedule(made.id)) is None and lore(calls.schedules()) == []
        with pytest.raises(LoreError) as error:
            lore(calls.create_schedule("https://ehr.clinic.test/", interval_minutes=1))
        assert error.value.status == 422 and "intervalMinutes" in error.value.message


def _placeholder(annotation: str) -> object:
    if annotation.startswith("list[tuple"):
        return [("a.md", b"# A")]
    for prefix, value in (("str", "x"), ("list", []), ("int", 1), ("bool", False), ("dict", {})):
        if annotation.startswith(prefix):
            return value
    return None


def test_the_client_covers_every_operation_of_the_api(tmp_path: Path) -> None:
    import inspect

    from api import Settings

    made = set()
    for name in vars(calls):
        if name.startswith("_"):
            continue
        function = getattr(calls, name)
        params = inspect.signature(function).parameters.values()
        args = [
            _placeholder(str(p.annotation))
            for p in params
            if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
        ]
        call = function(*args)
        made.add((call.method, re.sub(r"/x(?=/|$)", "/{}", call.path)))
    document = create_app(Settings(data_dir=tmp_path, embedding={"backend": "hash"})).openapi()
    operations = {
        (method.upper(), re.sub(r"\{[^}]+\}", "{}", path))
        for path, ops in document["paths"].items()
        for method in ops
    }
    operations.discard(("GET", "/metrics"))  # Prometheus's text, for a scraper
    assert operations - made == set()
