"""Agent scan evaluation: `POST /agent/scan` on pages an agent meets, labelled by hand in
`benchmarks/scan_cases.json`.

Pages: shop-like listings, search results, a sign-in form, a contact form with an FAQ, a
settings page with tabs and a dialog, a news page behind a consent dialog and a mail inbox
(written here, in `benchmarks/scan_pages/`), and real documentation from Debian packages
(`python3.11-doc`, `git-doc`, read where the packages install them). Each case is a goal and the
element that answers it (its label, and where labels repeat its type or its item's text).

Reports recall@1/@10/@20 of that element in the goal-ranked list (target >= 0.95 at 20), the
precision and recall of every pattern type over the pages (target >= 0.9), and the latency of a
scan of a 5,000-element page over HTTP against `lore serve` (target p95 <= 150 ms).

    .venv/bin/python benchmarks/scan_eval.py [--latency-runs 40] [--no-latency] [--no-quality]
        [--against CHECKOUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from _common import DATA, serve_directory, summary_ms
from _served import lore_serve

from api import Settings
from api.service import make_embedder
from crawl import BrowserOptions
from crawl.browser import SERIALIZE
from spa_phases.scan import DomScanner, GoalRanker, answer, parse_scan, read_scan

HERE = Path(__file__).parent
CASES = HERE / "scan_cases.json"


async def rendered_apps(pages: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The DOM an agent's browser extension would send for each page rendered by an app from
    the npm registry (`"app"`, `"spec"`: an OpenAPI spec of ../shared/data/spa), after the app
    has drawn: served on 127.0.0.1 and rendered in Chromium with scripts on."""
    wanted = {name: spec for name, spec in pages.items() if "app" in spec}
    if not wanted:
        return {}
    from playwright.async_api import async_playwright  # noqa: PLC0415
    from spa_eval import site_root  # noqa: PLC0415

    out = {}
    with tempfile.TemporaryDirectory() as work:
        apps = sorted({spec["app"] for spec in wanted.values()})
        server, base = serve_directory(site_root(DATA / "spa", Path(work), apps))
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path="/usr/bin/chromium")
                for name, spec in wanted.items():
                    page = await browser.new_page()
                    url = f"{base}/sites/{spec['app']}/index.html?spec={spec['spec']}"
                    await page.goto(url, wait_until="networkidle")
                    await page.wait_for_timeout(1500)  # the app draws after its spec loads
                    out[name] = await page.evaluate(SERIALIZE) or await page.content()
                    await page.close()
                await browser.close()
        finally:
            server.shutdown()
    return out


def page_html(spec: dict[str, Any]) -> str:
    where = spec["file"]
    path = Path(where.removeprefix("debian:")) if where.startswith("debian:") else HERE / where
    if not path.exists():
        sys.exit(f"{path} is missing: scripts/system-deps installs python3.11-doc and git-doc")
    return path.read_text(encoding="utf-8", errors="replace")


def matches(element: Any, case: dict[str, Any]) -> bool:
    if element.label.strip().lower() != case["label"].lower():
        return False
    if "type" in case and element.type != case["type"]:
        return False
    return "context" not in case or case["context"].lower() in element.context.lower()


async def quality() -> None:
    data = json.loads(CASES.read_text())
    scanner = DomScanner(BrowserOptions())
    embed = make_embedder(Settings()).embed_batch
    scans = {}
    apps = await rendered_apps(data["pages"])
    for name, spec in data["pages"].items():
        text = await scanner.scan(spec["url"], apps[name] if name in apps else page_html(spec))
        scans[name] = read_scan(parse_scan(text), spec["url"])
    await scanner.aclose()

    ranks = []
    for case in data["cases"]:
        scan = scans[case["page"]]
        if not any(matches(e, case) for e in scan.elements):
            sys.exit(f"case {case} names no element of its page: fix the label")
        # A ranker of its own for every case: no element text is cached from an earlier one.
        ranker = GoalRanker(embed)
        ranked = answer(scan, ranker, case["goal"], max_elements=len(scan.elements)).elements
        rank = next(i for i, e in enumerate(ranked, 1) if matches(e, case))
        ranks.append(rank)
        if rank > 3:
            top = ", ".join(f"{e.type} {e.label!r}" for e in ranked[:3])
            print(f"  rank {rank:3d}  {case['page']}: {case['goal']!r} -> {top}")
    n = len(ranks)
    print(f"\nGoal ranking, {n} cases on {len(scans)} pages:")
    for k in (1, 3, 10, 20):
        print(f"  recall@{k:<2d} {sum(r <= k for r in ranks) / n:.3f}")
    print(f"  MRR       {sum(1 / r for r in ranks) / n:.3f}")

    found: Counter[str] = Counter()
    labelled: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for name, spec in data["pages"].items():
        got = {p.type for p in scans[name].patterns}
        want = set(spec["patterns"])
        found.update(got)
        labelled.update(want)
        right.update(got & want)
        if got != want:
            print(f"  {name}: missed {sorted(want - got)}, extra {sorted(got - want)}")
    print("\nPatterns (precision / recall over the pages):")
    for kind in sorted(set(found) | set(labelled)):
        p = right[kind] / found[kind] if found[kind] else 1.0
        r = right[kind] / labelled[kind] if labelled[kind] else 1.0
        print(
            f"  {kind:16s} P {p:.2f}  R {r:.2f}  ({labelled[kind]} labelled, {found[kind]} found)"
        )
    total_p = sum(right.values()) / max(1, sum(found.values()))
    total_r = sum(right.values()) / max(1, sum(labelled.values()))
    print(f"  {'all':16s} P {total_p:.2f}  R {total_r:.2f}")


