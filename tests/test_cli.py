"""The `lore` CLI: local mode on the data directory, and client mode against a running server.

These use the hash embedder (`LORE_EMBEDDING__BACKEND=hash`, a deterministic fake) so the
commands start fast; the API tests cover the real model."""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.service import Lore
from ingest import HashEmbedder
from tests.conftest import AUTH, TEST_KEY, Page, Site, free_port, lore_server, make_settings

pytestmark = pytest.mark.slow

DOC = b"# Onboarding\n\n## Laptop\n\nNew hires collect their laptop from the IT desk on floor 3.\n"


def lore(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    values = dict(os.environ)
    values.update(
        {
            "LORE_DATA_DIR": str(tmp_path / "data"),
            "LORE_EMBEDDING__BACKEND": "hash",
            "LORE_FETCH__ALLOW_PRIVATE_ADDRESSES": "true",
            "LORE_API_KEY": TEST_KEY,  # the key lore_server's `lore serve` starts with
            "COLUMNS": "200",
        }
    )
    return values


def test_local_mode_ingest_and_query(env: dict[str, str], tmp_path: Path, site: Site) -> None:
    doc = tmp_path / "onboarding.md"
    doc.write_bytes(DOC)
    result = lore(env, "ingest", str(doc))
    assert result.returncode == 0, result.stderr
    assert "onboarding.md: 1 chunks" in result.stderr

    result = lore(env, "query", "where do I get my laptop", "--json")
    assert result.returncode == 0, result.stderr
    [chunk] = json.loads(result.stdout)
    assert "IT desk on floor 3" in chunk["text"] and chunk["headingPath"] == [
        "Onboarding",
        "Laptop",
    ]

    site.pages["/faq"] = Page(
        b"<html><head><title>FAQ</title></head><body><article><h1>FAQ"
        b"</h1><p>The cafeteria opens at eight in the morning and closes "
        b"at three in the afternoon on weekdays.</p></article></body>"
        b"</html>"
    )
    result = lore(env, "index-link", site.url("/faq"))
    assert result.returncode == 0, result.stderr
    result = lore(env, "query", "cafeteria opening hours", "--url", site.url("/"), "--json")
    assert "eight in the morning" in json.loads(result.stdout)[0]["text"]

    missing = lore(env, "index-link", site.url("/nope"))
    assert missing.returncode == 1 and "http_404" in missing.stderr
    bad = tmp_path / "bad.html"
    bad.write_bytes(b"\x00\x01\x02" * 100)
    refused = lore(env, "ingest", str(bad))
    assert refused.returncode == 2 and "binary" in refused.stderr


@pytest.fixture
def server(env: dict[str, str]) -> Iterator[str]:
    with lore_server(env) as (url, _):
        yield url
    assert not (Path(env["LORE_DATA_DIR"]) / "server.json").exists()


def test_cli_talks_to_a_running_server(env: dict[str, str], server: str, tmp_path: Path) -> None:
    # The server holds the store's lock: these commands can only succeed through its API.
    doc = tmp_path / "onboarding.md"
    doc.write_bytes(DOC)
    result = lore(env, "ingest", str(doc))
    assert result.returncode == 0, result.stderr
    assert "1 chunks" in result.stderr
    assert httpx.get(f"{server}/knowledge/documents", headers=AUTH).json()["total"] == 1
    result = lore(env, "query", "laptop IT desk", "--json")
    assert result.returncode == 0 and "floor 3" in json.loads(result.stdout)[0]["text"]
    failed = lore(env, "index-link", "http://127.0.0.1:9/unreachable")
    assert failed.returncode == 1 and "job failed" in failed.stderr


def test_keys_are_created_listed_and_revoked(env: dict[str, str]) -> None:
    made = lore(
        env,
        "keys",
        "create",
        "--tenant",
        "acme",
        "--name",
        "agent",
        "--allowed-domain",
        "*.acme.test",
        "--rate-limit",
        "30",
    )
    assert made.returncode == 0, made.stderr
    output = made.stdout + made.stderr
    key = made.stdout.strip()  # the key alone on stdout, for scripts
    assert key.startswith("lore_") and key not in made.stderr
    assert "allowedDomains: *.acme.test" in " ".join(output.split())
    listed = lore(env, "keys", "list", "--tenant", "acme")
    line = " ".join((listed.stdout + listed.stderr).split())
    assert "tenant=acme active 30/min agent" in line and key not in line  # never the key
    key_id = line.split()[0]
    revoked = lore(env, "keys", "revoke", key_id)
    assert revoked.returncode == 0, revoked.stderr
    after = lore(env, "keys", "list", "--tenant", "acme")
    assert "revoked" in after.stdout + after.stderr
    assert lore(env, "keys", "revoke", "nope").returncode == 2
    made = lore(env, "keys", "create", "--tenant", "beta", "--json")
    record = json.loads(made.stdout)
    assert record["tenant"] == "beta" and record["key"].startswith("lore_")
    [listed_key] = json.loads(lore(env, "keys", "list", "--tenant", "beta", "--json").stdout)
    assert listed_key["id"] == record["id"] and record["key"] not in json.dumps(listed_key)


def test_serve_prints_a_first_key_once(env: dict[str, str]) -> None:
    env = {k: v for k, v in env.items() if k != "LORE_AUTH__BOOTSTRAP_KEY"}

    def serve() -> tuple[list[str], int]:
        """Start `lore serve`, read what it printed before listening, ask for the documents
        with the key it printed (if any); the status code of that."""
        port = str(free_port())
        proc = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "serve", "--log-level", "warning"],
            env={**env, "LORE_PORT": port},
            stderr=subprocess.PIPE,
            text=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            printed: list[str] = []
            assert proc.stderr is not None
            while not any("lore serving" in line for line in printed):
                line = proc.stderr.readline()
                assert line, f"lore serve exited: {printed}"
                printed.append(line)
            keys = re.findall(r"lore_[\w-]{43}", "".join(printed))
            deadline = time.monotonic() + 90
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    assert time.monotonic() < deadline, "lore serve did not start"
                    time.sleep(0.2)
            headers = {"Authorization": f"Bearer {keys[0]}"} if keys else {}
            return keys, httpx.get(f"{url}/knowledge/documents", headers=headers).status_code
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    keys, status = serve()
    assert len(keys) == 1 and status == 200  # the printed key works
    keys, status = serve()
    assert keys == [] and status == 401  # a key exists: none is made, none printed


