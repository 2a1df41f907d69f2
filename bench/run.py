"""Benchmarks: supervisor overhead vs the git floor, CLI start-up, end-to-end throughput.

    python3 dev.py bench            # full run (an hour or more: lanes, Ray and trust too)
    python3 dev.py bench --against HEAD~1   # cli, overhead and lanes beside the last commit
    python3 dev.py bench --quick    # smaller buckets and fewer samples
    python3 dev.py bench --only trust   # keep decisions under a noisy evaluator
    python3 dev.py bench --only cli     # start-up of --help, hooks, status, mcp vs import click
    python3 dev.py bench --only overhead --reference DIR/src   # the step beside another tree
    python3 dev.py bench --only ray     # a task on the Ray executor beside the local one
    python3 dev.py bench --only lane-history   # a lane's history at 10,000 iterations
    python3 dev.py bench --only trust-e2e   # the same end to end through `autoresearch run`
    python3 dev.py bench --only trust-designs   # which decision designs could meet the targets
    python3 dev.py bench --only drift   # keep decisions on a drifting, heavy-tailed machine
    python3 dev.py bench --only sandbox   # a session and an evaluation in bwrap beside none

Every number is printed beside a reference measured in the same run on the same machine, so
ratios mean something across machines. Nothing here is a pass/fail test. At the end, the
targets of issue 36 the sections measured are printed together (bench/targets.py): each with
its figure, its limit, the load average then, and whether this run met it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import cli_start  # bench/cli_start.py: the light commands beside `import click`
import drift  # bench/drift.py: keeps and reports under drift and heavy tails
import lanes  # bench/lanes.py: throughput of run --lanes K, evaluations never overlapping
import overhead_ab  # bench/overhead_ab.py: the overhead section beside reference trees
import ray_cost  # bench/ray_cost.py: a task on the Ray executor beside the local one
import sandbox  # bench/sandbox.py: a session and an evaluation in the OS sandbox beside none
import targets  # bench/targets.py: the targets, printed together at the end
import trust  # bench/trust.py: keep decisions under noise
import trust_designs  # bench/trust_designs.py: the designs and bounds behind the targets
import trust_e2e  # bench/trust_e2e.py: the same through `autoresearch run`

from autoresearch import git
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.evaluate import EvaluationRecord
from autoresearch.journal import runs
from autoresearch.noise import Role
from autoresearch.states import DecisionKind, EvalPurpose, EvalStatus, IterationKind, IterationState
from autoresearch.supervisor import sync
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.loop import RunHistory, history
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import step

# The overhead section also runs on older trees beside this one (`--reference`, `--against`):
# before 626d4be the iterations' records lived in journal/runs.py.
try:
    iteration_records: ModuleType = importlib.import_module(
        "autoresearch.journal.iteration_records"
    )
except ImportError:  # an older reference tree
    iteration_records = runs
IterationRecord = iteration_records.IterationRecord

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
            # a real run records each measured tree as it judges it: without one, the first
            # step of a bucket would look up every synthetic tree (novelty) and be timed so
            tree = hashlib.sha1(f"synthetic tree {n}".encode()).hexdigest()
            it = IterationRecord(
                run_id=h.run_id, iteration=n, kind=IterationKind.ITERATION,
                state=IterationState.APPLIED,
                keep_policy=h.run.keep_policy, created_at=now, updated_at=now,
                candidate_status="candidate", base_commit=kept, candidate_commit=candidate,
                candidate_tree=tree,
                description=f"synthetic iteration {n}", decision=DecisionKind.DISCARD,
                decision_reason="score did not improve", kept_commit=kept,
                evaluator=StoredEvaluation({k: v for k, v in record.items() if k != "ran_at"}),
            )  # fmt: skip
            iteration_records.insert_iteration(conn, it)
            runs.insert_evaluation(
                conn, h.run_id, n, EvalPurpose.ITERATION, reading, Role.CANDIDATE, candidate
            )
        runs.update_run(conn, h.run_id, iteration=upto)
    h.refresh()
    sync.rebuild_views(h)
    sync.write_placeholder(h.context, h.run.last_kept_commit)


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


def resolve_by_git(cwd: Path, names: list[str]) -> None:
    """The names resolved by one `git cat-file` process, as git.resolve_commits did before it
    read loose objects: the floor stays the same git work whatever the step learns to skip."""
    env = {**os.environ, **GIT_ENV}
    query = "".join(f"{name}^{{commit}}\n" for name in names).encode()
    subprocess.run(["git", "cat-file", "--batch-check"], cwd=cwd, env=env, input=query,
                   capture_output=True, check=True)  # fmt: skip


def git_floor(h: RunHandle, base: str, commit: str, discard: bool) -> float:
    """The git commands one iteration needs, timed alone: resolve refs, check that the
    candidate is on the run branch and descends from the kept commit; on discard also the
    reset-safety status and the reset."""
    t0 = time.perf_counter()
    resolve_by_git(h.worktree, [base, commit, "HEAD"])
    git.head_branch(h.worktree)
    git.is_ancestor(h.worktree, base, commit)
    if discard:
        git.status(h.worktree)
        git.reset_hard(h.worktree, base)
    return time.perf_counter() - t0


@dataclass(frozen=True)
class OverheadRow:
    """One bucket of the overhead section: medians per step, and memory while stepping."""

    iteration: int  # the run's length after the bucket's steps
    overhead_ms: float  # a step's wall time less its evaluator's
    floor_ms: float  # the git commands the step needs, timed alone
    cpu_ms: float  # the supervisor's own CPU time per step (steady under load; no children)
    peak_rss_mb: float | None  # the process's peak resident set while stepping (Linux)
    rss_growth_mb: float | None  # that peak less the resident set the steps started with
    peak_alloc_kb: float  # the most Python memory one step held at once (tracemalloc)

    @property
    def ratio(self) -> float:
        return self.overhead_ms / self.floor_ms


def _reset_peak_rss() -> None:
    """Start counting the peak resident set afresh (Linux: VmHWM), so that a bucket's figure
    is its steps', not the synthesis before them."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _rss_mb(field: str) -> float | None:
    """VmHWM (the peak resident set) or VmRSS (the current one) of this process, Linux only."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return None


def _agent_turn(h: RunHandle, keep: bool) -> tuple[str, str]:
    """The agent's part of an iteration (never timed): a candidate that the step keeps or
    discards; the kept commit it started from, and the candidate."""
    kept = h.run.last_kept_score or 0.0
    base = h.run.last_kept_commit or ""
    return base, scripted_candidate(h, kept + 1 if keep else kept - 1)


def _step_peak_kb(h: RunHandle) -> float:
    """The most Python memory a keep and a discard held (untimed: tracemalloc slows them)."""
    tracemalloc.start()
    peak = 0
    for keep in (True, False):
        _agent_turn(h, keep)
        tracemalloc.reset_peak()
        step(h)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
    tracemalloc.stop()
    return peak / 1024


def bench_overhead(buckets: list[int], samples: int) -> list[OverheadRow]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="ar-bench-") as tmp:
        mission = make_repo(Path(tmp) / "repo", SANDBOX)
        with prepare(mission, run_tag="bench") as h:
            for bucket in buckets:
                synthesize(h, bucket - samples // 2)
                overheads, floors, cpu = [], [], []
                _reset_peak_rss()
                start_rss = _rss_mb("VmRSS")
                for i in range(samples):
                    keep = i % 2 == 0
                    base, commit = _agent_turn(h, keep)
                    c0, t0 = time.process_time(), time.perf_counter()
                    result = step(h)
                    elapsed, used = time.perf_counter() - t0, time.process_time() - c0
                    evaluator_s = (result.evaluator.duration_ms if result.evaluator else 0) / 1000
                    overheads.append(elapsed - evaluator_s)
                    cpu.append(used)
                    floors.append(git_floor(h, base if not keep else commit, commit, not keep))
                rss = _rss_mb("VmHWM")
                grew = None if rss is None or start_rss is None else rss - start_rss
                rows.append(OverheadRow(h.run.iteration, median_ms(overheads), median_ms(floors),
                    median_ms(cpu), rss, grew, _step_peak_kb(h)))  # fmt: skip
                print(f"  bucket {bucket}: done", file=sys.stderr)
    return rows


def print_overhead(rows: list[OverheadRow]) -> list[targets.Verdict]:
    print("\nSupervisor overhead per iteration (excluding agent and evaluator time)")
    print(f"load average {os.getloadavg()[0]:.1f} (1 min) at the end")
    print(
        f"{'iteration':>10} {'overhead ms':>12} {'git floor ms':>13} {'ratio':>7} "
        f"{'cpu ms':>7} {'peak RSS MB':>12} {'RSS grew MB':>12} {'step peak KB':>13}"
    )
    for r in rows:
        rss = f"{r.peak_rss_mb:.1f}" if r.peak_rss_mb is not None else "n/a"
        grew = f"{r.rss_growth_mb:.1f}" if r.rss_growth_mb is not None else "n/a"
        print(f"{r.iteration:>10} {r.overhead_ms:>12.2f} {r.floor_ms:>13.2f} {r.ratio:>7.2f} "
              f"{r.cpu_ms:>7.2f} {rss:>12} {grew:>12} {r.peak_alloc_kb:>13.0f}")  # fmt: skip
    growth = rows[-1].overhead_ms / rows[0].overhead_ms
    worst = max(r.ratio for r in rows)
    print(f"target: overhead <= 1.5x the git floor      worst bucket: {worst:.2f}x")
    print(f"target: last bucket <= 1.5x the first        measured: {growth:.2f}x")
    return [
        targets.at_most(
            f"step overhead / git floor, worst of {len(rows)} run lengths",
            worst,
            overhead_ab.TARGET,
        ),
        targets.at_most("step overhead, longest run / shortest", growth, overhead_ab.TARGET),
    ]


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


def bench_cli(repeat: int, references: tuple[Path, ...] = ()) -> list[targets.Verdict]:
    """bench/cli_start.py in a repository with a run of 1,000 recorded iterations (beside the
    `references` source trees)."""
    with tempfile.TemporaryDirectory(prefix="ar-bench-") as tmp:
        mission = make_repo(Path(tmp) / "repo", SANDBOX)
        with prepare(mission, run_tag="startup") as h:
            synthesize(h, 1000)
            run_id = h.run_id
        return cli_start.run(mission.parent.parent, run_id, repeat, references)


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


def overhead(args: argparse.Namespace, buckets: list[int]) -> list[targets.Verdict]:
    """The overhead section: its table, its rows as JSON (a round of `overhead_ab`), or this
    tree beside `--reference` trees in alternating rounds."""
    if args.reference:
        return overhead_ab.run(args.reference, 2 if args.quick else 7, args.quick)
    rows = bench_overhead(buckets, 10 if args.quick else 30)
    if args.rows_json:
        print(json.dumps([dataclasses.asdict(row) for row in rows]))
        return []
    return print_overhead(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small buckets, few samples")
    parser.add_argument(
        "--long", action="store_true", help="with --quick: the 10,000-iteration bucket too"
    )
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
    parser.add_argument(
        "--reference",
        type=Path,
        action="append",
        default=[],
        metavar="SRC",
        help="cli, overhead, lanes: also time this source tree (e.g. DIR/src of `git archive "
        "BASE`), interleaved",
    )
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="REV",
        help="like --reference, for a commit of this repository (e.g. HEAD~1): unpacked into a "
        "temporary folder for the run",
    )
    parser.add_argument(overhead_ab.ROWS_FLAG, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.update(GIT_ENV)
    buckets = [10, 100, 1000] if args.quick else [10, 100, 1000, 10000]
    if args.long:
        buckets = [*buckets, 10000] if args.quick else buckets
    with tempfile.TemporaryDirectory(prefix="ar-bench-against-") as unpacked:
        args.reference += [
            unpack(rev, Path(unpacked) / str(n)) for n, rev in enumerate(args.against)
        ]
        targets.print_verdicts(run_sections(args, buckets))


def unpack(rev: str, folder: Path) -> Path:
    """Commit `rev` of the repository this bench is in, unpacked below `folder`: its src/."""
    here = Path(__file__).resolve().parent.parent
    verify = ["git", "-C", str(here), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"]
    found = subprocess.run(verify, capture_output=True, text=True, check=False)
    if found.returncode != 0:
        sys.exit(f"--against {rev}: no such commit in {here}")
    commit = found.stdout.strip()
    tree = folder / commit[:12]  # the tables name a reference by this folder: the commit
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(here), "archive", commit],
                             capture_output=True, check=True)  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree / "src"


def run_sections(args: argparse.Namespace, buckets: list[int]) -> list[targets.Verdict]:
    """Run the sections asked for; this tree's verdicts on the issue's targets."""
    first_reference = args.reference[0] if args.reference else None
    sections: dict[str, Callable[[], Sequence[targets.Verdict] | None]] = {
        "overhead": lambda: overhead(args, buckets),
        "lane-history": lambda: bench_lane_history(buckets[-1], 5 if args.quick else 20),
        "cli": lambda: bench_cli(3 if args.quick else 10, tuple(args.reference)),
        "throughput": lambda: bench_throughput(10 if args.quick else 60),
        "trust": lambda: trust.run(50 if args.quick else 200, 60, sets=1 if args.quick else 5),
        "trust-designs": lambda: trust_designs.report(
            50 if args.quick else 200, 1 if args.quick else 5
        ),
        "drift": lambda: drift.run(40 if args.quick else 200, 60),
        "ray": lambda: ray_cost.run(5 if args.quick else 20),
        "trust-e2e": lambda: trust_e2e.run(1 if args.quick else 5, 20 if args.quick else 60),
        "lanes": lambda: lanes.run(per_lane=3 if args.quick else 6, reference=first_reference),
        "sandbox": lambda: sandbox.run(5 if args.quick else 20),
    }
    verdicts: list[targets.Verdict] = []
    for name, section in sections.items():
        if args.only in (None, name):
            verdicts += section() or ()
    return verdicts


if __name__ == "__main__":
    main()
