"""The example agent loop (examples/agent_loop.py) end to end: real Chromium, a real lore server
on 127.0.0.1 with the real model. The first run corrects itself and records the skill; the
second gets the hint from /agent/context and reaches the goal at once."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from api import Lore, create_app
from api.app import serve_in_thread
from api.auth import Authenticator
from crawl import BrowserOptions, browser_missing
from ingest import Embedder
from tests.conftest import make_settings

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"


@pytest.mark.skipif(
    browser_missing(BrowserOptions()) is not None, reason=str(browser_missing(BrowserOptions()))
)
def test_the_hint_comes_back_on_the_next_run(tmp_path: Path, real_embedder: Embedder) -> None:
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    sys.modules["agent_loop"] = example  # its dataclasses look their module up
    spec.loader.exec_module(example)
    settings = make_settings(tmp_path / "data")
    lore = Lore(settings, embedder=real_embedder)
    key, _ = Authenticator(lore.catalog, 600).create_key(settings.tenant, "example")
    url, server = serve_in_thread(create_app(settings, lore=lore))
    try:
        first, second = asyncio.run(example.main(url, key))
    finally:
        server.should_exit = True
    assert first.done and first.hints == []
    assert first.steps == ["click(#add)", "click(#patient-menu)", "click(#new-search)"]
    assert second.done and second.steps == ["click(#patient-menu)", "click(#new-search)"]
    [hint] = second.hints
    assert "'click(#add)' (Add) failed for 'Add a new patient'" in hint
    [skill] = lore.skills.index.scan(settings.tenant)
    assert (skill.success_count, skill.failure_count) == (2, 0)  # recorded, then it worked again
    lore.close()
