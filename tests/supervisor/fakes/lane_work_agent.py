"""A `cmd:` agent for stopping lanes: it edits at once, then works slowly, then commits.

Like a real agent mid-task, it has unsaved work on disk (`bonus-<lane>-<session>.txt`, which
raises the score by one) while it "thinks" for LANE_SLEEP seconds (default 30); then it
commits and writes a candidate. It writes `<LANE_MARKS>/<lane>-<session>` (its pid) once the
edit is on disk, so a test knows when the lane is mid-session. LANE_IGNORE_TERM=1: it ignores
SIGTERM (a stubborn agent: the driver's stop must escalate to SIGKILL). LANE_EDIT=value: it
writes value.txt (10 * lane + session) instead, so that lanes conflict on purpose. The lanes
named in LANE_GATED (`2,3`) wait for the file LANE_GATE to exist instead of sleeping (at
most 60 s, then fail: a boxed agent never sees a gate outside the repository).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

lane = int(os.environ.get("AUTORESEARCH_LANE", "0"))
session = int(os.environ["AUTORESEARCH_ITERATION"])
if os.environ.get("LANE_IGNORE_TERM") == "1":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.environ.get("LANE_EDIT") == "value":
    Path("value.txt").write_text(f"{10 * lane + session}\n")
else:
    Path(f"bonus-{lane}-{session}.txt").write_text(f"lane {lane} session {session}: unsaved work\n")
marks = os.environ.get("LANE_MARKS")
if marks:
    mark = Path(marks) / f"{lane}-{session}"
    mark.with_suffix(".tmp").write_text(str(os.getpid()))
    mark.with_suffix(".tmp").replace(mark)
gate = os.environ.get("LANE_GATE")
if gate and str(lane) in os.environ.get("LANE_GATED", "").split(","):
    deadline = time.monotonic() + 60
    while not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not Path(gate).exists():  # said, not waited through: the test would pass 60 s late
        sys.exit(f"lane_work_agent: no {gate} after 60 s (in the OS sandbox? /tmp is its own)")
else:
    time.sleep(float(os.environ.get("LANE_SLEEP", "30")))
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"lane {lane} session {session}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as handle:
    json.dump(
        {
            "status": "candidate",
            "candidate_commit": head.stdout.strip(),
            "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
            "description": f"lane {lane} session {session}",
            "notes": [],
            "created_at": "2026-01-01T00:00:00Z",
        },
        handle,
    )
