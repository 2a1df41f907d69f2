"""The benchmark script still runs (it prints numbers; no timing is asserted here)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

# each starts benchmark processes that build repositories and runs: kept out of the quick suite
pytestmark = pytest.mark.bench
BENCH = Path(__file__).resolve().parents[1] / "bench" / "run.py"


def test_bench_quick_overhead_prints_its_table() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--only", "overhead"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "git floor ms" in done.stdout and "last bucket" in done.stdout
    assert "Targets of issue 36, this tree" in done.stdout, done.stdout
    assert " of 2 met" in done.stdout, done.stdout  # the worst run length, and the growth


@pytest.mark.parametrize(
    "beside", [["--reference", str(BENCH.parents[1] / "src")], ["--against", "HEAD"]]
)
def test_bench_overhead_beside_a_reference_prints_each_tree_per_bucket(beside: list[str]) -> None:
    """`--reference SRC` runs the overhead section on both trees in alternating rounds, each
    in its own process (here the reference is this tree's own source); `--against REV`
    unpacks a commit of the repository to serve as one."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--only", "overhead", *beside],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Overhead beside references (2 rounds;" in done.stdout, done.stdout
    lines = done.stdout.splitlines()
    assert sum(" this tree " in line for line in lines) == 3, done.stdout  # 3 quick buckets
    assert sum(" ref " in line for line in lines) == 3, done.stdout
    assert " of 1 met" in done.stdout, done.stdout  # this tree's worst run length


def test_bench_against_a_commit_that_is_not_there_says_so() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--only", "cli", "--against", "no-such-rev"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "--against no-such-rev: no such commit in" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


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


# under CI the dev extra brings ioh: a missing ioh is a failure there, not a skip
needs_ioh = pytest.mark.skipif(
    importlib.util.find_spec("ioh") is None and os.environ.get("CI") != "true",
    reason="ioh is not installed (pip install ioh, or the dev extra)",
)


@needs_ioh
def test_the_bbob_bench_compares_strategies_with_and_without_lanes() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH.parent / "bbob.py"), "--functions", "3", "--instances", "1",
         "--seeds", "1", "--iterations", "2", "--dimension", "2", "--lanes", "2"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "frontier+explore    multimodal       1" in out, out
    assert "greedy 2 lanes      multimodal       1" in out, out
    assert "frontier 2 lanes    multimodal       1" in out, out  # the frontier runs with lanes
    assert "load average before" in out and "target multimodal: " in out, out


@needs_ioh
def test_the_bbob_model_gives_the_figures_of_the_cli_runs() -> None:
    """--model replays the runs in memory: trusted only while it agrees with the CLI, here on
    a grid where the frontier (and its plateau explore) leaves greedy's path."""
    grid = ["--functions", "15", "--instances", "1", "--seeds", "1", "--iterations", "8",
            "--dimension", "2", "--lanes", "0", "--runs"]  # fmt: skip
    runs = {}
    for mode in ([], ["--model"]):
        done = subprocess.run(
            [sys.executable, str(BENCH.parent / "bbob.py"), *grid, *mode],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs[bool(mode)] = [line for line in done.stdout.splitlines() if line.startswith("run ")]
    assert runs[True] == runs[False]
    best = {line.split()[4]: line.split("best@8")[1] for line in runs[True]}
    assert len(best) == 3 and best["frontier"] != best["greedy"], runs[True]


def _bbob() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bbob_bench", BENCH.parent / "bbob.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([(0, 9.0), (1, 5.0), (2, 7.0), (3, 1.0)], {1: 5.0, 2: 5.0, 3: 1.0}),
        ([(0, 9.0), (1, None), (2, 8.0), (3, None)], {1: 9.0, 2: 8.0, 3: 8.0}),  # failed runs
        ([(0, 2.0), (1, 3.0), (2, 4.0), (3, 5.0)], {1: 2.0, 2: 2.0, 3: 2.0}),  # baseline best
    ],
)
def test_best_at_n_is_the_best_score_of_the_baseline_and_first_n_iterations(
    scores: list[tuple[int, float | None]], expected: dict[int, float]
) -> None:
    iterations = [{"iteration": i, "evaluator": {"score": s}} for i, s in scores]
    assert _bbob().best_at(iterations, (1, 2, 3)) == expected


@pytest.mark.parametrize(
    ("multimodal", "quartiles", "met"),
    [
        (True, (0.2, 0.5, 0.9), True),
        (True, (0.9, 1.0, 1.2), False),  # a tie is not better
        (False, (0.8, 1.3, 1.5), True),  # the IQR holds 1: within noise
        (False, (1.2, 1.3, 1.5), False),
        (False, (0.5, 0.95, 0.97), True),  # median within 10 %
    ],
)
def test_the_targets_are_judged_on_frontiers_ratio_to_greedy(
    multimodal: bool, quartiles: tuple[float, float, float], met: bool
) -> None:
    bbob = _bbob()
    (line,) = bbob.verdict([bbob.Row("frontier", multimodal, 3, {100: quartiles})], 100)
    assert (": MET" in line) == met, line


def test_the_summary_counts_the_pairs_a_variant_wins_against_greedy() -> None:
    bbob = _bbob()
    greedy, frontier = bbob.Variant("greedy", "greedy"), bbob.Variant("frontier", "frontier")
    found = {0: (4.0, 2.0), 1: (4.0, 4.0), 2: (4.0, 8.0)}  # seed -> (greedy's, frontier's)
    outcomes = [
        bbob.Outcome(bbob.Job(3, 1, seed, variant), {100: best})
        for seed, pair in found.items()
        for variant, best in zip((greedy, frontier), pair, strict=True)
    ]
    rows = bbob.summary(outcomes, ["greedy", "frontier"], (100,))
    multimodal = {row.variant: row for row in rows if row.multimodal}
    assert (multimodal["frontier"].pairs, multimodal["frontier"].wins) == (3, 1)  # a tie: no win
    assert multimodal["frontier"].at[100][1] == 1.0


def test_the_lanes_bench_times_sleep_bound_lanes_in_the_default_sandbox() -> None:
    """It broke unnoticed once: its agent's log lies outside the repository, which the box
    the runs default to hides."""
    done = subprocess.run(
        [sys.executable, str(BENCH.parent / "lanes.py"), "--quick", "--no-demo", "--no-ray",
         "--rounds", "1", "--agent", "0.1"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "load average" in done.stdout


@pytest.mark.parametrize(
    ("rows", "count"),
    [
        # greedy: no parents recorded, nothing off the best
        ([(0, "baseline", 9.0, "r", None), (1, "keep", 5.0, "a", None)], 0),
        # a frontier: 2 starts from the best (a), 3 from the root after a was kept
        ([(0, "baseline", 9.0, "r", None), (1, "keep", 5.0, "a", "r"),
          (2, "discard", 7.0, "x", "a"), (3, "keep", 8.0, "b", "r"), (4, "discard", 6.0, "y", "b")],
         2),
    ],
)  # fmt: skip
def test_off_best_counts_the_sessions_started_from_a_parent_that_was_not_the_best(
    rows: list[tuple[int, str, float, str, str | None]], count: int
) -> None:
    iterations = [
        {"iteration": i, "decision": d, "evaluator": {"score": s}, "candidate_commit": c}
        | ({"parent": p} if p else {})
        for i, d, s, c, p in rows
    ]
    assert _bbob().off_best(iterations) == count