def big_page(cards: int = 550) -> str:
    """A shop listing of about 5,000 elements (9 per product card)."""
    items = "".join(
        f'<div class="card"><a href="/p/{i}"><img src="/i/{i}.jpg" alt="Shoe {i}"></a>'
        f'<h3><a href="/p/{i}">Trail shoe model {i}</a></h3><div class="stars">4.{i % 10}</div>'
        f'<span class="price">${20 + i % 80}.99</span><button>Add to cart</button>'
        f'<button aria-label="Save shoe {i}">Save</button></div>'
        for i in range(cards)
    )
    return (
        '<html><body><header><form role="search"><input type="search" name="q">'
        '<button>Search</button></form><a href="/cart">Cart</a></header>'
        f'<main><div class="grid">{items}</div><a rel="next" href="?p=2">Next</a></main>'
        "</body></html>"
    )


def latency(runs: int, against: Path | None = None) -> None:
    """Scan latency over HTTP; with `against` (another checkout, say a `git worktree` of an
    earlier commit), its server too, the two asked in turn: this machine's speed drifts by a
    fifth from minute to minute, so only figures taken side by side compare."""
    dom = big_page()
    with tempfile.TemporaryDirectory() as data, ExitStack() as stack:
        clients = []
        for n, checkout in enumerate([None] + ([against] if against else [])):
            key = "lore_bench_" + os.urandom(12).hex()
            env = {"LORE_AUTH__BOOTSTRAP_KEY": key}
            base, _ = stack.enter_context(lore_serve(Path(data) / str(n), env, checkout))
            headers = {"Authorization": f"Bearer {key}"}
            clients.append(
                stack.enter_context(httpx.Client(base_url=base, timeout=60, headers=headers))
            )
        body = {"url": "https://shop.example/trail", "dom": dom}
        firsts = [c.post("/agent/scan", json={**body, "goal": "warm up"}) for c in clients]
        for first in firsts:
            first.raise_for_status()
        total = firsts[0].json()["summary"]["totalElements"]
        elements = len(re.findall(r"<[a-z]", dom))
        print(
            f"\nScan latency over HTTP: {elements} elements, {total} actionable, "
            f"{len(dom) // 1024} KiB, {runs} runs each, one client"
            + (f"; this checkout, then {against} (asked in turn)" if against else "")
            + ":"
        )
        goals = ["add trail shoe model 417 to the cart", "next page", "search"]
        runs_of = (
            ("new DOM, no goal", True, False),
            ("new DOM, new goal", True, True),
            ("same DOM, next offset, new goal", False, True),
        )
        for label, new_dom, with_goal in runs_of:
            times: list[list[float]] = [[] for _ in clients]
            for i in range(runs):
                # A DOM that differs every time, in what the scan reads (a product's
                # name, new in each block too), is scanned and read afresh; the same DOM
                # again (an agent paging through elements) is read from the latest scans.
                fresh = f"Trail shoe model 7 ({label}, run {i})<"
                page = dom.replace("Trail shoe model 7<", fresh) if new_dom else dom
                extra = {"goal": f"{goals[i % 3]} {i}"} if with_goal else {}
                if not new_dom:
                    extra["offset"] = 50 * (i % 10)
                turn = list(enumerate(clients))
                for n, client in turn if i % 2 == 0 else turn[::-1]:
                    start = time.perf_counter()
                    reply = client.post("/agent/scan", json={**body, "dom": page, **extra})
                    reply.raise_for_status()
                    times[n].append(time.perf_counter() - start)
            for n, taken in enumerate(times):
                name = label if n == 0 else "  against"
                print(f"  {name:32s} {summary_ms(taken)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-runs", type=int, default=40)
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (e.g. `git worktree add /tmp/before REV`) whose server is asked "
        "in turn with this one's, for figures that compare",
    )
    args = parser.parse_args()
    if not args.no_quality:
        asyncio.run(quality())
    if not args.no_latency:
        latency(args.latency_runs, args.against)


if __name__ == "__main__":
    main()
