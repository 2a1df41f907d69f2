"""With more than one evaluation slot, a candidate's first reading may start while another
candidate's is in flight (`lanes._Driver._onto`): it is taken on the incumbent, or – when the
keeps so far make it the better bet (`lanes.measure_on_tip`) – replayed onto the one in flight
and measured there, then judged once that one is kept (a discard there makes the reading
stale: the candidate is replayed onto the real incumbent and measured again). Either way a
keep is a keep of the run branch's head, measured as it is."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents.base import PastIteration
from autoresearch.states import DecisionKind
from autoresearch.supervisor.lanes import keep_record, measure_on_tip
from helpers import Repo, cli, git, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
RUN_ID = "missions-demo-t1"
BRANCH = "autoresearch/missions-demo/t1"

# score = the bonus files; every reading logs its tree's bonus files when it starts. Lane 1's
# second candidate measured without lane 2's file marks `started` and waits for `release`,
# which a reading of lane 2's candidate writes: the two readings are in flight together
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, time
    bonus = sorted(glob.glob("bonus-*.txt"))
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(" ".join(bonus) + "\\n")
    gate = os.environ["GATE"]
    if bonus == ["bonus-1-1.txt", "bonus-1-2.txt"]:
        open(os.path.join(gate, "started"), "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(gate, "release")) and time.monotonic() < deadline:
            time.sleep(0.02)
    elif "bonus-2-1.txt" in bonus:
        open(os.path.join(gate, "release"), "w").close()
    print(json.dumps({"pass": True, "score": len(bonus)}))
    """
)


@pytest.mark.parametrize(
    ("kept", "judged", "depth", "on_tip"),
    [
        (0, 0, 0, False),  # nothing in flight: the incumbent
        (0, 0, 1, False),  # nothing judged yet: even odds, a tie goes to the incumbent
        (1, 1, 1, True),  # 2/3 that the one in flight is kept
        (0, 1, 1, False),
        (1, 2, 1, False),  # 1/2 again
        (2, 3, 1, True),
        (1, 1, 2, True),  # (2/3)² = 4/9 > 1/3
        (2, 3, 2, False),  # (3/5)² = 9/25 < 2/5
        (3, 4, 3, False),  # (2/3)³ = 8/27 < 1/3
        (9, 9, 3, True),  # (10/11)³ > 1/11
        (1, 10, 1, False),  # a run that mostly discards: the incumbent
    ],
)
def test_measure_on_tip(kept: int, judged: int, depth: int, on_tip: bool) -> None:
    assert measure_on_tip(kept, judged, depth) is on_tip


K, D, N, INT = (DecisionKind.KEEP, DecisionKind.DISCARD, DecisionKind.NOOP,
              DecisionKind.INTERRUPTED)  # fmt: skip


@pytest.mark.parametrize(
    ("decisions", "record"),
    [
        ([], (0, 0)),
        ([K], (1, 1)),
        ([K, D, D], (1, 3)),
        ([N, INT, None], (0, 0)),  # judged nothing: no evidence either way
        ([D, N, K, INT, K], (2, 3)),
    ],
)
def test_keep_record(decisions: list[DecisionKind | None], record: tuple[int, int]) -> None:
    past = [PastIteration(n, d, "", ()) for n, d in enumerate(decisions, start=1)]
    assert keep_record(past) == record


