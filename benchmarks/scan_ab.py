"""The agent scan's scanner (spa_phases.page_scripts.SCAN) of this checkout against that of
another revision, timed inside one Chromium page: a change of a millisecond or two in a scan of
50 ms shows there, where the scan over HTTP drifts by a fifth from minute to minute.

For each of `--documents` listings of about 5,000 elements (benchmarks/scan_eval.py's, each
with another product name), the DOM is written once and laid out, then the two scanners run
in turn, five times each; the best of the five counts for each. Printed: the median of the
paired differences (this checkout minus the other) and of each side's times. A version against
itself gives a median difference of about 0.2 ms.

With `--same`, it first checks that the two scanners give the same answer byte for byte on
every page of scan_eval.py (its 12 pages and the listing). Only the scanner is swapped: the
code around it (scan.py's packing of its answer) is this checkout's.

    .venv/bin/python benchmarks/scan_ab.py [--against REV] [--documents 10] [--same]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import types
from pathlib import Path
from typing import Any

from crawl import BrowserOptions
from spa_phases import page_scripts
from spa_phases.scan import _SCAN_JSON, DomScanner, _prepared

ROOT = Path(__file__).resolve().parent.parent
URL = "https://shop.example/trail"
INSTALL = (
    "([a, b]) => { window.__loreA = eval('(' + a + ')'); window.__loreB = eval('(' + b + ')'); }"
)
WRITE = (
    "([url, html]) => { history.replaceState(null, '', url); document.open(); "
    "document.write(html); document.close(); void document.body.getBoundingClientRect(); }"
)
# Five runs of each scanner on the document in place, taking turns; the best of each.
TIMED = (
    "(first) => { const best = [1e9, 1e9]; for (let k = 0; k < 10; k++) {"
    " const w = (k + first) % 2; const t = performance.now();"
    " (w ? window.__loreB : window.__loreA)();"
    " best[w] = Math.min(best[w], performance.now() - t); } return best; }"
)
BOTH = "() => [window.__loreA(), window.__loreB()]"


def scanner_of(revision: str) -> str:
    """scan.py's packed scanner with the SCAN of `revision` in it."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:spa_phases/page_scripts.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("scripts_at_revision")
    exec(compile(source, f"{revision}:spa_phases/page_scripts.py", "exec"), module.__dict__)
    return _SCAN_JSON.replace(page_scripts.SCAN, module.SCAN)


async def eval_pages() -> dict[str, str]:
    import scan_eval  # noqa: PLC0415

    pages = json.loads(scan_eval.CASES.read_text())["pages"]
    doms = {n: scan_eval.page_html(s) for n, s in pages.items() if "file" in s}
    doms.update(await scan_eval.rendered_apps(pages))
    doms["listing"] = scan_eval.big_page()
    return doms


async def main(against: str, documents: int, same: bool) -> None:
    import scan_eval  # noqa: PLC0415

    scanner = DomScanner(BrowserOptions())
    try:
        await scanner.scan(URL, "<a href='/'>warm up</a>")
        page: Any = next(p for p in scanner._free if p in scanner._sites)
        await page.evaluate(INSTALL, [scanner_of(against), _SCAN_JSON])
        if same:
            different = []
            for name, dom in (await eval_pages()).items():
                # One origin for all (the page is written in place); both scanners see it.
                await page.evaluate(WRITE, [f"{URL}/{name}", _prepared(dom)[0]])
                theirs, ours = await page.evaluate(BOTH)
                if theirs != ours:
                    different.append(name)
            print(f"answers different from {against}'s: {different or 'none'}")
        listing = scan_eval.big_page()
        times: list[list[float]] = []
        for n in range(documents):
            dom = listing.replace("Trail shoe model 7<", f"Trail shoe model 7 (document {n})<")
            await page.evaluate(WRITE, [URL, _prepared(dom)[0]])
            times.append(await page.evaluate(TIMED, n % 2))
        theirs = [t[0] for t in times]
        ours = [t[1] for t in times]
        diffs = sorted(o - t for t, o in zip(theirs, ours, strict=True))
        print(
            f"scanner on a {len(listing) // 1024} KiB listing, best of 5 on each of "
            f"{documents} documents: {against} {statistics.median(theirs):.1f} ms, this "
            f"checkout {statistics.median(ours):.1f} ms; paired difference median "
            f"{statistics.median(diffs):+.1f} ms (middle half {diffs[len(diffs) // 4]:+.1f} to "
            f"{diffs[3 * len(diffs) // 4]:+.1f})"
        )
    finally:
        await scanner.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="HEAD", help="a git revision (default HEAD)")
    parser.add_argument("--documents", type=int, default=10)
    parser.add_argument("--same", action="store_true", help="also compare the answers")
    args = parser.parse_args()
    asyncio.run(main(args.against, args.documents, args.same))
