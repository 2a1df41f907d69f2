"""Benchmarks: supervisor overhead vs the git floor, CLI start-up, end-to-end throughput.

    python3 dev.py bench            # full run (a few minutes)
    python3 dev.py bench --quick    # smaller buckets and fewer samples
    python3 dev.py bench --only trust   # keep decisions under a noisy evaluator
    python3 dev.py bench --only cli     # start-up of --help, hooks, status, mcp vs import click
    python3 dev.py bench --only ray     # a task on the Ray executor beside the local one
    python3 dev.py bench --only lane-history   # a lane's history at 10,000 iterations
    python3 dev.py bench --only trust-e2e   # the same end to end through `autoresearch run`
    python3 dev.py bench --only trust-designs   # which decision designs could meet the targets
    python3 dev.py bench --only drift   # keep decisions on a drifting, heavy-tailed machine
    python3 dev.py bench --only sandbox   # a session and an evaluation in bwrap beside none

Every number is printed beside a reference measured in the same run on the same machine, so
ratios mean something across machines. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cli_start  # bench/cli_start.py: the light commands beside `import click`
import drift  # bench/drift.py: keeps and reports under drift and heavy tails
import lanes  # bench/lanes.py: throughput of run --lanes K, evaluations never overlapping
import ray_cost  # bench/ray_cost.py: a task on the Ray executor beside the local one
import sandbox  # bench/sandbox.py: a session and an evaluation in the OS sandbox beside none
import trust  # bench/trust.py: keep decisions under noise
import trust_designs  # bench/trust_designs.py: the designs and bounds behind the targets
import trust_e2e  # bench/trust_e2e.py: the same through `autoresearch run`

from autoresearch import git
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.evaluate import EvaluationRecord
from autoresearch.journal import runs
from autoresearch.journal.runs import IterationRecord
from autoresearch.noise import Role
from autoresearch.states import DecisionKind, EvalPurpose, EvalStatus, IterationKind, IterationState
from autoresearch.supervisor import sync
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.loop import RunHistory, history
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import step

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
SANDBOX = """---
evaluator:
  command: cat score.json
  format: json
tune:
  file: params.sh
  parameters:
    X: {min: 0, max: 100, type: int}
    Y: {min: 0, max: 100, type: int}
---
bench
"""
TUNED_SANDBOX = """---
evaluator:
  command: . ./params.sh; echo "METRIC loss=$(( (X-42)*(X-42) + (Y-7)*(Y-7) ))"
  format: metric
  metric: loss
  direction: lower
tune:
  file: params.sh
  seed: 3
  parameters:
    X: {min: 0, max: 100, type: int}
    Y: {min: 0, max: 100, type: int}
