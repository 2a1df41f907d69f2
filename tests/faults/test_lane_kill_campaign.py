"""The tree-kill campaign with lanes (marker `slow`; `.ci/run` runs it): `run --lanes K`
(K = 2 or 3, lanes that conflict, add files or do nothing, at random speeds) with everything it
runs – driver, every lane's agent, git, evaluators – killed with SIGKILL at a random instant,
then `resume`d (itself killed at random instants a few times) until it completes. Every trial
must end completed with no operator action: no traceback, each iteration and each artifact
judged once, no kept commit lost, the run branch at the last kept commit. Hostile lane
sessions (another branch, a detached HEAD, a rewritten branch, an invalid or torn report that
kills the driver) never get a commit kept off the run's history.

AUTORESEARCH_CAMPAIGN_TRIALS and AUTORESEARCH_CAMPAIGN_SEED change the size and the instants.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from pathlib import Path

import pytest
from test_lane_tree_kills import assert_lanes_sound, lane_mission
from test_tree_kill_campaign import ACTIONS, HOSTILE, REFUSALS, drive, run_status

from helpers import Repo, cli, git

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("AUTORESEARCH_CAMPAIGN_TRIALS", "8"))
SEED = int(os.environ.get("AUTORESEARCH_CAMPAIGN_SEED", "11"))
AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_agent.py'}"
RUN_ID = "missions-demo-k1"
ITERATIONS = 5


def plan(rng: random.Random, lanes: int) -> str:
    """Each lane's action (a lane writing value=N again once it is kept has nothing to commit,
    so the fake exits 1: the run's agent failure limit is off)."""
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
             str(lanes), "--max-iterations", str(ITERATIONS), "--json",
             "--max-agent-failures", "0"]  # fmt: skip
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


@pytest.mark.parametrize("trial", range(TRIALS))
def test_hostile_lane_sessions_and_torn_kills_never_take_the_history(
    repo: Repo, trial: int
) -> None:
    rng = random.Random(SEED * 1000 + 900 + trial)
    repo.mission()
    plan = ",".join(rng.choice(ACTIONS) for _ in range(6))  # each lane's sessions in turn
    args = ["run", "missions/demo", "--agent", HOSTILE, "--run-tag", "H2", "--lanes", "2",
            "--max-iterations", "5", "--json"]  # fmt: skip
    log = []
    for _ in range(8):  # a torn session kills the driver's group: resume, as often as it takes
        code, err = drive(repo.root, args, None, {"HOSTILE_PLAN": plan})
        log.append(err)
        assert "Traceback" not in err, err
        if code != -signal.SIGKILL:
            break
        args = ["resume", "missions-demo-h2", "--json"]
    done = cli("--repo", str(repo.root), "status", "missions-demo-h2", "--json", cwd=repo.root)
    d = json.loads(done.stdout)
    assert d["status"] in ("completed", "failed", "stopped"), (plan, "\n".join(log))
    if d["status"] == "failed":  # only a session's own invalid report fails a run
        assert any(r in d["stop_reason"] for r in REFUSALS), (plan, d["stop_reason"])
    kept = d["last_kept_commit"]
    assert git(repo.root, "rev-parse", f"refs/heads/{d['branch_name']}") == kept, plan
    for it in d["iterations"]:
        if it["decision"] == "keep":
            git(repo.root, "merge-base", "--is-ancestor", it["candidate_commit"], kept)
