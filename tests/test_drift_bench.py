"""bench/drift.py still runs: both rules on every noise model (tiny sizes: no figure asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "drift.py"


def test_the_drift_bench_prints_every_model_for_both_rules() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--seeds", "2", "--iterations", "4"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for model in ("gaussian", "step", "ramp", "student-t 3", "5 % outliers", "load on/off"):
        assert f"{model} " in done.stdout
    assert "timed load " in done.stdout  # bench/timed_workload.py's load, in miniature
    assert "pooled (before)" in done.stdout and "blocked (default)" in done.stdout
    assert "deterministic evaluator: 1.00 evaluations per iteration" in done.stdout