def test_the_version_is_printed(env: dict[str, str]) -> None:
    done = lore(env, "--version")
    assert done.returncode == 0 and done.stdout.strip() == "lore 0.1.0", done.stdout + done.stderr


def test_jobs_documents_and_skills_from_the_cli(
    env: dict[str, str], server: str, tmp_path: Path, site: Site
) -> None:
    site.pages["/"] = Page(b'<html><body><a href="/a">A</a> <a href="/b">B</a></body></html>')
    site.pages["/a"] = Page(b"<html><body><h1>A</h1><p>Page A has text.</p></body></html>")
    site.pages["/b"] = Page(b"<html><body><h1>B</h1><p>Page B has text.</p></body></html>")
    mapped = lore(env, "index-link", site.url("/"), "--strategy", "spider", "--map")
    assert mapped.returncode == 0, mapped.stderr
    assert set(mapped.stdout.split()) == {site.url("/"), site.url("/a"), site.url("/b")}
    doc = tmp_path / "onboarding.md"
    doc.write_bytes(DOC)
    assert lore(env, "ingest", str(doc)).returncode == 0

    jobs = json.loads(lore(env, "jobs", "list", "--json").stdout)
    assert [j["status"] for j in jobs] == ["completed"] and jobs[0]["kind"] == "index-link"
    listed = lore(env, "docs", "list", "--source", "upload", "--json")
    [document] = json.loads(listed.stdout)
    shown = lore(env, "docs", "show", document["id"])
    assert shown.returncode == 0 and shown.stdout.startswith("# Onboarding"), shown.stdout
    refused = lore(env, "docs", "delete")
    assert refused.returncode == 2 and "422 invalid_request" in refused.stderr, refused.stderr
    deleted = lore(env, "docs", "delete", "--source", "upload")
    assert deleted.returncode == 0 and "deleted 1 document" in deleted.stderr
    missing = lore(env, "docs", "show", document["id"])
    assert missing.returncode == 2 and "404 not_found" in missing.stderr

    skill = {
        "url": "https://shop.example.test/cart",
        "goal": "Empty the cart",
        "failedState": {"action": "click(3)"},
        "successfulAction": {"action": "click(4)"},
    }
    made = httpx.post(f"{server}/skills", json=skill, headers=AUTH).json()
    skills = lore(env, "skills", "list", "--domain", "shop.example.test")
    assert made["id"] in skills.stdout and "Empty the cart" in skills.stdout
    assert lore(env, "skills", "delete", made["id"]).returncode == 0
    assert json.loads(lore(env, "skills", "list", "--json").stdout) == []


