"""How many stored chunks say what a site's frame says around every page (a skip link, "Edit
this page", "On this page", "Copy page", a generator's credit, a search launcher's shortcut),
in the knowledge bases `spa_eval.py --keep DIR` leaves.

    python benchmarks/frame_count.py DIR [DIR ...]

The phrases are the ones a survey of eight documentation apps' captures and crawls found
(2026-12-07, docs/measured.md); API references' knowledge bases (`lore-<app>-oai-*`) are left
out."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from spa_eval import lore_for

from retrieval import ChunkFilter

FRAME = re.compile(
    r"skip to (content|sidebar|main)|edit this page|generated using|powered by|on this page"
    r"|copy page|(ctrl|⌃|⌘)\W{0,3}k\b",
    re.I,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", type=Path, nargs="+")
    args = parser.parse_args()
    for root in args.dirs:
        for kept in sorted(root.glob("lore-*")):
            if "-oai-" in kept.name:
                continue
            lore = lore_for(root, kept.name.removeprefix("lore-"))
            try:
                chunks = lore.store.scroll(ChunkFilter(), 100_000)
                framed = sum(1 for c in chunks if FRAME.search(c.text))
            finally:
                lore.close()
            print(f"{root}  {kept.name:30} {len(chunks):5} chunks, {framed:4} saying the frame")


if __name__ == "__main__":
    main()
