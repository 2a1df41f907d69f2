"""Benchmark: what `evaluator.screen` (the cascade, #34) saves, end to end through `autoresearch
run`, the same missions with and without the screen.

    .venv/bin/python bench/screen.py [--seeds 2] [--iterations 20]

A real repository per seed and variant; a `cmd:` agent that, each iteration, commits a real
+1σ improvement (value.txt + 1) with probability 0.3, a regression (value.txt − 2) with 0.5,
and a change that does nothing otherwise, seeded per seed and iteration (both variants see the
same proposals while they keep the same commits). The full evaluator prints value.txt plus
Gaussian noise σ = 1 and sleeps FULL_SLEEP seconds (the expensive evaluation); the screen prints
value.txt plus noise σ = 0.5 and sleeps SCREEN_SLEEP (a shorter training: cheaper, noisier),
margin MARGIN. The noise-aware default keep policy decides, everything is the real thing.

Printed per variant: evaluator seconds per iteration (the full evaluator's, from the journal's
durations; the screen's, timed by the screen itself), full readings per iteration, true keeps
(real kept / real proposed), false keeps (null or regression kept / proposed), candidates the
screen discarded (by kind) and true improvements the screen lost. Nothing here is a pass/fail
test.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from trust_e2e import AGENT as AGENT_TAIL  # bench/trust_e2e.py
from trust_e2e import GIT_ENV

FULL_SLEEP, SCREEN_SLEEP, MARGIN = 0.25, 0.02, 1.5
P_REAL, P_WORSE = 0.3, 0.5
READING = textwrap.dedent(
    """\
    import json, os, random, sys, time
    start = time.monotonic()
    state, sigma, sleep = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    time.sleep(sleep)
    value = float(open("value.txt").read())
    print(json.dumps({"pass": True, "score": value + random.Random(n).gauss(0, sigma)}))
    if len(sys.argv) > 4:  # the screen times itself: its readings are not in the journal
        open(sys.argv[4], "a").write(f"{time.monotonic() - start}\\n")
    """
)
AGENT = (
    textwrap.dedent(
        """\
    import json, os, random, subprocess, sys
    seed, iteration = int(sys.argv[1]), int(os.environ["AUTORESEARCH_ITERATION"])
    draw = random.Random(seed * 100003 + iteration).random()
    value = float(open("value.txt").read())
    if draw < P_REAL:
        value, what = value + 1, "real"
    elif draw < P_REAL + P_WORSE:
        value, what = value - 2, "worse"
    else:
        what = "null"
    open("value.txt", "w").write(f"{value:g}\\n")
    open("notes.txt", "w").write(f"iteration {iteration}: {what}\\n")
    """
    )
    .replace("P_REAL", str(P_REAL))
    .replace("P_WORSE", str(P_WORSE))
)
# the same commit and candidate.json as the trust bench's agent
AGENT += AGENT_TAIL[AGENT_TAIL.index('subprocess.run(["git", "add"') :]


@dataclass
class Tally:
    iterations: int = 0
    full_seconds: float = 0.0
    screen_seconds: float = 0.0
    full_readings: int = 0
    proposed: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    screened: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, decision: str, reason: str) -> None:
        self.proposed[kind] = self.proposed.get(kind, 0) + 1
        if decision == "keep":
            self.kept[kind] = self.kept.get(kind, 0) + 1
        if reason.startswith("screen"):
            self.screened[kind] = self.screened.get(kind, 0) + 1


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True,
                   capture_output=True)  # fmt: skip


def _repo(root: Path, screened: bool) -> Path:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "value.txt").write_text("0\n")
    (root / "notes.txt").write_text("\n")
    (root / "scripts").mkdir()
    (root / "scripts/read.py").write_text(READING)
    (root / ".gitignore").write_text(".autoresearch/\n")
    mission = root / "missions/m"
    mission.mkdir(parents=True)
    state, py = root.parent / f"{root.name}-state", sys.executable
    screen = (
        f"  screen:\n    command: {py} scripts/read.py {state}-screen 0.5 {SCREEN_SLEEP} "
        f"{root.parent / f'{root.name}-screen-times'}\n    margin: {MARGIN}\n"
    )
    (mission / "sandbox.md").write_text(
        f"---\nevaluator:\n  command: {py} scripts/read.py {state}-full 1 {FULL_SLEEP}\n"
        f"  format: json\n  direction: higher\n{screen if screened else ''}"
        "---\nOnly edit value.txt and notes.txt.\n"
    )
    (mission / "mission.md").write_text("Raise the score.\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    return mission


def one(seed: int, iterations: int, screened: bool, work: Path, t: Tally) -> None:
    root = work / ("screened" if screened else "plain")
    mission = _repo(root, screened)
    agent = work / "agent.py"
    agent.write_text(AGENT)
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", "run", str(mission), "--agent",
         f"cmd:{sys.executable} {agent} {seed}", "--max-iterations", str(iterations),
         "--max-noops", "0", "--no-certify", "--json"],
        cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"autoresearch run failed: {done.stderr[-2000:]}")
    _tally(root, json.loads(done.stdout)["run_id"], t)
    times = root.parent / f"{root.name}-screen-times"
    if times.exists():
        t.screen_seconds += sum(float(x) for x in times.read_text().split())


def _tally(root: Path, run_id: str, t: Tally) -> None:
    conn = sqlite3.connect(root / ".autoresearch/journal.sqlite3")
    try:
        its = conn.execute(
            "SELECT candidate_commit, decision, COALESCE(decision_reason, '') FROM iterations "
            "WHERE run_id = ? AND iteration > 0 ORDER BY iteration",
            (run_id,),
        ).fetchall()
        full = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(duration_ms), 0) FROM evaluations "
            "WHERE run_id = ? AND iteration > 0",
            (run_id,),
        ).fetchone()
    finally:
        conn.close()
    for commit, decision, reason in its:
        kind = subprocess.run(
            ["git", "log", "-1", "--format=%s", commit], cwd=root, capture_output=True,
            text=True, check=True,
        ).stdout.strip()  # fmt: skip
        t.add(kind, decision, reason)
    t.iterations += len(its)
    t.full_readings += int(full[0])
    t.full_seconds += int(full[1]) / 1000


def _share(part: dict[str, int], whole: dict[str, int], kind: str) -> str:
    return f"{part.get(kind, 0)}/{whole.get(kind, 0)}"


def report(name: str, t: Tally) -> None:
    n = max(t.iterations, 1)
    false_kept = t.kept.get("null", 0) + t.kept.get("worse", 0)
    false_proposed = t.proposed.get("null", 0) + t.proposed.get("worse", 0)
    print(
        f"{name:<16} full s/it {t.full_seconds / n:5.2f}  screen s/it {t.screen_seconds / n:5.2f}"
        f"  total s/it {(t.full_seconds + t.screen_seconds) / n:5.2f}"
        f"  full readings/it {t.full_readings / n:5.2f}"
        f"  true keeps {_share(t.kept, t.proposed, 'real')}"
        f"  false keeps {false_kept}/{false_proposed}"
        f"  screened out: worse {_share(t.screened, t.proposed, 'worse')},"
        f" null {_share(t.screened, t.proposed, 'null')},"
        f" real (lost) {_share(t.screened, t.proposed, 'real')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    print(
        f"evaluator.screen end to end: {args.seeds} seeds x {args.iterations} iterations; full "
        f"evaluation σ=1 {FULL_SLEEP}s, screen σ=0.5 {SCREEN_SLEEP}s, margin {MARGIN}"
    )
    tallies = {"without screen": Tally(), "with screen": Tally()}
    with tempfile.TemporaryDirectory(prefix="screen-bench-") as tmp:
        for seed in range(args.seeds):
            for name, tally in tallies.items():
                one(seed, args.iterations, name == "with screen", Path(tmp) / f"{seed}", tally)
    for name, tally in tallies.items():
        report(name, tally)


if __name__ == "__main__":
    main()
