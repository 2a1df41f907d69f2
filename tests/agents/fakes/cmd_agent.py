"""A `cmd:` agent for tests: reads the AUTORESEARCH_* variables, acts on FAKE_PLAN.

Actions per iteration: improve | worse | noop | hang (edits, then sleeps) | crash (exit 3) |
abort | evalcrash (a candidate that makes the evaluator crash) | eval:MODE (a candidate that
puts the test evaluator in MODE: fail, hang…). FAKE_DESCRIPTION replaces the description.
It drops a marker file `.autoresearch/agent-<iteration>.started` so tests can time signals.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

iteration = int(os.environ["AUTORESEARCH_ITERATION"])
plan = os.environ.get("FAKE_PLAN", "improve").split(",")
action = plan[min(iteration, len(plan)) - 1]
os.makedirs(".autoresearch", exist_ok=True)
# which process this is, for the tests' `host_pid` (in the OS sandbox its pid is its box's)
pid_note = f"{os.getpid()} {os.readlink('/proc/self/ns/pid')}"
Path(f".autoresearch/agent-{iteration}.started").write_text(pid_note)


def artifact(status: str, commit: str | None, description: str) -> None:
    with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as handle:
        json.dump(
            {
                "status": status,
                "candidate_commit": commit,
                "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
                "description": description,
                "notes": [],
                "created_at": "2026-01-01T00:00:00Z",
            },
            handle,
        )


value = float(Path("value.txt").read_text())
if action == "crash":
    sys.exit(3)
if action == "noop":
    artifact("noop", None, "nothing")
    sys.exit(0)
if action == "abort":
    artifact("abort", None, "giving up")
    sys.exit(0)
if action == "evalcrash":
    Path("mode.txt").write_text("crash\n")
    subprocess.run(["git", "add", "mode.txt"], check=True)
if action.startswith("eval:"):
    Path("mode.txt").write_text(action.removeprefix("eval:") + "\n")
    subprocess.run(["git", "add", "mode.txt"], check=True)
value += 1 if action in ("improve", "hang", "evalcrash") or action.startswith("eval:") else -0.5
Path("value.txt").write_text(f"{value:g}\n")
if action == "hang":
    time.sleep(120)
subprocess.run(["git", "commit", "-qam", f"{action} to {value:g}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
artifact("candidate", head, os.environ.get("FAKE_DESCRIPTION", f"{action} to {value:g}"))
