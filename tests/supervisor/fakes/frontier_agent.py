"""A `cmd:` agent for frontier tests: it reads value.txt (the parent's value), writes the
next value by FRONTIER_RULE and commits.

FRONTIER_RULE is JSON: {"<value>": [delta, delta, …]}: the n-th session that starts from a
parent of that value adds the n-th delta (the last one once they run out); a value missing
from the rule gives a noop. FRONTIER_STATE (a file outside the repository) counts the visits;
FRONTIER_LOG gets a line `<session> <parent value> <base commit>` per session. FRONTIER_HOLD
is `<session>:<path>`: that session touches `<path>`.ready and then waits (at most 60 s) until
`<path>` exists, so that a test can kill the driver in the middle of a session.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

session = int(os.environ["AUTORESEARCH_ITERATION"])
base = os.environ["AUTORESEARCH_BASE_COMMIT"]
value = float(Path("value.txt").read_text())
rule: dict[str, list[float]] = json.loads(os.environ["FRONTIER_RULE"])
state_file = Path(os.environ["FRONTIER_STATE"])
visits = json.loads(state_file.read_text()) if state_file.exists() else {}
key = f"{value:g}"
with open(os.environ["FRONTIER_LOG"], "a") as log:
    log.write(f"{session} {key} {base}\n")
hold = os.environ.get("FRONTIER_HOLD", "")
if hold and int(hold.split(":", 1)[0]) == session:
    path = Path(hold.split(":", 1)[1])
    Path(f"{path}.ready").write_text("")
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def artifact(status: str, commit: str | None) -> None:
    data = {
        "status": status,
        "candidate_commit": commit,
        "base_commit": base,
        "description": f"session {session} from {key}",
        "notes": [],
        "created_at": "2026-01-01T00:00:00Z",
    }
    Path(os.environ["AUTORESEARCH_CANDIDATE_FILE"]).write_text(json.dumps(data))


deltas = rule.get(key)
if not deltas:
    artifact("noop", None)
    raise SystemExit(0)
seen = visits.get(key, 0)
visits[key] = seen + 1
state_file.write_text(json.dumps(visits))
Path("value.txt").write_text(f"{value + deltas[min(seen, len(deltas) - 1)]:g}\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"session {session}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
artifact("candidate", head.stdout.strip())
