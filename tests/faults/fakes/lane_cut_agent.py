"""A `cmd:` agent for lane tree kills: adds bonus-<lane>-<session>.txt, commits it and reports
it as a candidate. While CUT_FLAG exists it then writes its commit to CUT_DIR/<lane> and hangs:
a session whose report is complete but which never ended (the whole tree is killed first)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

lane = os.environ["AUTORESEARCH_LANE"]
session = os.environ["AUTORESEARCH_ITERATION"]
cut = Path(os.environ["CUT_FLAG"]).exists()
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
