"""A `cmd:` agent for lane tests: what it does depends on its lane (AUTORESEARCH_LANE).

LANE_PLAN is `lane:action:seconds,…`; actions: value=N (write N to value.txt: lanes doing this
conflict on purpose), bonus (add bonus-<lane>-<session>.txt: never conflicts), noop, nobase
(a noop artifact without its required base_commit).
A lane missing from the plan does `bonus`. The agent sleeps `seconds` before it commits.
LANE_WAIT is `lane:path`: that lane's agent first waits (at most 60 s) until `path` exists, so a
test can end a session at a point of another lane's work instead of after a guessed time.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

lane = int(os.environ.get("AUTORESEARCH_LANE", "0"))
session = int(os.environ["AUTORESEARCH_ITERATION"])
plan = {}
for item in filter(None, os.environ.get("LANE_PLAN", "").split(",")):
    number, action, seconds = item.split(":")
    plan[int(number)] = (action, float(seconds))
action, seconds = plan.get(lane, ("bonus", float(os.environ.get("LANE_SLEEP", "0"))))
log = os.environ.get("LANE_LOG")
if log:
    with open(log, "a") as handle:
        handle.write(f"start {lane} {session} {time.time()}\n")
wait = os.environ.get("LANE_WAIT", "")
if wait and int(wait.split(":", 1)[0]) == lane:
    deadline = time.monotonic() + 60
    while not Path(wait.split(":", 1)[1]).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
time.sleep(seconds)


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


if action in ("noop", "nobase"):
    artifact("noop", None, "nothing to try")
    if action == "nobase":
        written = Path(os.environ["AUTORESEARCH_CANDIDATE_FILE"])
        data = json.loads(written.read_text())
        del data["base_commit"]
        written.write_text(json.dumps(data))
    raise SystemExit(0)
if action.startswith("value="):
    Path("value.txt").write_text(action.split("=", 1)[1] + "\n")
else:
    Path(f"bonus-{lane}-{session}.txt").write_text("x\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(
    ["git", "commit", "-q", "-m", f"lane {lane} session {session}: {action}"], check=True
)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
artifact("candidate", head.stdout.strip(), f"lane {lane} session {session}: {action}")
