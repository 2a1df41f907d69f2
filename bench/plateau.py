"""Benchmark: a mission where nothing can improve, and what a plateau `stop` spends on it.

    .venv/bin/python bench/plateau.py [--plateaus 5 10 20] [--lanes 0 2 4]

The evaluator prints the same score whatever the candidate; a `cmd:` agent adds a new file
each session (a new tree: every candidate is measured, none is better). The run is started
with `--plateau N --on-plateau stop` and an iteration limit of 10·N, through the real CLI, for
each N and each number of lanes (0: the single loop). It prints the evaluations spent until
the run stopped (the baseline aside), the stop reason, and whether that is within N + the
lanes' sessions already in flight (the target: N + a few). Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
EVALUATOR = 'import json\nprint(json.dumps({"pass": True, "score": 1.0}))\n'
AGENT = (
    'cmd:f="try-$AUTORESEARCH_LANE-$AUTORESEARCH_ITERATION.txt" && echo x > "$f" && '
    'git add "$f" && git commit -qm "try $f" && printf '
    '\'{"status": "candidate", "candidate_commit": "%s", "base_commit": "%s", '
    '"description": "add a file", "notes": [], "created_at": "2026-01-01T00:00:00Z"}\' '
    '"$(git rev-parse HEAD)" "$AUTORESEARCH_BASE_COMMIT" > "$AUTORESEARCH_CANDIDATE_FILE"'
)
SANDBOX = "---\nevaluator:\n  command: {python} eval.py\n  format: json\n---\nflat\n"


def _env() -> dict[str, str]:
    return {**os.environ, **GIT_ENV}


def mission_repo(root: Path, files: dict[str, str], message: str) -> Path:
    """A git repository at `root` holding `files` (path → text) in one commit; `sandbox.md`
    may name `{python}`, this interpreter (bench/portfolio.py builds its missions here too)."""
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text.replace("{python}", shlex.quote(sys.executable)))
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-qm", message)):
        subprocess.run(["git", *args], cwd=root, env=_env(), check=True, capture_output=True)
    return root


def autoresearch(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`autoresearch ARGS` in `root`, as this interpreter runs it."""
    return subprocess.run(
        [sys.executable, "-m", "autoresearch", *args],
        cwd=root, env=_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip


def _repo(root: Path) -> Path:
    files = {"eval.py": EVALUATOR, "mission.md": "Make the score higher (it cannot be).\n",
             "sandbox.md": SANDBOX}  # fmt: skip
    return mission_repo(root, files, "flat")


def one(scratch: Path, plateau: int, lanes: int) -> dict[str, object]:
    """One run until its plateau stops it: evaluations spent, reason, seconds."""
    root = _repo(scratch / f"n{plateau}-lanes{lanes}")
    extra = ("--lanes", str(lanes)) if lanes else ()
    started = time.monotonic()
    done = autoresearch(
        root, "run", ".", "--agent", AGENT, "--plateau", str(plateau), "--on-plateau", "stop",
        "--max-iterations", str(10 * plateau), "--no-certify", *extra,
    )  # fmt: skip
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"run failed: {done.stderr.strip()}")
    run = json.loads(autoresearch(root, "status", "--json").stdout)["runs"][0]
    spent = sum(v for k, v in run["counts"].items() if k != "baseline")
    bound = plateau + max(lanes - 1, 0)  # sessions in flight at the stop finish and count
    return {
        "plateau": plateau, "lanes": lanes, "evaluations": spent,
        "within_target": spent <= bound, "bound": bound,
        "stop_reason": run["stop_reason"], "seconds": round(seconds, 1),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plateaus", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--lanes", type=int, nargs="+", default=[0, 2, 4])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plateau-bench-") as scratch:
        rows = [one(Path(scratch), n, k) for n in args.plateaus for k in args.lanes]
    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
        return
    print("a mission where nothing can improve: plateau stop, evaluations spent until the stop")
    print(f"{'N':>4} {'lanes':>5} {'evaluations':>11} {'target <=':>9} {'met':>4} {'s':>6}")
    for r in rows:
        met = "yes" if r["within_target"] else "NO"
        print(
            f"{r['plateau']:>4} {r['lanes']:>5} {r['evaluations']:>11} {r['bound']:>9} "
            f"{met:>4} {r['seconds']:>6}"
        )
    reasons = sorted({str(r["stop_reason"]) for r in rows})
    print("stop reasons:", "; ".join(reasons))
    print("targets met" if all(r["within_target"] for r in rows) else "TARGET MISSED")


if __name__ == "__main__":
    main()