def test_a_login_batch_metadata_and_schedules_from_the_cli(
    env: dict[str, str], server: str, site: Site
) -> None:
    login = {"X-Club-Pass": "members-only-4411"}
    site.pages["/a"] = Page(
        b"<html><body><h1>Pool</h1><p>The pool opens at six.</p></body></html>", require=login
    )
    site.pages["/b"] = Page(
        b"<html><body><h1>Gym</h1><p>The gym closes at ten.</p></body></html>", require=login
    )
    urls = [site.url("/a"), site.url("/b")]
    args = ["--header", "X-Club-Pass: members-only-4411", "--meta", "club=north"]
    crawled = lore(env, "index-link", *urls, *args, "--json")
    assert crawled.returncode == 0, crawled.stderr
    assert "2 ingested" in crawled.stderr and "members-only" not in crawled.stderr
    assert json.loads(crawled.stdout)["counts"]["ingested"] == 2
    found = json.loads(lore(env, "query", "pool hours", "--meta", "club=north", "--json").stdout)
    assert found and {c["metadata"]["club"] for c in found} == {"north"}
    assert json.loads(lore(env, "query", "pool", "--meta", "club=south", "--json").stdout) == []
    bad = lore(env, "index-link", urls[0], "--header", "no-colon")
    assert bad.returncode == 2 and "name:value" in bad.stderr, bad.stderr

    made = lore(env, "schedules", "create", *urls, "--every", "60", "--no-now", *args, "--json")
    assert made.returncode == 0, made.stderr
    schedule = json.loads(made.stdout)
    assert "members-only" not in made.stdout
    listed = lore(env, "schedules", "list")
    assert schedule["id"] in listed.stdout and "every 60 min" in listed.stdout
    too_often = lore(env, "schedules", "create", urls[0], "--every", "1")
    assert too_often.returncode == 2 and "intervalMinutes" in too_often.stderr
    assert lore(env, "schedules", "delete", schedule["id"]).returncode == 0
    assert json.loads(lore(env, "schedules", "list", "--json").stdout) == []


def test_the_data_directory_is_one_per_user_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.settings import Settings

    monkeypatch.delenv("LORE_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    for cwd in ("a", "b"):
        (tmp_path / cwd).mkdir()
        monkeypatch.chdir(tmp_path / cwd)
        assert Settings().data_dir == tmp_path / "xdg" / "lore"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert Settings().data_dir == tmp_path / "home" / ".local" / "share" / "lore"
    monkeypatch.setenv("LORE_DATA_DIR", str(tmp_path / "explicit"))
    assert Settings().data_dir == tmp_path / "explicit"


def test_a_long_running_server_keeps_startup_out_of_full_collections(tmp_path: Path) -> None:
    """`lore serve` freezes what its startup made (full collections had walked the model and
    its libraries, pausing requests) and gives it back when it stops: left frozen, a command's
    in-process server crashed the interpreter's exit. A command's own server freezes nothing."""
    settings = make_settings(tmp_path / "data")
    for freeze, frozen_while_up in ((True, True), (False, False)):
        lore_ = Lore(settings, embedder=HashEmbedder(384))
        try:
            with TestClient(create_app(settings, lore=lore_, freeze_startup=freeze)) as client:
                assert client.get("/healthz").status_code == 200
                assert (gc.get_freeze_count() > 0) is frozen_while_up
            assert gc.get_freeze_count() == 0
        finally:
            lore_.close()