def test_a_candidate_measured_onto_the_one_in_flight_is_judged_with_that_reading_once_it_is_kept(
    repo: Repo, tmp_path: Path
) -> None:
    """Two lanes, two slots, three iterations, every candidate kept. Lane 1's first candidate
    is kept; its second is being measured when lane 2's session ends (it waits for that
    reading to start). Lane 2's candidate is replayed onto lane 1's second and measured at
    once in the other slot; lane 1's is kept, then lane 2's is judged with the reading it
    already has. Three candidates, three readings: none taken twice (measured on lane 1's
    first keep instead, one of the two readings went stale when the other was kept)."""
    evals, gate = tmp_path / "evals.log", tmp_path / "gate"
    gate.mkdir()
    repo.write("scripts/score.py", EVALUATOR)
    extra = "evaluation:\n  slots: 2\n"
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra, unboxed=True))
    env = {"LANE_PLAN": "1:bonus:0,2:bonus:0", "LANE_WAIT": f"2:{gate / 'started'}",
           "EVAL_LOG": str(evals), "GATE": str(gate)}  # fmt: skip
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "T1", "--json",
               "--lanes", "2", "--max-iterations", "3", cwd=repo.root, env=env,
               timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    # the baseline's readings (no bonus file) left out
    readings = [line for line in evals.read_text().splitlines() if line]
    assert readings == [
        "bonus-1-1.txt",
        "bonus-1-1.txt bonus-1-2.txt",
        "bonus-1-1.txt bonus-1-2.txt bonus-2-1.txt",
    ]
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    its: list[dict[str, Any]] = status["iterations"][1:]
    assert [(it["agent"]["lane"], it["decision"], it["evaluator"]["score"]) for it in its] == [
        (1, "keep", 1.0),
        (1, "keep", 2.0),
        (2, "keep", 3.0),
    ]
    # lane 2's keep is the run branch's head, built on lane 1's second keep
    head = git(repo.root, "rev-parse", BRANCH)
    assert head == its[2]["candidate_commit"]
    assert git(repo.root, "rev-parse", f"{head}^") == its[1]["candidate_commit"]
    assert its[2]["base_commit"] == its[1]["candidate_commit"]
    assert any("while it was measured" in note for note in its[2]["notes"]), its[2]["notes"]


# score = the bonus files. A reading of a tree with lane 1's file and not lane 2's marks
# `started` and waits for `release`, which a reading with lane 2's file writes
RESUMED_EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, time
    bonus = sorted(glob.glob("bonus-*.txt"))
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(" ".join(bonus) + "\\n")
    gate = os.environ["GATE"]
    lane1 = any(b.startswith("bonus-1-") for b in bonus)
    lane2 = any(b.startswith("bonus-2-") for b in bonus)
    if lane1 and not lane2:
        open(os.path.join(gate, "started"), "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(gate, "release")) and time.monotonic() < deadline:
            time.sleep(0.02)
    elif lane2:
        open(os.path.join(gate, "release"), "w").close()
    print(json.dumps({"pass": True, "score": len(bonus)}))
    """
)


def test_a_continued_run_bets_with_the_keeps_it_already_has(repo: Repo, tmp_path: Path) -> None:
    """The odds of `measure_on_tip` come from the run's recorded keeps, not only from what this
    driver judged: a run with one keep, continued with two lanes and two slots, takes lane 2's
    first reading on lane 1's candidate in flight (2/3 that it is kept), as the driver before
    would have. Every candidate is kept: two readings for two candidates. A driver that forgot
    the keep (even odds, a tie to the incumbent) measures lane 2 on the incumbent, then again
    after the replay: three."""
    evals, gate = tmp_path / "evals.log", tmp_path / "gate"
    gate.mkdir()
    repo.write("scripts/score.py", RESUMED_EVALUATOR)
    repo.mission(
        sandbox=sandbox_text(
            "python3 scripts/score.py", extra="evaluation:\n  slots: 2\n", unboxed=True
        )
    )
    env = {"LANE_WAIT": f"2:{gate / 'started'}", "EVAL_LOG": str(evals), "GATE": str(gate)}
    first = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "T1", "--json",
                "--max-iterations", "1", cwd=repo.root, env=env, timeout=180)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["status"] == "completed"
    evals.write_text("")  # the continued run's readings only
    again = cli("continue", RUN_ID, "--lanes", "2", "--max-iterations", "+2", "--json",
                cwd=repo.root, env=env, timeout=180)  # fmt: skip
    assert again.returncode == 0, again.stderr
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    its: list[dict[str, Any]] = status["iterations"][1:]
    assert [(it["decision"], it["evaluator"]["score"]) for it in its] == [
        ("keep", 1.0),
        ("keep", 2.0),
        ("keep", 3.0),
    ]
    assert [it["agent"]["lane"] for it in its[1:]] == [1, 2]
    readings = [line for line in evals.read_text().splitlines() if line]
    assert len(readings) == 2, readings
    assert any("while it was measured" in note for note in its[2]["notes"]), its[2]["notes"]
