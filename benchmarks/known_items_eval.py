"""Known-item ranking on documentation sites: does a distinctive sentence of a page find that page
first?

For each site (the Python docs from Debian's python3.11-doc, Sphinx; Git's manual pages from
Debian's git-doc, AsciiDoc), 127.0.0.1 serves the HTML, `lore serve` crawls it through the API
(a spider crawl from the index, `--pages` pages), and with a fixed seed the script picks
`--items` crawled pages and one sentence from each page's body text (paragraphs, 10 to 30 words,
found on no other crawled page). Each sentence is a query to `POST /knowledge/query` (hybrid,
k=10); a hit is a chunk of the page the sentence came from. Prints hit@1, hit@3 and MRR per site
(the issue's targets: hit@1 >= 0.95 and hit@3 = 1.0)."""

from __future__ import annotations

import argparse
import random
import re
import secrets
import tempfile
import time
from pathlib import Path

import httpx
from _common import PYTHON_DOCS, serve_directory
from _served import lore_serve
from lxml import html as lxml_html

SITES = {
    "python-docs": (PYTHON_DOCS, "index.html"),
    "git-docs": (Path("/usr/share/doc/git-doc"), "git.html"),
}
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def body_sentences(data: bytes) -> list[str]:
    """The page's paragraph sentences of 10 to 30 words, inline code included (no navigation,
    no code blocks)."""
    tree = lxml_html.fromstring(data)
    for junk in tree.xpath("//nav|//header|//footer|//script|//style|//pre"):
        junk.drop_tree()
    found = []
    for paragraph in tree.xpath("//p"):
        text = " ".join(paragraph.text_content().split())
        for sentence in SENTENCE.split(text):
            if 10 <= len(sentence.split()) <= 30:
                found.append(sentence)
    return found


def crawl(client: httpx.Client, start: str, pages: int) -> list[str]:
    job = client.post(
        "/knowledge/index-link",
        json={"url": start, "strategy": "spider", "maxPages": pages, "maxDepth": 10},
    ).json()["jobId"]
    while (view := client.get(f"/knowledge/jobs/{job}").json())["status"] in (
        "queued",
        "running",
    ):
        time.sleep(1)
    if view["status"] != "completed":
        raise SystemExit(f"the crawl ended {view['status']}: {view.get('error')}")
    urls = client.get(f"/knowledge/jobs/{job}/urls", params={"state": "ingested", "limit": 1000})
    return [u["url"] for u in urls.json()["urls"]]


def known_items(
    root: Path, base: str, urls: list[str], items: int, seed: int
) -> list[tuple[str, str]]:
    """(page URL, sentence) pairs: one sentence per page that no other crawled page contains."""
    texts = {}
    for url in urls:
        path = root / url.removeprefix(base + "/").split("#")[0]
        if path.is_file():
            texts[url] = path.read_bytes()
    plain = {
        url: " ".join(lxml_html.fromstring(d).text_content().split()) for url, d in texts.items()
    }
    rng = random.Random(seed)
    chosen = []
    for url in rng.sample(sorted(texts), len(texts)):
        candidates = [
            s
            for s in body_sentences(texts[url])
            if not any(s in other for u, other in plain.items() if u != url)
        ]
        if candidates:
            chosen.append((url, rng.choice(candidates)))
        if len(chosen) == items:
            break
    return chosen


def evaluate(
    client: httpx.Client, pairs: list[tuple[str, str]]
) -> tuple[float, float, float, list[str]]:
    hits1 = hits3 = 0
    reciprocal = 0.0
    misses = []
    for url, sentence in pairs:
        chunks = client.post("/knowledge/query", json={"query": sentence, "k": 10}).json()["chunks"]
        pages = [c["url"] for c in chunks]
        rank = pages.index(url) + 1 if url in pages else None
        hits1 += rank == 1
        hits3 += rank is not None and rank <= 3
        reciprocal += 1 / rank if rank else 0.0
        if rank != 1:
            misses.append(f"  rank {rank}: {url} <- {sentence[:90]!r} (first: {pages[:1]})")
    n = len(pairs)
    return hits1 / n, hits3 / n, reciprocal / n, misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", nargs="+", default=list(SITES), choices=list(SITES))
    parser.add_argument("--pages", type=int, default=150, help="crawled per site")
    parser.add_argument("--items", type=int, default=100, help="known items per site")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument(
        "--variants",
        nargs="*",
        default=[""],
        metavar="ENV",
        help="settings to compare on the same crawl, each 'LORE_X=1,LORE_Y=2' ('' for the "
        "defaults): lore serve starts again on the crawled data with each",
    )
    args = parser.parse_args()
    key = f"lore_known-items-{secrets.token_hex(8)}"
    for name in args.sites:
        root, index = SITES[name]
        if not root.is_dir():
            print(f"{name}: {root} is not installed (scripts/system-deps); skipped")
            continue
        server, base = serve_directory(root)
        auth = {"Authorization": f"Bearer {key}"}
        try:
            with tempfile.TemporaryDirectory() as tmp:
                data = Path(tmp) / "data"
                with (
                    lore_serve(data, {"LORE_AUTH__BOOTSTRAP_KEY": key}) as (api, _),
                    httpx.Client(base_url=api, headers=auth, timeout=120) as client,
                ):
                    urls = crawl(client, f"{base}/{index}", args.pages)
                pairs = known_items(root, base, urls, args.items, args.seed)
                for variant in args.variants:
                    env = dict(kv.split("=", 1) for kv in variant.split(",") if kv)
                    with (
                        lore_serve(data, {"LORE_AUTH__BOOTSTRAP_KEY": key, **env}) as (api, _),
                        httpx.Client(base_url=api, headers=auth, timeout=120) as client,
                    ):
                        hit1, hit3, mrr, misses = evaluate(client, pairs)
                    print(
                        f"{name}{f' [{variant}]' if variant else ''}: {len(pairs)} known items "
                        f"from {len(urls)} crawled pages: hit@1 {hit1:.2f}, hit@3 {hit3:.2f}, "
                        f"MRR {mrr:.3f} (targets: 0.95, 1.00)",
                        flush=True,
                    )
                    if args.show_misses:
                        print("\n".join(misses), flush=True)
        finally:
            server.shutdown()


if __name__ == "__main__":
    main()
