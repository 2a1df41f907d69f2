"""The trust benchmark end to end: the same ground-truth mission through `autoresearch run`.

    .venv/bin/python bench/trust_e2e.py [--seeds 3] [--iterations 40]
    (also: python3 dev.py bench --only trust-e2e)

A real repository per seed and rule; a `cmd:` agent that, each iteration, commits a change
that is really +1σ better (value.txt + 1) with probability 0.3 and one that does nothing
(notes.txt) otherwise, seeded per seed and iteration; an evaluator that prints value.txt plus
Gaussian noise σ = 1 from a counter kept outside the repository. Everything else – prepare,
calibration, the sequential test, incumbent checkouts, confirmations, resets, the journal –
is the real thing. The figures are read back from the journal: false keeps (null kept / null
proposed), true keeps (+1σ kept / proposed), evaluations per iteration (every evaluation row
of the iterations), and the reported best (what `status` shows) minus the true value of the
final kept commit, in σ. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from trust import Tally, breakdown  # bench/trust.py: the same figures, from the policy simulation

P_REAL = 0.3
EVALUATOR = textwrap.dedent(
    """\
    import json, os, random, sys
    state, sigma = sys.argv[1], float(sys.argv[2])
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    value = float(open("value.txt").read())
    print(json.dumps({"pass": True, "score": value + random.Random(n).gauss(0, sigma)}))
    """
)
# The end of a scripted `cmd:` agent (it has staged its change and named it `what`): commit it
# and hand the commit in as its candidate. bench/timed_workload.py's agent ends the same way.
HAND_IN = textwrap.dedent(
    """\
    subprocess.run(["git", "commit", "-qm", what], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as f:
        json.dump({"status": "candidate", "candidate_commit": head,
                   "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
                   "description": what, "notes": [],
                   "created_at": "2026-01-01T00:00:00Z"}, f)
    """
)
AGENT = (
    textwrap.dedent(
        """\
    import json, os, random, subprocess, sys
    seed, iteration = int(sys.argv[1]), int(os.environ["AUTORESEARCH_ITERATION"])
    real = random.Random(seed * 100003 + iteration).random() < float(sys.argv[2])
    if real:
        value = float(open("value.txt").read()) + 1
        open("value.txt", "w").write(f"{value:g}\\n")
        what = f"real: value {value:g}"
    else:
        open("notes.txt", "w").write(f"iteration {iteration}: a change that does nothing\\n")
        what = "null"
    subprocess.run(["git", "add", "-A", "value.txt", "notes.txt"], check=True)
    """
    )
    + HAND_IN
)
# name: (noise block of sandbox.md, evaluator σ)
RULES = {
    "today (mode: single)": ("noise:\n  mode: single\n", 1.0),
    "noise-aware default": ("", 1.0),
}
DETERMINISTIC = "default, σ = 0"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _repo(root: Path, noise: str, sigma: float) -> Path:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "value.txt").write_text("0\n")
    (root / "notes.txt").write_text("\n")
    (root / "scripts").mkdir()
    (root / "scripts/eval.py").write_text(EVALUATOR)
    (root / ".gitignore").write_text(".autoresearch/\n")
    mission = root / "missions/m"
    mission.mkdir(parents=True)
    state = root.parent / f"{root.name}-noise"
    (mission / "sandbox.md").write_text(
        "---\nevaluator:\n"
        f"  command: {sys.executable} scripts/eval.py {state} {sigma}\n"
        "  format: json\n  direction: higher\n"
        f"{noise}---\nOnly edit value.txt and notes.txt.\n"
    )
    (mission / "mission.md").write_text("Raise the score.\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    return mission


def one(seed: int, iterations: int, rule: tuple[str, float], work: Path, t: Tally) -> float:
    """One seed of one rule through `autoresearch run`; the figures from the journal; the
    seconds it took."""
    root = work / "repo"
    mission = _repo(root, *rule)
    agent = work / "agent.py"
    agent.write_text(AGENT)
    cli = [sys.executable, "-m", "autoresearch"]
    t0 = time.monotonic()
    done = subprocess.run(
        [*cli, "run", str(mission), "--agent", f"cmd:{sys.executable} {agent} {seed} {P_REAL}",
         "--max-iterations", str(iterations), "--max-noops", "0", "--json"],
        cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - t0
    if done.returncode != 0:
        raise SystemExit(f"autoresearch run failed: {done.stderr[-2000:]}")
    status = json.loads(
        subprocess.run([*cli, "status", "--json"], cwd=root, capture_output=True, text=True,
                       check=True).stdout
    )["runs"][0]  # fmt: skip
    _tally(root, status, t)
    return seconds


def _tally(root: Path, status: dict[str, object], t: Tally) -> None:
    import sqlite3

    conn = sqlite3.connect(root / ".autoresearch/journal.sqlite3")
    try:
        its = conn.execute(
            "SELECT iteration, base_commit, candidate_commit, decision FROM iterations "
            "WHERE run_id = ? AND iteration > 0 ORDER BY iteration",
            (status["run_id"],),
        ).fetchall()
        evaluations = conn.execute(
            "SELECT COUNT(*) FROM evaluations WHERE run_id = ? AND iteration > 0",
            (status["run_id"],),
        ).fetchone()[0]
        roles = conn.execute(
            "SELECT iteration, COALESCE(role, 'candidate'), COUNT(*) FROM evaluations "
            "WHERE run_id = ? AND iteration > 0 GROUP BY iteration, role",
            (status["run_id"],),
        ).fetchall()
    finally:
        conn.close()

    def value(commit: str) -> float:
        return float(_git(root, "show", f"{commit}:value.txt"))

    real = {}
    for iteration, base, candidate, decision in its:
        real[iteration] = value(candidate) > value(base)
        t.add(real[iteration], decision == "keep")
    for iteration, role, n in roles:
        if iteration in real:
            t.count(real[iteration], str(role), int(n))
    t.iterations += len(its)
    t.evaluations += int(evaluations)
    truth = value(str(status["last_kept_commit"]))
    t.bias.append(float(str(status["best_score"])) - truth)  # σ = 1: already in σ


def run(seeds: int, iterations: int) -> None:
    print(
        f"\nEnd to end through `autoresearch run` (a cmd: agent, a noisy evaluator): {seeds} "
        f"seeds x {iterations} iterations, {P_REAL:.0%} of changes +1σ, the rest null"
    )
    print(f"{'rule':<24} {'false':>7} {'true':>7} {'evals/it':>8} {'best-tru':>8} {'s/seed':>7}")
    default = None
    for name, rule in RULES.items():
        line, t = _row(name, seeds, iterations, rule)
        print(line)
        default = t
    if default is not None:
        print("where the default's evaluations go (journal rows per iteration, by role):")
        print(breakdown(default))
    deterministic, _ = _row(DETERMINISTIC, 1, iterations, ("", 0.0))
    print(f"{deterministic}   (target: 1.00 evaluation per iteration)")


def _row(name: str, seeds: int, iterations: int, rule: tuple[str, float]) -> tuple[str, Tally]:
    t, seconds = Tally(), 0.0
    for seed in range(seeds):
        work = Path(tempfile.mkdtemp(prefix="autoresearch-trust-e2e-"))
        try:
            seconds += one(seed, iterations, rule, work, t)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    line = (
        f"{name:<24} {t.false_rate:>7.1%} {t.true_rate:>7.1%} {t.per_iteration:>8.2f} "
        f"{statistics.fmean(t.bias):>+8.2f} {seconds / seeds:>7.1f}"
        f"   ({t.null_proposed} null, {t.real_proposed} real proposed)"
    )
    return line, t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=40)
    args = parser.parse_args()
    run(args.seeds, args.iterations)


if __name__ == "__main__":
    main()
