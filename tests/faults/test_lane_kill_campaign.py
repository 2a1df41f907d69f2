"""The tree-kill campaign with lanes (marker `slow`; `.ci/run` runs it): `run --lanes K`
(K = 2 or 3, lanes that conflict, add files or do nothing, at random speeds) with everything it
runs – driver, every lane's agent, git, evaluators – killed with SIGKILL at a random instant,
then `resume`d (itself killed at random instants a few times) until it completes. Every trial
must end completed with no operator action: no traceback, each iteration and each artifact
judged once, no kept commit lost, the run branch at the last kept commit.

AUTORESEARCH_CAMPAIGN_TRIALS and AUTORESEARCH_CAMPAIGN_SEED change the size and the instants.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from test_lane_tree_kills import assert_lanes_sound, lane_mission
from test_tree_kill_campaign import drive, run_status

from helpers import Repo

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("AUTORESEARCH_CAMPAIGN_TRIALS", "8"))
SEED = int(os.environ.get("AUTORESEARCH_CAMPAIGN_SEED", "11"))
AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_agent.py'}"
RUN_ID = "missions-demo-k1"
ITERATIONS = 5


def plan(rng: random.Random, lanes: int) -> str:
    actions = ["bonus", "bonus", "value=5", "value=7", "noop"]
    return ",".join(
        f"{k}:{rng.choice(actions)}:{rng.uniform(0.0, 0.8):.2f}" for k in range(1, lanes + 1)
    )


@pytest.mark.parametrize("trial", range(TRIALS))
def test_lanes_killed_at_a_random_instant_resume_to_completion(repo: Repo, trial: int) -> None:
    rng = random.Random(SEED * 1000 + 700 + trial)
    lanes = rng.choice([2, 3])
    lane_mission(repo)
    env = {"LANE_PLAN": plan(rng, lanes)}
    first = ["run", "missions/demo", "--agent", AGENT, "--run-tag", "K1", "--lanes",
             str(lanes), "--max-iterations", str(ITERATIONS), "--json"]  # fmt: skip
    code, err = drive(repo.root, first, rng.uniform(0.3, 8.0), env)
    log = [err]
    for attempt in range(8):
        assert "Traceback" not in err, err
        if code == 0:
            break
        known = run_status(repo.root, RUN_ID)
        if known in ("completed", "stopped"):  # killed after it recorded the end: it is over
            code = 0
            break
        args = ["resume", RUN_ID, "--json"] if known else first
        kill_after = rng.uniform(0.3, 4.0) if attempt < 2 else None
        code, err = drive(repo.root, args, kill_after, env)
        log.append(err)
    assert code == 0, env["LANE_PLAN"] + "\n---\n" + "\n---\n".join(log)
    assert_lanes_sound(repo.root, RUN_ID, ITERATIONS)
