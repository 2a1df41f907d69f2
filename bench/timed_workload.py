"""Benchmark: a real timed workload end to end through `autoresearch run` on a machine whose
load changes half-way (#34). Nothing here is a pass/fail test.

    .venv/bin/python bench/timed_workload.py            (3 seeds x 16 iterations, ~8 min)
    .venv/bin/python bench/timed_workload.py --quick    (1 seed x 10 iterations, ~2 min)

The repository holds a pure-Python function (work.py: a loop of `size.txt` steps); the
evaluator times one call by wall clock and prints the milliseconds (lower is better). A `cmd:`
agent commits, per iteration and seeded per seed: a real speed-up (size − 7 to 9 %, 30 %), a
slowdown (size + 8 %, 15 %) or a null edit (notes.txt, the rest). While the run goes, a
background load (two busy-loop processes) starts after the LOAD_FROM-th evaluator reading and
stops after the LOAD_UNTIL-th: every reading in between is slower, for old and new commits
alike. The run ends with its automatic paired certification (`run` certifies by default).

The truth is stated offline, after the run, with no load: the CPU time (time.process_time) of
the baseline's and the final kept commit's function, the median of TRUTH_REPEATS calls each.
Printed: false keeps (null or slowdown kept / proposed), true keeps (speed-ups kept /
proposed), evaluations per iteration, the reported improvement (certify's paired interval,
in % of the baseline's certified reading; 0 when nothing was kept) minus the true one (%),
and whether the reported interval covers the truth.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from trust_e2e import GIT_ENV, HAND_IN
from trust_e2e import _git as git  # bench/trust_e2e.py: git as the bench's author

SIZE = 250_000  # steps of the baseline's loop: ~40-70 ms a call on a shared 2-core machine
LOAD_FROM, LOAD_UNTIL = 40, 110  # the background load's span, in evaluator readings
LOAD_PROCESSES = 2
TRUTH_REPEATS = 15
WORK = textwrap.dedent(
    """\
    def work(size):
        total = 0
        for i in range(size):
            total += i * i % 7
        return total
    """
)
EVALUATOR = textwrap.dedent(
    """\
    import json, os, sys, time
    sys.path.insert(0, os.getcwd())
    from work import work
    counter = sys.argv[1]
    n = int(open(counter).read()) if os.path.exists(counter) else 0
    open(counter, "w").write(str(n + 1))
    size = int(open("size.txt").read())
    start = time.perf_counter()
    work(size)
    print(json.dumps({"pass": True, "score": (time.perf_counter() - start) * 1000}))
    """
)
AGENT = (
    textwrap.dedent(
        """\
    import json, os, random, subprocess, sys
    seed, iteration = int(sys.argv[1]), int(os.environ["AUTORESEARCH_ITERATION"])
    draw = random.Random(seed * 100003 + iteration)
    kind, size = draw.random(), int(open("size.txt").read())
    if kind < 0.30:
        size, what = round(size * (1 - draw.uniform(0.07, 0.09))), "speed-up"
    elif kind < 0.45:
        size, what = round(size * 1.08), "slowdown"
    else:
        what = "null"
        open("notes.txt", "w").write(f"iteration {iteration}: a change that does nothing\\n")
    open("size.txt", "w").write(f"{size}\\n")
    subprocess.run(["git", "add", "-A", "size.txt", "notes.txt"], check=True)
    """
    )
    + HAND_IN
)


@dataclass
class Tally:
    false_kept: int = 0
    false_proposed: int = 0
    true_kept: int = 0
    true_proposed: int = 0
    iterations: int = 0
    evaluations: int = 0
    errors: list[float] = field(default_factory=list)  # reported − true improvement, %
    covered: int = 0
    seconds: float = 0.0


def make_repo(root: Path, counter: Path) -> Path:
    """The workload's repository and its mission (lower wall-clock milliseconds is better)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "work.py").write_text(WORK)
    (root / "size.txt").write_text(f"{SIZE}\n")
    (root / "notes.txt").write_text("\n")
    (root / "scripts").mkdir()
    (root / "scripts/eval.py").write_text(EVALUATOR)
    (root / ".gitignore").write_text(".autoresearch/\n__pycache__/\n")
    mission = root / "missions/m"
    mission.mkdir(parents=True)
    (mission / "sandbox.md").write_text(
        "---\nevaluator:\n"
        f"  command: {sys.executable} scripts/eval.py {counter}\n"
        "  format: json\n  direction: lower\nisolation:\n  sandbox: none\n"
        "---\nOnly edit size.txt and notes.txt.\n"
    )
    (mission / "mission.md").write_text("Make work() faster.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return mission


class Load:
    """Busy loops started after the LOAD_FROM-th reading and stopped after LOAD_UNTIL-th,
    watched from the evaluator's counter file."""

    def __init__(self, counter: Path) -> None:
        self.counter, self.done = counter, threading.Event()
        self.busy: list[subprocess.Popen[bytes]] = []
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _reads(self) -> int:
        try:
            return int(self.counter.read_text() or 0)
        except (OSError, ValueError):
            return 0

    def _watch(self) -> None:
        while not self.done.wait(0.05):
            n = self._reads()
            if LOAD_FROM <= n < LOAD_UNTIL and not self.busy:
                loop = [sys.executable, "-c", "while True: pass"]
                self.busy = [subprocess.Popen(loop) for _ in range(LOAD_PROCESSES)]
            elif n >= LOAD_UNTIL and self.busy:
                self.stop_busy()

    def stop_busy(self) -> None:
        for p in self.busy:
            p.send_signal(signal.SIGTERM)
            p.wait()
        self.busy = []

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.thread.join()
        self.stop_busy()


def cpu_ms(root: Path, commit: str) -> float:
    """The commit's function's CPU time, offline: the median of TRUTH_REPEATS calls."""
    size = int(git(root, "show", f"{commit}:size.txt"))
    namespace: dict[str, object] = {}
    exec(git(root, "show", f"{commit}:work.py"), namespace)  # the commit's own function
    work = namespace["work"]
    times = []
    for _ in range(TRUTH_REPEATS):
        start = time.process_time()
        work(size)  # type: ignore[operator]
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def one(seed: int, iterations: int, work: Path, t: Tally) -> None:
    """One seed through `autoresearch run`; the figures from the journal and status."""
    root, counter = work / "repo", work / "readings"
    mission = make_repo(root, counter)
    agent = work / "agent.py"
    agent.write_text(AGENT)
    cli = [sys.executable, "-m", "autoresearch"]
    started = time.monotonic()
    with Load(counter):
        done = subprocess.run(
            [*cli, "run", str(mission), "--agent", f"cmd:{sys.executable} {agent} {seed}",
             "--max-iterations", str(iterations), "--max-noops", "0", "--json"],
            cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
            check=False,
        )  # fmt: skip
    t.seconds += time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"autoresearch run failed: {done.stderr[-2000:]}")
    status = json.loads(
        subprocess.run([*cli, "status", "--json"], cwd=root, capture_output=True, text=True,
                       check=True).stdout
    )["runs"][0]  # fmt: skip
    before = (t.false_kept, t.true_kept)
    commits = tally_decisions(root, str(status["run_id"]), t)
    print(
        f" kept {t.false_kept - before[0]} null/slower and {t.true_kept - before[1]} faster,"
        f" certified from reading {first_certify_reading(root)};",
        end="",
    )
    tally_report(root, commits, status.get("certified_improvement"), t)


