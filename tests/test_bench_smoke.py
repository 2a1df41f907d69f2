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


def test_search_latency_bench_compares_every_engine_on_one_tree() -> None:
    script = BENCH.parent / "search_latency.py"
    done = subprocess.run(
        [sys.executable, str(script), "--files", "30", "--lines", "20", "--runs", "1", "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    import json

    rows = json.loads(done.stdout)["queries"]
    assert rows and all(r["same_answer"] for r in rows), rows
    assert {"ripgrep", "git_grep", "python", "plain_rg", "python/ripgrep"} <= set(rows[0])


def test_the_end_to_end_trust_bench_prints_both_rules() -> None:
    script = BENCH.parent / "trust_e2e.py"
    done = subprocess.run(
        [sys.executable, str(script), "--seeds", "1", "--iterations", "2"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "today (mode: single)" in done.stdout and "noise-aware default" in done.stdout
