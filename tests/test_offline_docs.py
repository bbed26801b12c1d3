"""/docs and /redoc render in Debian's Chromium with every request off the machine refused:
their scripts and styles come from lore itself (the fastapi-offline package), not a CDN.
A real server on 127.0.0.1 (uvicorn in a thread) and a real headless browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from api.app import create_app, serve_in_thread
from tests.conftest import make_settings

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


@pytest.fixture
def docs_server(tmp_path: Path) -> Iterator[str]:
    settings = make_settings(tmp_path / "data", embedding={"backend": "hash"})
    url, running = serve_in_thread(create_app(settings))
    yield url
    running.should_exit = True


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (scripts/system-deps)")
@pytest.mark.parametrize(
    ("path", "rendered"),
    [
        ("/docs", ".swagger-ui .info .title"),  # Swagger UI 5: OpenAPI 3.1 documents
        ("/redoc", ".api-info h1"),
    ],
)
def test_the_api_docs_render_without_internet(docs_server: str, path: str, rendered: str) -> None:
    from playwright.sync_api import sync_playwright

    refused: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()

            def only_loopback(route: object) -> None:
                url = route.request.url  # type: ignore[attr-defined]
                if urlsplit(url).hostname == "127.0.0.1":
                    route.continue_()  # type: ignore[attr-defined]
                else:  # ReDoc's "API docs by Redocly" logo is the one image from outside
                    if route.request.resource_type != "image":  # type: ignore[attr-defined]
                        refused.append(url)
                    route.abort()  # type: ignore[attr-defined]

            page.route("**/*", only_loopback)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(docs_server + path)
            title = page.wait_for_selector(rendered, timeout=30_000)
            assert title is not None and "lore" in title.inner_text()
            text = page.inner_text("body")
            assert "/knowledge/index-link" in text and "/agent/context" in text
        finally:
            browser.close()
    assert refused == [] and errors == [], (refused, errors)