---
bench
"""


def sh(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(root: Path, sandbox: str) -> Path:
    root.mkdir(parents=True)
    sh(root, "git", "init", "-q", "-b", "main")
    (root / "score.json").write_text('{"pass": true, "score": 0}\n')
    (root / "params.sh").write_text("X=10\nY=90\n")
    (root / "missions/bench").mkdir(parents=True)
    (root / "missions/bench/mission.md").write_text("bench\n")
    (root / "missions/bench/sandbox.md").write_text(sandbox)
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-qm", "bench")
    return root / "missions/bench"


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


# --- 1. supervisor overhead per iteration ---------------------------------------------------


def synthesize(h: RunHandle, upto: int) -> None:
    """Bring the run to `upto` recorded iterations with realistic journal rows and views: each
    a discarded candidate of its own commit with one reading, as a run with a deterministic
    evaluator records it (every view reports from the readings: they must be there)."""
    start = h.run.iteration + 1
    if upto < start:
        return
    kept = h.run.last_kept_commit
    now = utc_now_iso()
    record = {"status": "pass", "pass": True, "score": -1.0, "exit_code": 0,
              "timed_out": False, "duration_ms": 3, "ran_at": now, "log_file": "x.log"}  # fmt: skip
    reading = EvaluationRecord(command="true", format=h.evaluator.format, ran_at=now, duration_ms=3,
        status=EvalStatus.PASS, passed=True, score=-1.0, exit_code=0, timed_out=False,
        stdout="", stderr="", log_file="x.log")  # fmt: skip
    with h.journal.tx() as conn:
        for n in range(start, upto + 1):
            candidate = hashlib.sha1(f"synthetic {n}".encode()).hexdigest()  # discarded: gone
            it = IterationRecord(
                run_id=h.run_id, iteration=n, kind=IterationKind.ITERATION,
                state=IterationState.APPLIED,
                keep_policy=h.run.keep_policy, created_at=now, updated_at=now,
                candidate_status="candidate", base_commit=kept, candidate_commit=candidate,
                description=f"synthetic iteration {n}", decision=DecisionKind.DISCARD,
                decision_reason="score did not improve", kept_commit=kept,
                evaluator=StoredEvaluation({k: v for k, v in record.items() if k != "ran_at"}),
            )  # fmt: skip
            runs.insert_iteration(conn, it)
            runs.insert_evaluation(
                conn, h.run_id, n, EvalPurpose.ITERATION, reading, Role.CANDIDATE, candidate
            )
        runs.update_run(conn, h.run_id, iteration=upto)
    h.refresh()
    sync.rebuild_views(h)
    sync.write_placeholder(h)


def scripted_candidate(h: RunHandle, score: float) -> str:
    """What an agent does (not timed): change the tree, commit once, write the artifact."""
    (h.worktree / "score.json").write_text(json.dumps({"pass": True, "score": score}) + "\n")
    sh(h.worktree, "git", "commit", "-qam", f"score {score}")
    commit = sh(h.worktree, "git", "rev-parse", "HEAD")
    artifact: dict[str, object] = {"status": "candidate", "candidate_commit": commit,
                "base_commit": h.run.last_kept_commit, "description": f"score {score}",
                "notes": [], "created_at": utc_now_iso()}  # fmt: skip
    h.paths.candidate.write_text(json.dumps(artifact))
    return commit


def git_floor(h: RunHandle, base: str, commit: str, discard: bool) -> float:
    """The git commands one iteration needs, timed alone: resolve refs, check that the
    candidate is on the run branch and descends from the kept commit; on discard also the
    reset-safety status and the reset."""
    t0 = time.perf_counter()
    git.resolve_commits(h.worktree, [base, commit, "HEAD"])
    git.head_branch(h.worktree)
    git.is_ancestor(h.worktree, base, commit)
    if discard:
        git.status(h.worktree)
        git.reset_hard(h.worktree, base)
    return time.perf_counter() - t0


def bench_overhead(buckets: list[int], samples: int) -> list[tuple[int, float, float]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="ar-bench-") as tmp:
        mission = make_repo(Path(tmp) / "repo", SANDBOX)
        with prepare(mission, run_tag="bench") as h:
            for bucket in buckets:
                synthesize(h, bucket - samples // 2)
                overheads, floors = [], []
                for i in range(samples):
                    kept = h.run.last_kept_score or 0.0
                    keep = i % 2 == 0
                    base = h.run.last_kept_commit or ""
                    commit = scripted_candidate(h, kept + 1 if keep else kept - 1)
                    t0 = time.perf_counter()
                    result = step(h)
                    elapsed = time.perf_counter() - t0
                    evaluator_s = (result.evaluator.duration_ms if result.evaluator else 0) / 1000
                    overheads.append(elapsed - evaluator_s)
                    floors.append(git_floor(h, base if not keep else commit, commit, not keep))
                rows.append((h.run.iteration, median_ms(overheads), median_ms(floors)))
                print(f"  bucket {bucket}: done", file=sys.stderr)
    return rows


def print_overhead(rows: list[tuple[int, float, float]]) -> None:
    print("\nSupervisor overhead per iteration (excluding agent and evaluator time)")
    print(f"{'iteration':>10} {'overhead ms':>12} {'git floor ms':>13} {'ratio':>7}")
    for iteration, overhead, floor in rows:
        print(f"{iteration:>10} {overhead:>12.2f} {floor:>13.2f} {overhead / floor:>7.2f}")
    growth = rows[-1][1] / rows[0][1]
    worst = max(o / f for _, o, f in rows)
    print(f"target: overhead <= 2.0x the git floor      worst bucket: {worst:.2f}x")
    print(f"target: last bucket <= 1.5x the first        measured: {growth:.2f}x")


def bench_lane_history(size: int, samples: int) -> None:
    """What a lane's session launch pays to ship the run's history at `size` iterations: the
    whole history read anew (what each launch did before `RunHistory`) beside the cached one
    after each new iteration (one synthesized iteration recorded between two launches)."""
    with tempfile.TemporaryDirectory(prefix="ar-bench-") as tmp:
        mission = make_repo(Path(tmp) / "repo", SANDBOX)
        with prepare(mission, run_tag="history") as h:
            synthesize(h, size)
            anew, cached = [], []
            past = RunHistory(h)
            t0 = time.perf_counter()
            first = past.snapshot()
            cold = time.perf_counter() - t0
            for n in range(samples):
                synthesize(h, size + n + 1)
                t0 = time.perf_counter()
                full = tuple(history(h.context, 0))
                anew.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                got = past.snapshot()
                cached.append(time.perf_counter() - t0)
                assert got == full, "the cached history differs from the journal's"
    print(f"\nA lane's session launch: the run's history ({size} iterations, {samples} launches)")
    print(f"{'read anew ms':>13} {'cached ms':>10} {'first read ms':>14} {'ratio':>7}")
    ratio = median_ms(anew) / median_ms(cached)
    print(f"{median_ms(anew):>13.2f} {median_ms(cached):>10.2f} {cold * 1000:>14.2f} "
          f"{ratio:>7.1f}   ({len(first)} iterations at first)")  # fmt: skip


# --- 2. CLI start-up ------------------------------------------------------------------------


def bench_cli(repeat: int) -> None:
    """bench/cli_start.py in a repository with a run of 1,000 recorded iterations."""
    with tempfile.TemporaryDirectory(prefix="ar-bench-") as tmp:
        mission = make_repo(Path(tmp) / "repo", SANDBOX)
        with prepare(mission, run_tag="startup") as h:
            synthesize(h, 1000)
            run_id = h.run_id
        cli_start.run(mission.parent.parent, run_id, repeat)


# --- 3. end-to-end throughput ---------------------------------------------------------------


def bench_throughput(iterations: int) -> None:
    exe = shutil.which("autoresearch") or str(Path(sys.executable).parent / "autoresearch")
    with tempfile.TemporaryDirectory(prefix="ar-bench-") as tmp:
        mission = make_repo(Path(tmp) / "repo", TUNED_SANDBOX)
        repo = mission.parent.parent
        t0 = time.perf_counter()
        done = subprocess.run(
            [exe, "run", str(mission), "--agent", "offline", "--max-iterations",
             str(iterations), "--max-noops", "0", "--json"],
            cwd=repo, capture_output=True, text=True, check=True,
        )  # fmt: skip
        wall = time.perf_counter() - t0
        summary = json.loads(done.stdout)
        ledger = json.loads(Path(summary["ledger_file"]).read_text())["entries"][1:]
        evaluator_s = sum((e["evaluator"] or {}).get("duration_ms", 0) for e in ledger) / 1000
        agent_s = sum((e.get("agent") or {}).get("duration_ms", 0) for e in ledger) / 1000
    per_minute = iterations / wall * 60
    print(f"\nEnd-to-end `run` with the offline agent and a shell evaluator ({iterations} its)")
    print(f"iterations per minute: {per_minute:.0f}   wall {wall:.1f} s "
          f"(evaluator {evaluator_s:.1f} s, agent {agent_s:.1f} s, "
          f"supervisor and start-up {wall - evaluator_s - agent_s:.1f} s)")  # fmt: skip
    print(f"best loss {summary['best_score']} from baseline {summary['baseline_score']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small buckets, few samples")
    parser.add_argument(
        "--only",
        choices=[
            "overhead",
            "lane-history",
            "cli",
            "throughput",
            "trust",
            "trust-e2e",
            "trust-designs",
            "drift",
            "ray",
            "lanes",
            "sandbox",
        ],
        help="run one section",
    )
    args = parser.parse_args()
    os.environ.update(GIT_ENV)
    buckets = [10, 100, 1000] if args.quick else [10, 100, 1000, 10000]
    sections: dict[str, Callable[[], None]] = {
        "overhead": lambda: print_overhead(bench_overhead(buckets, 10 if args.quick else 30)),
        "lane-history": lambda: bench_lane_history(buckets[-1], 5 if args.quick else 20),
        "cli": lambda: bench_cli(3 if args.quick else 10),
        "throughput": lambda: bench_throughput(10 if args.quick else 60),
        "trust": lambda: trust.run(50 if args.quick else 200, 60, sets=1 if args.quick else 5),
        "trust-designs": lambda: trust_designs.report(
            50 if args.quick else 200, 1 if args.quick else 5
        ),
        "drift": lambda: drift.run(40 if args.quick else 200, 60),
        "ray": lambda: ray_cost.run(5 if args.quick else 20),
        "trust-e2e": lambda: trust_e2e.run(1 if args.quick else 5, 20 if args.quick else 60),
        "lanes": lambda: lanes.run(per_lane=3 if args.quick else 6),
        "sandbox": lambda: sandbox.run(5 if args.quick else 20),
    }
    for name, section in sections.items():
        if args.only in (None, name):
            section()


if __name__ == "__main__":
    main()
