"""SPA evaluation: Swagger UI (swagger-ui-dist@5.35.0 from npm) over the six OpenAPI specs in
../shared/data/spa, served on 127.0.0.1, captured by lore in headless Chromium.

For each spec, each operation counts as retrievable when a query for it (its summary, method
and path, restricted to the page) returns the operation's description in its top 8 chunks, and
a query for each of its parameters (the same words plus "parameter <name>") that name. Reported
after phase 1 alone (the page at load: Swagger UI renders an operation's details only after a
click on its summary) and after exploring (target 100 %), with the actions taken and the
seconds. An operation with no description whose parameters all appear in its path is already
visible at load, so the descriptions are also counted on their own.

    .venv/bin/python benchmarks/spa_eval.py [--data ../shared/data/spa] [--specs a.yaml,b.yaml]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from _common import DATA, serve_directory

from api import Lore, Settings
from api.jobs import run_job
from crawl import canonicalize
from retrieval import ChunkFilter

SWAGGER_UI = "swagger-ui-dist@5.35.0"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def site_root(data: Path, work: Path) -> Path:
    """A copy of the wrapper and specs with swagger-ui-dist installed beside them (the shared
    data directory is read-only)."""
    root = work / "spa"
    shutil.copytree(data / "sites", root / "sites")
    shutil.copytree(data / "specs", root / "specs")
    cache = Path.home() / ".cache" / "lore-bench" / "swagger-ui"
    if not (cache / "node_modules" / "swagger-ui-dist" / "swagger-ui-bundle.js").exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"installing {SWAGGER_UI} from npm into {cache}")
        subprocess.run(
            [
                "npm",
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(cache),
                SWAGGER_UI,
            ],
            check=True,
        )
    shutil.copytree(cache / "node_modules", root / "node_modules")
    return root


def operations(spec_path: Path) -> list[dict[str, Any]]:
    """Each operation with what must become retrievable: description and parameter names."""
    spec = yaml.safe_load(spec_path.read_text())
    out = []
    for path, item in (spec.get("paths") or {}).items():
        shared = item.get("parameters") or []
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            params = [p.get("name") for p in shared + (op.get("parameters") or []) if "name" in p]
            out.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary") or op.get("operationId") or "",
                    "description": op.get("description") or "",
                    "parameters": [str(p) for p in params],
                }
            )
    return out


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[`*_>#|]", " ", text).split()).lower()


def _found(lore: Lore, page: str, query: str) -> str:
    hits = lore.query(query, 8, ChunkFilter(urls=(page,)), include_public=False)
    return _norm(" ".join(" ".join(h.chunk.heading_path) + " " + h.chunk.text for h in hits))


def description_found(lore: Lore, page: str, op: dict[str, Any]) -> bool:
    about = f"{op['summary']} {op['method']} {op['path']}"
    return _norm(op["description"])[:80] in _found(lore, page, about)


def retrievable(lore: Lore, page: str, op: dict[str, Any]) -> bool:
    """The description is in the top 8 for a query naming the operation, and each parameter
    name in the top 8 for a query naming the operation and that parameter."""
    about = f"{op['summary']} {op['method']} {op['path']}"
    if op["description"] and not description_found(lore, page, op):
        return False
    return all(
        re.search(rf"\b{re.escape(p.lower())}\b", _found(lore, page, f"{about} parameter {p}"))
        for p in op["parameters"]
    )


def capture(lore: Lore, url: str, explore: bool, max_actions: int) -> dict[str, Any]:
    job = lore.submit_capture(url, explore=explore, max_actions=max_actions, run_recipe=False)
    started = time.perf_counter()
    done = asyncio.run(run_job(lore, job.id))
    if done.status != "completed":
        raise SystemExit(f"capture of {url} {done.status}: {done.error}")
    return {
        "seconds": time.perf_counter() - started,
        "counts": done.counts,
        "message": done.message,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA / "spa")
    parser.add_argument("--specs", default="", help="comma-separated spec files; default: all")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    expected = json.loads((args.data / "specs" / "expected-operations.json").read_text())
    names = [s for s in args.specs.split(",") if s] or sorted(expected)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = site_root(args.data, Path(tmp))
        server, base = serve_directory(root)
        print(f"Swagger UI served at {base}/sites/swagger-ui/index.html")
        print(
            f"{'spec':30} {'ops':>4} {'phase 1':>8} {'explored':>9} {'descriptions':>13} "
            f"{'actions':>8} {'s':>6}"
        )
        for name in names:
            ops = operations(root / "specs" / name)
            assert len(ops) == expected[name]["n_operations"], name
            url = f"{base}/sites/swagger-ui/index.html?spec={name}"
            settings = Settings(
                data_dir=Path(tmp) / f"lore-{name}",
                fetch={"allow_private_addresses": True},  # type: ignore[arg-type]
            )
            lore = Lore(settings)
            try:
                first = capture(lore, url, explore=False, max_actions=1)
                page = canonicalize(url)
                described = [op for op in ops if op["description"]]
                before = sum(retrievable(lore, page, op) for op in ops)
                desc_before = sum(description_found(lore, page, op) for op in described)
                explored = capture(lore, url, explore=True, max_actions=len(ops) * 3 + 20)
                after = sum(retrievable(lore, page, op) for op in ops)
                desc_after = sum(description_found(lore, page, op) for op in described)
            finally:
                lore.close()
            row = {
                "spec": name,
                "operations": len(ops),
                "phase1_retrievable": before / len(ops),
                "explored_retrievable": after / len(ops),
                "described": len(described),
                "phase1_descriptions": desc_before,
                "explored_descriptions": desc_after,
                "actions": explored["counts"].get("actions", 0),
                "seconds": round(explored["seconds"], 1),
                "phase1_seconds": round(first["seconds"], 1),
                "message": explored["message"],
            }
            results.append(row)
            descriptions = f"{desc_before}->{desc_after}/{len(described)}"
            print(
                f"{name:30} {len(ops):>4} {before / len(ops):>8.0%} {after / len(ops):>9.0%} "
                f"{descriptions:>13} {row['actions']:>8} {row['seconds']:>6}"
            )
        server.shutdown()
    total = sum(r["operations"] for r in results)
    share = sum(r["explored_retrievable"] * r["operations"] for r in results) / total
    phase1 = sum(r["phase1_retrievable"] * r["operations"] for r in results) / total
    described = sum(r["described"] for r in results)
    print(
        f"all {total} operations: phase 1 {phase1:.0%}, explored {share:.0%} (target 100 %); "
        f"descriptions retrievable: phase 1 {sum(r['phase1_descriptions'] for r in results)}"
        f"/{described}, explored {sum(r['explored_descriptions'] for r in results)}/{described}"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
