"""Benchmark: a portfolio of two `cmd:` agents, and the share of sessions the better one gets.

    .venv/bin/python bench/portfolio.py [--seeds 3] [--iterations 30]

Two agents with hidden success rates and costs: `good` keeps on 50 % of its sessions and
takes 0.05 s, `poor` keeps on 20 % and takes 0.2 s (a `cmd:` agent reports no tokens or
dollars, so seconds are its cost). A success raises the score by 1, a failure lowers it (a
discard). Each seed shifts which sessions succeed. The run goes through the real CLI (`run
--agent poor --agent good`, the poor one first so the order helps nothing); the table prints
the share of sessions after the warm-up that went to `good` (target: >= 70 %).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
from pathlib import Path

from plateau import autoresearch, mission_repo  # bench/plateau.py

EVALUATOR = (
    "import json, pathlib\n"
    'print(json.dumps({"pass": True, "score": float(pathlib.Path("value.txt").read_text())}))\n'
)
# RATE SLEEP PHASE: succeed on a share RATE of the sessions (an even, seeded pattern)
AGENT = """import json, os, subprocess, sys, time
from pathlib import Path
rate, pause, phase = (float(a) for a in sys.argv[1:4])
session = int(os.environ["AUTORESEARCH_ITERATION"])
time.sleep(pause)
up = (session * 0.6180339887 + phase) % 1.0 < rate
value = float(Path("value.txt").read_text()) + (1 if up else -1)
Path("value.txt").write_text(f"{value:g}\\n")
subprocess.run(["git", "commit", "-qam", f"session {session}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout
Path(os.environ["AUTORESEARCH_CANDIDATE_FILE"]).write_text(json.dumps({
    "status": "candidate", "candidate_commit": head.strip(),
    "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"], "description": f"try {session}",
    "notes": [], "created_at": "2026-01-01T00:00:00Z"}))
"""
SANDBOX = "---\nevaluator:\n  command: {python} eval.py\n  format: json\n---\nhigher\n"
AGENTS = {"poor": (0.2, 0.2), "good": (0.5, 0.05)}
WARMUP_SESSIONS = 4  # two each (supervisor/portfolio.WARMUP)


def _repo(root: Path) -> Path:
    files = {"eval.py": EVALUATOR, "value.txt": "0\n", "mission.md": "Make the score higher.\n",
             "sandbox.md": SANDBOX}  # fmt: skip
    return mission_repo(root, files, "start")


def one(scratch: Path, seed: int, iterations: int) -> dict[str, object]:
    """One portfolio run: which agent each session had, the share of `good` after warm-up."""
    script = scratch / "agent.py"
    script.write_text(AGENT)
    specs = {
        name: f"cmd:{shlex.quote(sys.executable)} {script} {rate} {pause} {seed / 7 % 1:.4f}"
        for name, (rate, pause) in AGENTS.items()
    }
    root = _repo(scratch / f"seed{seed}")
    flags = [f for spec in specs.values() for f in ("--agent", spec)]
    done = autoresearch(
        root, "run", ".", *flags, "--max-iterations", str(iterations), "--no-certify",
        "--max-noops", "0", "--max-agent-failures", "0",
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"run failed: {done.stderr.strip()}")
    shown = json.loads(autoresearch(root, "status", "--json").stdout)
    run_id = shown["runs"][0]["run_id"]
    details = json.loads(autoresearch(root, "status", run_id, "--json").stdout)
    by_name = {spec.replace("cmd: ", "cmd:"): name for name, spec in specs.items()}
    chosen = [
        by_name.get((r.get("agent") or {}).get("agent", ""), "?") for r in details["iterations"][1:]
    ]
    after = chosen[WARMUP_SESSIONS:]
    share = after.count("good") / len(after) if after else 0.0
    return {"seed": seed, "sessions": len(chosen), "good_after_warmup": share,
            "best": details.get("best_score", details.get("last_kept_score"))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="portfolio-bench-") as scratch:
        rows = [one(Path(scratch), seed, args.iterations) for seed in range(args.seeds)]
    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
        return
    print("portfolio of two cmd: agents: good (50 % keeps, 0.05 s), poor (20 %, 0.2 s)")
    print(f"{'seed':>4} {'sessions':>8} {'good after warm-up':>18} {'best':>6}")
    for r in rows:
        print(f"{r['seed']:>4} {r['sessions']:>8} {r['good_after_warmup']:>18.0%} {r['best']!s:>6}")
    mean = sum(float(str(r["good_after_warmup"])) for r in rows) / len(rows)
    print(f"mean share of good after warm-up: {mean:.0%} (target >= 70 %)")


if __name__ == "__main__":
    main()
