"""`autoresearch demo --lanes 4` (issue 14): the shipped demo splits its hyperparameters over
the lanes, so their candidates replay onto each other's keeps without a conflict."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli


def test_the_lanes_demo_keeps_from_several_lanes_without_a_replay_conflict(
    tmp_path: Path,
) -> None:
    demo = tmp_path / "demo"
    done = cli("demo", str(demo), "--lanes", "4", "--iterations", "12", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    run_id = json.loads(cli("--repo", str(demo), "status", "--json", cwd=tmp_path).stdout)["runs"][
        0
    ]["run_id"]
    details = json.loads(cli("--repo", str(demo), "status", run_id, "--json", cwd=tmp_path).stdout)
    its = [it for it in details["iterations"] if it["decision"] != "baseline"]
    assert len(its) == 12
    assert not [it for it in its if it["decision_reason"] == "replay conflict"]
    keeps = {lane["lane"]: lane["keeps"] for lane in details["lanes"]}
    assert sum(1 for n in keeps.values() if n) > 1, keeps  # keeps from more than one lane
    replayed = [n for it in its for n in it["notes"] if n.startswith("replayed onto ")]
    assert replayed  # lanes did build on older incumbents: the replays merged cleanly
