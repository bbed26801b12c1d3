"""scripts/cpu-torch, which `make install` runs: it installs torch only when pip's dry-run
resolution has no CUDA package in it, and otherwise stops with how to get the CPU wheel. A
stand-in pip (a script that writes the resolution it is given) replaces the network."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fake_pip(tmp_path: Path, resolutions: list[list[str] | None]) -> tuple[Path, Path]:
    """A pip whose n-th dry run resolves to resolutions[n] (None: fails); installs are logged."""
    log = tmp_path / "calls.jsonl"
    script = tmp_path / "pip"
    script.write_text(
        f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
log = {str(log)!r}
calls = [json.loads(line) for line in open(log)] if __import__("os").path.exists(log) else []
open(log, "a").write(json.dumps(args) + "\\n")
if "--dry-run" in args:
    dry = sum(1 for c in calls if "--dry-run" in c)
    found = {resolutions!r}[dry]
    if found is None:
        sys.exit(1)
    report = args[args.index("--report") + 1]
    json.dump({{"install": [{{"metadata": {{"name": n}}}} for n in found]}}, open(report, "w"))
"""
    )
    script.chmod(0o755)
    return script, log


def run(pip: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cpu-torch"), str(pip), "2.13.0"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def installs(log: Path) -> list[list[str]]:
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return [c for c in calls if "--dry-run" not in c]


def test_pypi_only_resolves_to_cuda_packages_and_nothing_is_installed(tmp_path: Path) -> None:
    pip, log = fake_pip(tmp_path, [None, ["torch", "nvidia-cublas", "triton", "sympy"]])
    done = run(pip)
    assert done.returncode == 1
    assert "CUDA packages" in done.stderr and "download.pytorch.org/whl/cpu" in done.stderr
    assert installs(log) == []


def test_the_cpu_index_is_used_when_it_answers(tmp_path: Path) -> None:
    pip, log = fake_pip(tmp_path, [["torch", "sympy", "filelock"]])
    assert run(pip).returncode == 0
    [install] = installs(log)
    assert "torch==2.13.0" in install and "https://download.pytorch.org/whl/cpu" in install


def test_a_cpu_wheel_on_the_configured_index_is_installed(tmp_path: Path) -> None:
    pip, log = fake_pip(tmp_path, [None, ["torch", "sympy"]])
    assert run(pip).returncode == 0
    [install] = installs(log)
    assert install[:3] == ["install", "--quiet", "torch==2.13.0"] and "--index-url" not in install
