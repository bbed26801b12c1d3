"""An agent loop that learns from a correction, end to end.

A small clinic web app is served on 127.0.0.1. The agent's goal is "Add a new patient". Before
each plan it asks lore `POST /agent/context`; it drives the app with Playwright in Debian's
headless Chromium. On the first run its policy picks the button whose label matches the goal
best ("Add"), which opens an appointment form instead; it corrects itself (the Patient menu,
then New/Search) and records the correction as a skill. On the second run the context call
brings the hint back and the agent follows it at once.

    .venv/bin/python examples/agent_loop.py     # deterministic policy
    LORE_EXAMPLE_LLM_URL=http://host/v1 LORE_EXAMPLE_LLM_MODEL=m \
        .venv/bin/python examples/agent_loop.py

Without a running lore server it starts one in-process (a temporary data directory, the real
model). With `LORE_EXAMPLE_LLM_URL` set, an OpenAI-compatible model chooses among the
candidate buttons instead of the word-overlap policy, with the skill hints in its prompt.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from playwright.async_api import Page, async_playwright

from api.client import AsyncLoreClient, calls

GOAL = "Add a new patient"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]

APP = b"""<!doctype html><html><head><title>Clinic</title></head><body>
<h1>Clinic dashboard</h1>
<nav>
  <button id="add">Add</button>
  <button id="patient-menu" aria-haspopup="true">Patient</button>
  <div id="menu" hidden><button id="new-search">New/Search</button>
  <button id="history">History</button></div>
</nav>
<main id="view"><p>Welcome back. Today there are 12 appointments.</p></main>
<script>
const view = document.getElementById('view');
document.getElementById('add').onclick = () => { view.innerHTML = '<h2>New appointment</h2>'; };
document.getElementById('patient-menu').onclick = () => {
  document.getElementById('menu').hidden = false; };
document.getElementById('new-search').onclick = () => {
  view.innerHTML = '<h2>New patient</h2><form><input name="name"></form>'; };
document.getElementById('history').onclick = () => { view.innerHTML = '<h2>History</h2>'; };
</script></body></html>"""


class _App(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(APP)))
        self.end_headers()
        self.wfile.write(APP)

    def log_message(self, *args: object) -> None:
        pass


@dataclass
class Run:
    steps: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    done: bool = False


async def buttons(page: Page) -> list[tuple[str, str]]:
    """(selector, label) of the visible buttons."""
    found = []
    for handle in await page.query_selector_all("button"):
        if await handle.is_visible():
            ident = await handle.get_attribute("id")
            found.append((f"#{ident}", (await handle.inner_text()).strip()))
    return found


def overlap_choice(goal: str, options: list[tuple[str, str]], tried: set[str]) -> str | None:
    words = set(re.findall(r"\w+", goal.lower()))
    ranked = sorted(
        (o for o in options if o[0] not in tried),
        key=lambda o: -len(words & set(re.findall(r"\w+", o[1].lower()))),
    )
    return ranked[0][0] if ranked else None


async def llm_choice(goal: str, options: list[tuple[str, str]], hints: list[str]) -> str | None:
    url, model = os.environ["LORE_EXAMPLE_LLM_URL"], os.environ.get("LORE_EXAMPLE_LLM_MODEL", "")
    listed = "\n".join(f"{n}. {label} ({sel})" for n, (sel, label) in enumerate(options))
    prompt = (
        f"Goal: {goal}\nWhat worked before: {' '.join(hints) or 'nothing yet'}\n"
        f"Buttons:\n{listed}\nAnswer with one number."
    )
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.post(
            url.rstrip("/") + "/chat/completions",
            json={"model": model, "messages": [{"role": "user", "content": prompt}]},
        )
        response.raise_for_status()
        answer = response.json()["choices"][0]["message"]["content"]
    number = re.search(r"\d+", answer)
    return (
        options[int(number.group())][0] if number and int(number.group()) < len(options) else None
    )


async def reached(page: Page) -> bool:
    return await page.locator("#view h2", has_text="New patient").count() > 0


async def attempt(lore: AsyncLoreClient, page: Page, url: str) -> Run:
    run = Run()
    context = await lore(calls.agent_context(url, query="how do I add a patient?", goal=GOAL))
    run.hints = [s.hint for s in context.skills]
    # A hint names a sequence that worked: follow it first.
    for skill in context.skills:
        for selector in re.findall(r"click\(([^)]+)\)", skill.successful_action):
            await page.click(selector)
            run.steps.append(f"click({selector})")
        worked = await reached(page)
        await lore(calls.skill_outcome(skill.id, success=worked))  # it counts toward the rate
        if worked:
            run.done = True
            return run
        await page.reload()
    tried: set[str] = set()
    first_wrong: str | None = None
    sequence: list[str] = []
    while len(run.steps) < 8:
        options = await buttons(page)
        if os.environ.get("LORE_EXAMPLE_LLM_URL"):
            choice = await llm_choice(GOAL, [o for o in options if o[0] not in tried], run.hints)
        else:
            choice = overlap_choice(GOAL, options, tried)
        if choice is None:
            break
        tried.add(choice)
        await page.click(choice)
        run.steps.append(f"click({choice})")
        sequence.append(f"click({choice})")
        if await reached(page):
            run.done = True
            break
        if await page.locator("#view h2").count():  # a wrong page: note it, start over
            first_wrong = first_wrong or f"click({choice})"
            sequence = []
            await page.reload()
    if run.done and first_wrong:  # a corrected step: remember it
        await lore(
            calls.record_skill(
                url,
                GOAL,
                first_wrong,
                " > ".join(sequence),
                "Add",
                "Patient > New/Search",
                "wrong_element",
                "menu",
            )
        )
    return run


async def main(lore_url: str, api_key: str | None) -> tuple[Run, Run]:
    app = ThreadingHTTPServer(("127.0.0.1", 0), _App)
    threading.Thread(target=app.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{app.server_address[1]}/"
    try:
        async with AsyncLoreClient(lore_url, api_key) as lore, async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=os.environ.get(
                    "LORE_BROWSER__EXECUTABLE_PATH", "/usr/bin/chromium"
                ),
                args=CHROMIUM_ARGS,
            )
            runs = []
            for _ in range(2):
                page = await browser.new_page()
                await page.goto(url)
                runs.append(await attempt(lore, page, url))
                await page.close()
            await browser.close()
    finally:
        app.shutdown()
    return runs[0], runs[1]


def report(first: Run, second: Run) -> None:
    for n, run in enumerate((first, second), 1):
        print(
            f"run {n}: {'reached' if run.done else 'did not reach'} the goal in "
            f"{len(run.steps)} clicks: {' '.join(run.steps)}"
        )
        for hint in run.hints:
            print(f"  hint from lore: {hint}")


if __name__ == "__main__":
    key = os.environ.get("LORE_API_KEY")
    server = os.environ.get("LORE_SERVER_URL")
    if server:
        report(*asyncio.run(main(server, key)))
    else:
        from api import Settings
        from api.mcp import embedded_server, session_key

        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(data_dir=Path(tmp), fetch={"allow_private_addresses": True})  # type: ignore[arg-type]
            key, done = session_key(settings)
            server, running = embedded_server(settings)
            try:
                report(*asyncio.run(main(server, key)))
            finally:
                running.should_exit = True
                done()
