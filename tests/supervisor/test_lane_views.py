"""A lane's instructions are written once per session, by the lanes driver as the session
starts (issue 36): the lane's step no longer rewrites them, unread, before the next handoff."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_lanes import RUN_ID, _mission

from helpers import Repo, cli

LANE_AGENT = Path(__file__).parent / "fakes/lane_agent.py"


def test_a_lanes_instructions_are_what_its_last_session_read(repo: Repo, tmp_path: Path) -> None:
    _mission(repo)
    seen = tmp_path / "seen"
    seen.mkdir()
    agent = tmp_path / "agent.sh"  # keeps what each lane's session read, then works as usual
    agent.write_text(
        '#!/bin/sh\ncp "$AUTORESEARCH_INSTRUCTIONS_FILE" "$SEEN/lane-$AUTORESEARCH_LANE.md"\n'
        f'exec "{sys.executable}" "{LANE_AGENT}"\n'
    )
    agent.chmod(0o755)
    done = cli("run", "missions/demo", "--agent", f"cmd:{agent}", "--run-tag", "T1", "--json",
               "--lanes", "2", "--max-iterations", "4", cwd=repo.root, env={"SEEN": str(seen)},
               timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    lanes = repo.root / ".autoresearch/runs" / RUN_ID / "lanes"
    for lane in (1, 2):
        written = (lanes / str(lane) / "instructions.md").read_text()
        assert written == (seen / f"lane-{lane}.md").read_text(), lane
