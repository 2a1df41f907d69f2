"""A `cmd:` agent for tree kills with sessions in flight: adds bonus-<lane>-<session>.txt (lane
0: the single loop), commits it and reports it as a candidate. While CUT_FLAG exists, a lane
listed in CUT_LANES (default: every lane) then writes its commit to CUT_DIR/<lane> and hangs:
a session whose report is complete but which never ended (the kill comes first). With
CUT_EARLY it hangs before it changes anything instead (CUT_DIR/early-<lane> says so). With
MARKS, each session notes its pid as MARKS/agent-<lane>-<session>."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

lane = os.environ.get("AUTORESEARCH_LANE", "0")
session = os.environ["AUTORESEARCH_ITERATION"]
lanes = os.environ.get("CUT_LANES")
cut = Path(os.environ["CUT_FLAG"]).exists() and (lanes is None or lane in lanes.split(","))
if os.environ.get("MARKS"):
    Path(os.environ["MARKS"], f"agent-{lane}-{session}").write_text(str(os.getpid()))
if cut and os.environ.get("CUT_EARLY"):
    Path(os.environ["CUT_DIR"], f"early-{lane}").write_text("")
    time.sleep(120)
Path(f"bonus-{lane}-{session}.txt").write_text("x\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"lane {lane} session {session}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
commit = head.stdout.strip()
report = {
    "status": "candidate",
    "candidate_commit": commit,
    "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
    "description": f"{'cut ' if cut else ''}lane {lane} session {session}",
    "notes": [],
    "created_at": "2026-01-01T00:00:00Z",
}
Path(os.environ["AUTORESEARCH_CANDIDATE_FILE"]).write_text(json.dumps(report))
if cut:
    Path(os.environ["CUT_DIR"], lane).write_text(commit)
    time.sleep(120)
