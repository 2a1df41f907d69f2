"""Kill -9 of `run --lanes 2` (two evaluation slots) while a lane's first reading is *held*:
taken on the other lane's candidate in flight (`lanes._Driver._onto`), back before that one was
judged, waiting for its verdict (`Lane.held`, failpoint `lanes.reading_held`). Nothing of it
is in the journal: resume judges each of the two candidates once, on a reading of the commit
it is kept or discarded as (the held reading's candidate is measured again, on the incumbent),
and completes, every kept commit on the run branch.

The first driver: lane 1's first candidate is kept (the keeps so far then favour a reading on
the tip), its second (`A`) is measured on that keep and its evaluator waits for the test's
`release`; lane 2's session ends once A's reading has started, its candidate (`B`) is replayed
onto A and measured there, and that reading is back while A's still waits: held, killed. The
test releases A's evaluator before the resume; A is kept, or (DISCARD_A) scores below the
incumbent and is discarded."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_lane_tree_kills import assert_lanes_sound, details

from helpers import GIT_ENV, Repo, git, resume_detached, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_agent.py'}"
RUN_ID = "missions-demo-h1"
A, B = ["bonus-1-1.txt", "bonus-1-2.txt"], ["bonus-1-1.txt", "bonus-1-2.txt", "bonus-2-1.txt"]


def score(bonus: list[str], discard_a: bool) -> float:
    """The evaluator's score of a tree with these bonus files: one per file, and with
    `discard_a` ten less with A's file (A then scores below the keep it is built on, and a
    reading of anything built on A says so)."""
    return float(len(bonus) - (10 if discard_a and "bonus-1-2.txt" in bonus else 0))


EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, time
    bonus = sorted(glob.glob("bonus-*.txt"))
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(" ".join(bonus) + "\\n")
    gate = os.environ["GATE"]
    if bonus == ["bonus-1-1.txt", "bonus-1-2.txt"]:  # A on lane 1's first keep
        open(os.path.join(gate, "started"), "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(gate, "release")) and time.monotonic() < deadline:
            time.sleep(0.02)
    minus = 10 if os.environ["DISCARD_A"] == "1" and "bonus-1-2.txt" in bonus else 0
    print(json.dumps({"pass": True, "score": len(bonus) - minus}))
    """
)


def _bonus_of(repo: Path, commit: str) -> list[str]:
    files = git(repo, "ls-tree", "--name-only", commit).split("\n")
    return sorted(f for f in files if f.startswith("bonus-"))


@pytest.mark.parametrize("discard_a", [False, True], ids=["a-kept", "a-discarded"])
def test_a_driver_killed_with_a_reading_held_judges_each_candidate_once_on_resume(
    repo: Repo, tmp_path: Path, discard_a: bool
) -> None:
    evals, gate = tmp_path / "evals.log", tmp_path / "gate"
    gate.mkdir()
    repo.write("scripts/score.py", EVALUATOR)
    extra = "evaluation:\n  slots: 2\n"
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra))
    env = {"LANE_PLAN": "1:bonus:0,2:bonus:0", "LANE_WAIT": f"2:{gate / 'started'}",
           "EVAL_LOG": str(evals), "GATE": str(gate), "DISCARD_A": "1" if discard_a else "0"}  # fmt: skip
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "H1", "--lanes", "2", "--max-iterations", "3", "--json"]  # fmt: skip
    done = subprocess.run(
        argv, cwd=repo.root, capture_output=True, text=True, timeout=180,
        env={**os.environ, **GIT_ENV, **env, "AUTORESEARCH_FAILPOINTS": "lanes.reading_held"},
        start_new_session=True,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    # what the kill left: lane 1's first keep judged, B's reading on A taken, A's still waiting
    readings = [line for line in evals.read_text().splitlines() if line]
    assert readings[-3:] == ["bonus-1-1.txt", " ".join(A), " ".join(B)], readings
    before = details(repo.root, RUN_ID)["iterations"]
    assert [it["decision"] for it in before] == ["baseline", "keep"], before
    (gate / "release").write_text("")

    resumed = resume_detached(repo.root, RUN_ID, env)
    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 3)
    its: list[dict[str, Any]] = d["iterations"][1:]
    by_lane: dict[int, list[str]] = {}
    for it in its:
        by_lane.setdefault(it["agent"]["lane"], []).append(it["decision"])
    # each of the two candidates in flight judged once, none lost, none doubled
    assert by_lane == {1: ["keep", "discard" if discard_a else "keep"], 2: ["keep"]}, its
    # every verdict is on a reading of the commit it names: the score its own tree gives
    # (B's held reading, taken on A, is worth 3, or -7 with A discarded: never B's)
    for it in its:
        bonus = _bonus_of(repo.root, it["candidate_commit"])
        assert it["evaluator"]["score"] == score(bonus, discard_a), (it, bonus)
    # each keep is of the run branch's head then: built on the keep before it
    keeps = [it["candidate_commit"] for it in its if it["decision"] == "keep"]
    for older, newer in itertools.pairwise(keeps):
        assert git(repo.root, "rev-parse", f"{newer}^") == older, (older, newer)
    final = _bonus_of(repo.root, d["last_kept_commit"])
    assert final == (["bonus-1-1.txt", "bonus-2-1.txt"] if discard_a else B), final
    # B was measured again after the resume: its reading before the kill judged nothing
    lane_two = evals.read_text().splitlines()[len(readings) :]
    assert any("bonus-2-1.txt" in line for line in lane_two), lane_two
