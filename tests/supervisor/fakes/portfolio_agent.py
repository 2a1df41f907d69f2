"""A `cmd:` agent for portfolio tests and the bench: `portfolio_agent.py RATE SLEEP`.

It sleeps SLEEP seconds (its cost: a `cmd:` agent reports no tokens or dollars), then, on a
share RATE of its sessions (a deterministic pattern over the iteration number, so a run is
reproducible), raises value.txt by 1 (a keep); otherwise lowers it by 1 (a discard).
Given `--model strong` (or `weak`), it keeps every (or no) session whatever RATE says: one
program, two models, as a portfolio of `claude --model haiku` and `claude --model opus`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

rate, pause = float(sys.argv[1]), float(sys.argv[2])
rate = {"strong": 1.0, "weak": 0.0}.get(os.environ.get("AUTORESEARCH_MODEL", ""), rate)
session = int(os.environ["AUTORESEARCH_ITERATION"])
base = os.environ["AUTORESEARCH_BASE_COMMIT"]
time.sleep(pause)
# golden-ratio steps spread the successes evenly over any run of sessions
succeeds = (session * 0.6180339887) % 1.0 < rate
value = float(Path("value.txt").read_text())
Path("value.txt").write_text(f"{value + (1 if succeeds else -1):g}\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"session {session}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
artifact = {
    "status": "candidate",
    "candidate_commit": head.stdout.strip(),
    "base_commit": base,
    "description": f"session {session} at rate {rate}",
    "notes": [],
    "created_at": "2026-01-01T00:00:00Z",
}
Path(os.environ["AUTORESEARCH_CANDIDATE_FILE"]).write_text(json.dumps(artifact))
