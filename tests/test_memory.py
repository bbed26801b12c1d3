"""Freed memory goes back to the system (glibc): what a crawl's threads free page after page
would otherwise stay resident for the life of the process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from api.memory import _libc

pytestmark = pytest.mark.skipif(_libc() is None, reason="not glibc: nothing to give back")

# Blocks malloc serves from its heap (not mmap), every hundredth kept: the heap cannot shrink
# from its top, so without a trim the freed 190 MB stay resident.
PROGRAM = textwrap.dedent(
    """
    import sys, time
    from api.memory import MemoryTrimmer, give_back_freed_memory

    def rss_mb():
        status = open("/proc/self/status").read()
        return int(status.split("VmRSS:")[1].split()[0]) // 1024

    blocks = [bytes(2000) + bytes([i % 256]) for i in range(100_000)]
    kept = blocks[::100]
    del blocks
    freed = rss_mb()
    if sys.argv[1] == "thread":
        trimmer = MemoryTrimmer(interval_s=0.1).start()
        time.sleep(1.0)
        trimmer.stop()
    elif sys.argv[1] == "call":
        assert give_back_freed_memory()
    print(freed, rss_mb())
    """
)


def run(how: str) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, how],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    freed, after = done.stdout.split()
    return int(freed), int(after)


def test_freed_memory_stays_resident_without_a_trim() -> None:
    freed, after = run("none")
    assert after > 150 and after >= freed - 10, (freed, after)


@pytest.mark.parametrize("how", ["call", "thread"])
def test_a_trim_gives_freed_memory_back(how: str) -> None:
    freed, after = run(how)
    assert freed > 150, freed  # the blocks were freed but still resident
    assert after < freed - 120, (freed, after)