def first_certify_reading(root: Path) -> int | None:
    """The evaluator reading (counted as the load counts them) the certification began with:
    before LOAD_UNTIL, some of its pairs ran under the load, or straddle its end."""
    conn = sqlite3.connect(root / ".autoresearch/journal.sqlite3")
    try:
        roles = [r for (r,) in conn.execute("SELECT role FROM evaluations ORDER BY id")]
    finally:
        conn.close()
    return roles.index("certify") + 1 if "certify" in roles else None


def tally_decisions(root: Path, run_id: str, t: Tally) -> tuple[str, str | None]:
    """Keeps by truth (a smaller loop is faster) and evaluations; the baseline and final
    commits."""
    conn = sqlite3.connect(root / ".autoresearch/journal.sqlite3")
    try:
        commits = conn.execute(
            "SELECT baseline_commit, last_kept_commit FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        its = conn.execute(
            "SELECT base_commit, candidate_commit, decision FROM iterations "
            "WHERE run_id = ? AND iteration > 0 ORDER BY iteration",
            (run_id,),
        ).fetchall()
        t.evaluations += conn.execute(
            "SELECT COUNT(*) FROM evaluations WHERE run_id = ? AND iteration > 0 "
            "AND COALESCE(role, '') != 'certify'",
            (run_id,),
        ).fetchone()[0]
    finally:
        conn.close()
    for base, candidate, decision in its:
        kept = decision == "keep"
        faster = int(git(root, "show", f"{candidate}:size.txt")) < int(
            git(root, "show", f"{base}:size.txt")
        )
        if faster:
            t.true_proposed += 1
            t.true_kept += kept
        else:
            t.false_proposed += 1
            t.false_kept += kept
    t.iterations += len(its)
    return str(commits[0]), commits[1]


