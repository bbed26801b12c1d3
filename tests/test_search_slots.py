"""How many searches `lore serve` computes at once: bounded to the cores where the embedded
shard (which holds the GIL while it searches) answers, two per core where it answers from a
process of its own, wide where a Qdrant server does."""

from __future__ import annotations

import os
from pathlib import Path

from api import Settings
from api.app import search_concurrency


def test_search_slots_follow_the_store(tmp_path: Path) -> None:
    cores = len(os.sched_getaffinity(0))
    assert search_concurrency(Settings(data_dir=tmp_path)) == cores  # the shard in this process
    assert search_concurrency(Settings(data_dir=tmp_path), store_process=True) == 2 * cores
    assert search_concurrency(Settings(data_dir=tmp_path, qdrant={"url": ":memory:"})) == cores  # type: ignore[arg-type]
    served = Settings(data_dir=tmp_path, qdrant={"url": "http://qdrant:6333"})  # type: ignore[arg-type]
    assert search_concurrency(served) == 40
    chosen = Settings(data_dir=tmp_path, search={"concurrency": 3})  # type: ignore[arg-type]
    assert search_concurrency(chosen) == 3
