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


def test_the_trust_benches_print_ranges_over_seed_sets_and_the_design_table() -> None:
    """bench/trust.py over two tiny seed sets prints each figure's range; bench/trust_designs.py
    checks its simulator against the real decision code and prints the lower bound and a row
    for every design (tiny sizes: the numbers themselves are not asserted)."""
    trust = subprocess.run(
        [sys.executable, str(BENCH.parent / "trust.py"), "--seeds", "3", "--seed-sets", "2",
         "--iterations", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert trust.returncode == 0, trust.stderr
    assert "seeds 0-2:" in trust.stdout and "exact by quadrature" in trust.stdout, trust.stdout
    designs = subprocess.run(
        [sys.executable, str(BENCH.parent / "trust_designs.py"), "--seeds", "3", "--seed-sets",
         "2", "--iterations", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert designs.returncode == 0, designs.stderr
    out = designs.stdout
    assert "the same decisions, readings and reported values (15 decisions)" in out, out
    assert "a = 2.195, b = -0.966" in out and "NS no survival selection" in out, out


def test_the_plateau_bench_prints_evaluations_until_the_stop() -> None:
    script = BENCH.parent / "plateau.py"
    done = subprocess.run(
        [sys.executable, str(script), "--plateaus", "2", "--lanes", "0", "--json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    import json

    (row,) = json.loads(done.stdout)["rows"]
    assert row["evaluations"] == 2 and row["within_target"], row
    assert row["stop_reason"] == "plateau (no significant improvement in 2 iterations)"


def test_the_screen_bench_prints_both_variants() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH.parent / "screen.py"), "--seeds", "1", "--iterations", "1"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "without screen" in done.stdout and "with screen" in done.stdout


def test_the_sandbox_bench_prints_each_child_beside_none_with_ratios_and_load() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--only", "sandbox"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "load average" in out, out
    for child in ("session", "evaluation"):
        rows = {line.split()[1] for line in out.splitlines() if line.startswith(child)}
        assert rows == {"none", "bwrap", "ratio", "cost"}, out
