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


# A's evaluator waits for the test's `release`, or (with HELD_GATE) until the journal shows lane
# 2's reading held: the driver then judges A and B's held reading with it in one run
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, sqlite3, time
    bonus = sorted(glob.glob("bonus-*.txt"))
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(" ".join(bonus) + "\\n")
    gate = os.environ["GATE"]

    def held():
        if not os.environ.get("HELD_GATE"):
            return False
        uri = "file:" + os.environ["HELD_GATE"] + "?mode=ro"
        with sqlite3.connect(uri, uri=True, timeout=5) as conn:
            rows = conn.execute("SELECT detail FROM run_lanes WHERE lane = 2").fetchall()
        return any("waits for" in (detail or "") for (detail,) in rows)

    if bonus == ["bonus-1-1.txt", "bonus-1-2.txt"]:  # A on lane 1's first keep
        open(os.path.join(gate, "started"), "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(gate, "release")) and time.monotonic() < deadline:
            if held():
                break
            time.sleep(0.05)
    minus = 10 if os.environ["DISCARD_A"] == "1" and "bonus-1-2.txt" in bonus else 0
    print(json.dumps({"pass": True, "score": len(bonus) - minus}))
    """
)


def _bonus_of(repo: Path, commit: str) -> list[str]:
    files = git(repo, "ls-tree", "--name-only", commit).split("\n")
    return sorted(f for f in files if f.startswith("bonus-"))


# (failpoint, A's evaluator released by the journal's held lane, the decisions journaled at
# the kill): killed with B's reading held; with A's verdict recorded and B's reading still only
# the driver's (held; stale once A is discarded); with B judged on its held reading
KILLS = [
    ("lanes.reading_held", False, ["baseline", "keep"]),
    ("step.after_decided@3", True, ["baseline", "keep", "A"]),
    ("step.after_decided@4", True, ["baseline", "keep", "A", "keep"]),
]


@pytest.mark.parametrize("discard_a", [False, True], ids=["a-kept", "a-discarded"])
@pytest.mark.parametrize(("failpoint", "held_gate", "journaled"), KILLS, ids=[k[0] for k in KILLS])
def test_a_driver_killed_around_a_held_reading_judges_each_candidate_once_on_resume(
    repo: Repo,
    tmp_path: Path,
    discard_a: bool,
    failpoint: str,
    held_gate: bool,
    journaled: list[str],
) -> None:
    if discard_a and failpoint == "step.after_decided@4":
        # A discarded makes B's held reading stale: B's 4th decision is on a fresh reading
        journaled = ["baseline", "keep", "A", "keep"]
    a_verdict = "discard" if discard_a else "keep"
    journaled = [a_verdict if x == "A" else x for x in journaled]
    evals, gate = tmp_path / "evals.log", tmp_path / "gate"
    gate.mkdir()
    repo.write("scripts/score.py", EVALUATOR)
    extra = "evaluation:\n  slots: 2\n"
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra, unboxed=True))
    env = {"LANE_PLAN": "1:bonus:0,2:bonus:0", "LANE_WAIT": f"2:{gate / 'started'}",
           "EVAL_LOG": str(evals), "GATE": str(gate), "DISCARD_A": "1" if discard_a else "0"}  # fmt: skip
    if held_gate:
        env["HELD_GATE"] = str(repo.root / ".autoresearch/journal.sqlite3")
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "H1", "--lanes", "2", "--max-iterations", "3", "--json"]  # fmt: skip
    done = subprocess.run(
        argv, cwd=repo.root, capture_output=True, text=True, timeout=180,
        env={**os.environ, **GIT_ENV, **env, "AUTORESEARCH_FAILPOINTS": failpoint},
        start_new_session=True,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    # what the kill left: lane 1's first keep judged, B's reading on A taken (A's after it)
    readings = [line for line in evals.read_text().splitlines() if line]
    assert readings[:3] == ["bonus-1-1.txt", " ".join(A), " ".join(B)], readings
    before = details(repo.root, RUN_ID)["iterations"]
    assert [it["decision"] for it in before] == journaled, before
    if len(journaled) == 4:  # B judged: on its held reading once A is kept, else on the keep
        again = [] if not discard_a else ["bonus-1-1.txt bonus-2-1.txt"]
        assert readings[3:] == again, readings
    (gate / "release").write_text("")

    resumed = resume_detached(repo.root, RUN_ID, {k: v for k, v in env.items() if k != "HELD_GATE"})
    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 3)
    its: list[dict[str, Any]] = d["iterations"][1:]
    by_lane: dict[int, list[str]] = {}
    for it in its:
        by_lane.setdefault(it["agent"]["lane"], []).append(it["decision"])
    # each of the two candidates in flight judged once, none lost, none doubled
    assert by_lane == {1: ["keep", a_verdict], 2: ["keep"]}, its
    # every verdict is on a reading of the commit it names: the score its own tree gives
    # (B's held reading, taken on A, is worth 3, or -7 with A discarded: never B's then)
    for it in its:
        bonus = _bonus_of(repo.root, it["candidate_commit"])
        assert it["evaluator"]["score"] == score(bonus, discard_a), (it, bonus)
    # each keep is of the run branch's head then: built on the keep before it
    keeps = [it["candidate_commit"] for it in its if it["decision"] == "keep"]
    for older, newer in itertools.pairwise(keeps):
        assert git(repo.root, "rev-parse", f"{newer}^") == older, (older, newer)
    final = _bonus_of(repo.root, d["last_kept_commit"])
    assert final == (["bonus-1-1.txt", "bonus-2-1.txt"] if discard_a else B), final
    # B is measured again after the resume unless its verdict was in the journal already
    after = [line for line in evals.read_text().splitlines() if line][len(readings) :]
    measured_again = any("bonus-2-1.txt" in line for line in after)
    assert measured_again is (len(journaled) < 4), after