def tally_report(root: Path, commits: tuple[str, str | None], certified: object, t: Tally) -> None:
    """Reported − true improvement (% of the baseline, better is +) and its coverage: the
    paired certification's interval in ms, over the baseline's certified readings' level."""
    base, final = commits
    if not final or final == base or not isinstance(certified, dict):
        low = high = reported = truth = 0.0  # nothing kept: the final state is the baseline
    else:
        before = cpu_ms(root, base)
        truth = 100 * (before - cpu_ms(root, final)) / before
        level = certified_level(root, base)
        reported, low, high = (100 * float(certified[k]) / level for k in ("mean", "low", "high"))
    t.errors.append(reported - truth)
    t.covered += low <= truth <= high
    print(
        f" truth {truth:+.1f} %, reported {reported:+.1f} % [{low:+.1f}, {high:+.1f}]",
        flush=True,
    )


def certified_level(root: Path, commit: str) -> float:
    """The mean of the baseline's certify readings (ms): the level the paired improvement was
    measured at, so that it reads as a share of the baseline's time."""
    conn = sqlite3.connect(root / ".autoresearch/journal.sqlite3")
    try:
        row = conn.execute(
            "SELECT AVG(score) FROM evaluations WHERE commit_sha = ? AND role = 'certify' "
            "AND status = 'pass'",
            (commit,),
        ).fetchone()
    finally:
        conn.close()
    return float(row[0])


def run(seeds: range, iterations: int, keep: Path | None = None) -> None:
    print(
        f"\nA timed workload through `autoresearch run`, background load from reading "
        f"{LOAD_FROM} to {LOAD_UNTIL}: seeds {seeds.start}-{seeds.stop - 1} x {iterations} "
        f"iterations (load average {os.getloadavg()[0]:.2f})"
    )
    t = Tally()
    for seed in seeds:
        work = Path(tempfile.mkdtemp(prefix="autoresearch-timed-"))
        try:
            print(f"seed {seed}:", end="", flush=True)
            one(seed, iterations, work, t)
        finally:
            if keep is not None:  # the repository and its journal, to read which readings decided
                shutil.copytree(work / "repo", keep / f"seed-{seed}", symlinks=True)
            shutil.rmtree(work, ignore_errors=True)
    false = t.false_kept / max(1, t.false_proposed)
    true = t.true_kept / max(1, t.true_proposed)
    print(
        f"false keeps {false:.1%} ({t.false_kept}/{t.false_proposed} null or slower), "
        f"true keeps {true:.1%} ({t.true_kept}/{t.true_proposed} faster), "
        f"{t.evaluations / max(1, t.iterations):.2f} evaluations per iteration"
    )
    errors = ", ".join(f"{e:+.1f}" for e in t.errors)
    print(
        f"reported − true improvement (% of the baseline), per seed: {errors}; the reported "
        f"interval covers the truth in {t.covered}/{len(t.errors)}; "
        f"{t.seconds / max(1, len(seeds)):.0f} s per seed (load average "
        f"{os.getloadavg()[0]:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="10 iterations (1 seed by default)")
    parser.add_argument("--keep", type=Path, help="copy each seed's repository and journal here")
    args = parser.parse_args()
    if args.quick:
        args.iterations = 10
        if "--seeds" not in sys.argv:
            args.seeds = 1
    run(range(args.first_seed, args.first_seed + args.seeds), args.iterations, args.keep)


if __name__ == "__main__":
    main()
