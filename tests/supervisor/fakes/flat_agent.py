"""A `cmd:` agent that never improves: each session commits a value below the baseline's 1
(a new tree each time, so every candidate is measured and discarded). FLAT_LOG, when set,
gets a line per session: its iteration and whether its instructions carried the plateau note."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

session = int(os.environ["AUTORESEARCH_ITERATION"])
lane = int(os.environ.get("AUTORESEARCH_LANE", "0"))
log = os.environ.get("FLAT_LOG")
if log:
    told = "Plateau:" in Path(os.environ["AUTORESEARCH_INSTRUCTIONS_FILE"]).read_text()
    with open(log, "a") as handle:
        handle.write(f"{session} {'explore' if told else '-'}\n")
Path("value.txt").write_text(f"0.{lane}{session:04d}\n")
subprocess.run(["git", "commit", "-qam", f"flat {lane} {session}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as handle:
    json.dump(
        {
            "status": "candidate",
            "candidate_commit": head.stdout.strip(),
            "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
            "description": f"value 0.{session}",
            "notes": [],
            "created_at": "2026-01-01T00:00:00Z",
        },
        handle,
    )
