"""The web console (/ui) in Debian's Chromium against a real server (uvicorn on 127.0.0.1, the
real model and engine, a real site to crawl): every page loads without console errors and with
no serious or critical axe-core violation, its main action works (start a crawl and watch it
finish, search and open a result, delete a document, create a key), the first load stays under
300 KB, and a screenshot of each page is kept in .artifacts/console (LORE_TEST_ARTIFACTS)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api import Lore, create_app
from api.app import serve_in_thread
from api.auth import Authenticator
from tests.conftest import Page, Site, make_settings

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
AXE = ROOT / ".cache/npm/node_modules/axe-core/axe.min.js"
ARTIFACTS = Path(os.environ.get("LORE_TEST_ARTIFACTS", ROOT / ".artifacts")) / "console"
FIRST_LOAD_BYTES = 300 * 1024

TOPICS = {
    "/tea": ("Tea", "Green tea steeps for two minutes at eighty degrees."),
    "/bread": ("Bread", "Sourdough bread rises overnight in a cool kitchen."),
    "/bikes": ("Bikes", "Bicycle chains want oil every few hundred kilometres."),
}


@pytest.fixture
def console(tmp_path: Path, real_embedder: Any, site: Site) -> Iterator[tuple[str, str, Lore]]:
    site.pages["/"] = Page(
        b"<html><head><title>Home</title></head><body><main><h1>Home</h1>"
        + b"".join(f'<a href="{p}">{p}</a> '.encode() for p in TOPICS)
        + b"</main></body></html>"
    )
    for path, (title, text) in TOPICS.items():
        site.pages[path] = Page(
            f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p>"
            f"<p>{text} More about it here.</p></main></body></html>".encode()
        )
    settings = make_settings(tmp_path / "data")
    lore = Lore(settings, embedder=real_embedder)
    key, _ = Authenticator(lore.catalog, 600).create_key(settings.tenant, "console", admin=True)
    url, running = serve_in_thread(create_app(settings, lore=lore))
    yield url, key, lore
    running.should_exit = True
    lore.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/system-deps)")
def test_every_console_page_loads_works_and_is_accessible(
    console: tuple[str, str, Lore], site: Site
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, key, lore = console
    if not AXE.exists():
        pytest.skip(f"axe-core is not installed at {AXE}: `make test` installs it from npm")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    loaded: list[int] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
        page.on(
            "console",
            lambda m: (
                errors.append(f"console: {m.text}")
                if m.type == "error" and "401" not in m.text  # the sign-in probe's own 401
                else None
            ),
        )
        page.on("dialog", lambda dialog: dialog.accept())

        def check(name: str) -> None:
            """No console error so far, no serious or critical axe violation, a screenshot."""
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
            page.add_script_tag(path=str(AXE))
            result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
            bad = [
                f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
                for v in result["violations"]
                if v["impact"] in ("serious", "critical")
            ]
            assert not bad, f"{name}: {bad}"
            assert not errors, f"{name}: {errors}"

        def sized(response: Any) -> None:
            if response.url.startswith(url + "/ui/"):
                loaded.append(len(response.body()))

        page.on("response", sized)
        page.goto(url + "/ui")
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        page.remove_listener("response", sized)
        assert 0 < sum(loaded) < FIRST_LOAD_BYTES, loaded
        check("signin")
        page.get_by_label("API key").fill("lore_not_a_key_of_this_server_at_all")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text("unauthorized")
        page.get_by_label("API key").fill(key)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Documents", exact=True)).to_be_visible()
        check("documents-empty")

        # Jobs: start a crawl and watch it finish.
        page.get_by_role("link", name="Jobs").click()
        expect(page.get_by_role("heading", name="Jobs", exact=True)).to_be_visible()
        page.get_by_label("URL").fill(site.url("/"))
        page.get_by_label("Strategy").select_option("spider")
        page.get_by_role("button", name="Start crawl").click()
        expect(page.locator("[data-status]")).to_have_attribute(
            "data-status", "completed", timeout=60_000
        )
        expect(page.get_by_role("cell", name="ingested")).to_have_count(4)
        check("job")
        page.get_by_role("link", name="Jobs").click()
        expect(page.get_by_role("cell", name="completed")).to_have_count(1)
        check("jobs")

        # Documents: the crawled pages, one opened whole.
        page.get_by_role("link", name="Documents").click()
        expect(page.get_by_text("4 documents")).to_be_visible()
        page.get_by_role("link", name="Bread").click()
        expect(page.get_by_role("heading", name="Bread", exact=True)).to_be_visible()
        expect(page.locator("pre").first).to_contain_text("Sourdough bread rises overnight")
        check("document")

        # Search: a query, its provenance and scores, and the result opened.
        page.get_by_role("link", name="Search").click()
        expect(page.get_by_role("heading", name="Search", exact=True)).to_be_visible()
        page.get_by_label("Query").fill("how long does green tea steep")
        page.get_by_role("button", name="Search").click()
        first = page.locator("article.chunk").first
        expect(first).to_contain_text("Green tea steeps")
        expect(first.locator(".scores")).to_contain_text(re.compile(r"fused .* freshness"))
        check("search")
        first.get_by_role("link").click()
        expect(page.get_by_role("heading", name="Tea", exact=True)).to_be_visible()

        # Delete the document it opened.
        page.get_by_role("button", name="Delete document").click()
        expect(page.get_by_role("heading", name="Documents", exact=True)).to_be_visible()
        expect(page.get_by_text("3 documents")).to_be_visible()
        assert lore.catalog.count_documents(lore.settings.tenant) == 3

        # Skills: one learned and used, with the KPIs.
        skill = lore.skills.record(
            lore.settings.tenant,
            "127.0.0.1",
            "oil the chain",
            _failed("click(3)"),
            _worked("click(4)"),
        )
        lore.kpis.lookup(lore.settings.tenant, found=True)
        lore.skills.outcome(lore.settings.tenant, skill.id, True)
        lore.kpis.outcome(lore.settings.tenant, True)
        page.get_by_role("link", name="Skills").click()
        expect(page.get_by_role("cell", name="oil the chain", exact=True)).to_be_visible()
        expect(page.get_by_text(re.compile(r"Hit rate 100\.0 % of 1 lookups"))).to_be_visible()
        check("skills")

        # Site models: what a capture learned about an app's page.
        lore.catalog.put_site_model(
            lore.settings.tenant,
            "https://app.example.test/orders",
            "app.example.test",
            {"pageType": "list-detail", "keyElements": ["Orders table"], "recipe": None},
        )
        page.get_by_role("link", name="Site models").click()
        expect(page.get_by_role("heading", name="Site models", exact=True)).to_be_visible()
        page.get_by_label("Domain").fill("app.example.test")
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_text("list-detail")).to_be_visible()
        check("models")

        # Keys and tenants: an admin key makes a key for a new tenant.
        page.get_by_role("link", name="Keys and tenants").click()
        expect(page.get_by_role("heading", name="Tenants", exact=True)).to_be_visible()
        page.get_by_label("Tenant", exact=True).fill("acme")
        page.get_by_label("Allowed domains (new tenant)").fill("*.acme.test")
        page.get_by_role("button", name="Create key").click()
        expect(page.locator(".key")).to_contain_text("lore_")
        expect(page.get_by_role("cell", name="*.acme.test")).to_be_visible()
        check("admin")
        browser.close()


def _failed(action: str) -> Any:
    from retrieval.skills import FailedState

    return FailedState(action=action)


def _worked(action: str) -> Any:
    from retrieval.skills import SuccessfulAction

    return SuccessfulAction(action=action)
