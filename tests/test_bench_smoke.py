"""The benchmark script still runs (it prints numbers; no timing is asserted here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "run.py"


def test_bench_quick_overhead_prints_its_table() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--only", "overhead"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "git floor ms" in done.stdout and "last bucket" in done.stdout
