"""`status` of a running run reads its pause alone (RunRecord.paused, one key of the loop): what
it says of a paused run, of one going on, and of a loop damaged in the journal."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from autoresearch.paths import RepoPaths
from autoresearch.supervisor.prepare import prepare
from helpers import cli

PAUSE = "paused on a plateau: answer with `continue` or `stop`"


def running_with_loop(mission_dir: Path, loop_json: str) -> tuple[Path, str]:
    with prepare(mission_dir, run_tag="T1") as h:
        run_id, root = h.run_id, h.repo.repo_root
    with sqlite3.connect(RepoPaths(root).journal) as conn:
        conn.execute("UPDATE runs SET status = 'running', loop_json = ?", (loop_json,))
    return root, run_id


@pytest.mark.parametrize(
    ("loop", "verb"),
    [({"max_iterations": 3, "paused": PAUSE}, "continue"), ({"max_iterations": 3}, "resume")],
)
def test_status_says_how_to_go_on_with_a_running_run(
    mission_dir: Path, loop: dict[str, object], verb: str
) -> None:
    root, run_id = running_with_loop(mission_dir, json.dumps(loop))
    done = cli("status", "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    (listed,) = json.loads(done.stdout)["runs"]
    assert listed["resume_command"] == f"autoresearch {verb} {run_id}"
    assert listed["paused"] == loop.get("paused")


def test_a_loop_that_is_no_mapping_is_refused_in_one_line(mission_dir: Path) -> None:
    root, _ = running_with_loop(mission_dir, "[1, 2]")
    done = cli("status", cwd=root)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert "loop_json" in line and "valid JSON of its record" in line
