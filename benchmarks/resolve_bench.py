"""Resolve latency (query embedding included) over a few hundred queries.

    python benchmarks/resolve_bench.py [--corpus DIR] [--pages N] [--queries N] [--scale N]

Indexes N pages (as ingest_bench does), then asks `resolve` questions made from sentences of
the indexed pages, in-process and over HTTP against a real uvicorn server on 127.0.0.1.
With --scale, the store is then filled up to that many chunks with copies of the real chunks
(same texts, their real vectors with a little noise, spread over 20 domains and 3 tenants):
embedding 100,000 chunks takes over an hour on this machine, searching them does not.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
from _common import add_embedding_option, default_corpus, html_files, page_source, summary_ms

from api import Lore, Settings, create_app
from api.app import serve_in_thread
from api.auth import Authenticator
from ingest import IngestError
from retrieval import Chunk, ChunkFilter, chunk_id, document_id

DOMAINS = [f"site{i}.bench.test" for i in range(19)]


def fill(lore: Lore, target: int, rng: random.Random) -> None:
    """Copies of the real chunks, with their real vectors perturbed, up to `target` chunks."""
    real = lore.store.scroll(ChunkFilter(tenant_ids=(lore.tenant,)), 10**6)
    vectors = np.array(lore.embedder.embed([c.search_text for c in real], batch_size=64))
    total, copy = len(real), 0
    while total < target:
        copy += 1
        batch = []
        noise = np.random.default_rng(copy).normal(0, 0.02, vectors.shape)
        moved = vectors + noise
        moved /= np.linalg.norm(moved, axis=1, keepdims=True)
        for chunk, vector in zip(real, moved, strict=True):
            if total >= target:
                break
            tenant = ("public", "other", lore.tenant)[copy % 3]
            url = f"http://{rng.choice(DOMAINS)}/copy{copy}/{chunk.url.rsplit('/', 1)[-1]}"
            doc = document_id(tenant, url)
            batch.append(
                Chunk(
                    **{
                        **chunk.__dict__,
                        "id": chunk_id(tenant, doc, "static", None, chunk.content_hash, copy),
                        "tenant_id": tenant,
                        "document_id": doc,
                        "url": url,
                        "domain": url.split("/")[2],
                        "vector": vector.tolist(),
                    }
                )
            )
            total += 1
        lore.store.upsert(batch)


def build(lore: Lore, corpus: Path, pages: int) -> None:
    prepared = []
    for path in html_files(corpus, pages):
        try:
            prepared.append(lore.prepare(page_source(lore.tenant, corpus, path)))
        except IngestError:
            continue
    lore.index(prepared)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--scale", type=int, default=0, help="fill the store up to N chunks")
    add_embedding_option(parser)
    args = parser.parse_args()
    rng = random.Random(7)

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), embedding={"backend": args.embedding})  # type: ignore[arg-type]
        lore = Lore(settings)
        build(lore, args.corpus, args.pages)
        chunks = lore.store.scroll(ChunkFilter(tenant_ids=(lore.tenant,)), 10**6)
        if args.scale:
            t = time.perf_counter()
            fill(lore, args.scale, rng)
            print(f"filled to {args.scale} chunks in {time.perf_counter() - t:.0f} s")
        sample = rng.sample(chunks, min(args.queries, len(chunks)))
        queries = [(c.url, " ".join(c.text.split()[:12])) for c in sample]
        stored = lore.store.count(ChunkFilter(include_superseded=True))
        print(
            f"index: {stored} chunks ({len(chunks)} real from {args.pages} pages of "
            f"{args.corpus}); embedding: {lore.embedder.name}"
        )

        lore.resolve(*queries[0], args.k)  # warm-up
        timings = []
        for url, text in queries:
            t = time.perf_counter()
            lore.resolve(url, text, args.k)
            timings.append(time.perf_counter() - t)
        print(f"resolve in-process: {summary_ms(timings)}")

        url, server = serve_in_thread(create_app(lore.settings, lore=lore))
        port = int(url.rsplit(":", 1)[1])
        timings = []
        # The key's own limit (a million a minute) keeps the rate limiter out of the timing.
        key, _ = Authenticator(lore.catalog, 600).create_key(lore.tenant, "bench", rate_limit=10**6)
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        ) as client:
            client.get("/knowledge/resolve", params={"url": queries[0][0], "query": "warm"})
            for url, text in queries:
                t = time.perf_counter()
                response = client.get(
                    "/knowledge/resolve", params={"url": url, "query": text, "k": args.k}
                )
                timings.append(time.perf_counter() - t)
                response.raise_for_status()
        server.should_exit = True
        print(f"resolve over HTTP:  {summary_ms(timings)}")
        lore.close()


if __name__ == "__main__":
    main()
