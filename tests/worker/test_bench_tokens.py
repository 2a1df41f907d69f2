"""bench/worker_tokens.py still runs and prints its ratio (numbers, not a pass/fail test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench  # a bench run: kept out of the quick suite
BENCH = Path(__file__).resolve().parents[2] / "bench" / "worker_tokens.py"


def test_the_token_bench_prints_its_ratio() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--tasks", "2", "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert len(result["tasks"]) == 2 and result["ratio_worker_to_direct"] > 0
    assert result["direct_accepted_share"] == result["worker_accepted_share"] == 1.0
