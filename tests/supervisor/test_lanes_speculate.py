"""With one evaluation slot, the candidate next in line is replayed onto the one being measured
(`lanes._Driver._speculate`): a keep lets its reading start at once; a discard or a conflict
there changes nothing that counts (it is replayed onto the real incumbent in its turn, and a
conflict with an unjudged candidate is never a verdict)."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

from helpers import Repo, cli, git, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
RUN_ID = "missions-demo-t1"
BRANCH = "autoresearch/missions-demo/t1"
# score = value.txt + one per bonus file; a reading of a tree whose value.txt is not the
# baseline's 1 (lane 1's candidates) sleeps VALUE_SLEEP, any other none
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, time
    value, bonus = float(open("value.txt").read()), glob.glob("bonus-*.txt")
    if value != 1 and not bonus:
        time.sleep(float(os.environ.get("VALUE_SLEEP", "0")))
    print(json.dumps({"pass": True, "score": value + len(bonus)}))
    """
)


def _run(repo: Repo, plan: str) -> list[dict[str, Any]]:
    """Two lanes, one slot, two iterations: lane 1's session ends at once and its reading takes
    2.5 s; lane 2's session sleeps 1 s (a margin either way on a loaded machine) and ends
    during that reading. The recorded iterations (the baseline left out)."""
    repo.write("scripts/score.py", EVALUATOR)
    extra = "evaluation:\n  slots: 1\n"
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra))
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "T1", "--json",
               "--lanes", "2", "--max-iterations", "2", cwd=repo.root, timeout=180,
               env={"LANE_PLAN": plan, "VALUE_SLEEP": "2.5"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    its: list[dict[str, Any]] = status["iterations"][1:]
    assert [it["agent"]["lane"] for it in its] == [1, 2]
    return its


def test_the_next_candidate_is_replayed_onto_the_one_in_the_slot_and_measured_once(
    repo: Repo,
) -> None:
    its = _run(repo, "1:value=5:0,2:bonus:1")
    assert [(it["decision"], it["evaluator"]["score"]) for it in its] == [
        ("keep", 5.0),
        ("keep", 6.0),
    ]
    assert any("while it was measured" in note for note in its[1]["notes"]), its[1]["notes"]
    # replayed once: not again once lane 1 was kept
    assert len([note for note in its[1]["notes"] if "replayed onto" in note]) == 1
    head = git(repo.root, "rev-parse", BRANCH)
    assert head == its[1]["candidate_commit"]
    assert git(repo.root, "rev-parse", f"{head}^") == its[0]["candidate_commit"]
    # one reading each, of the commit that was judged: none taken twice, none stale
    assert [row[:2] for row in _rows(repo) if row[0] > 0] == [(1, "candidate"), (2, "candidate")]
    assert [row[2] for row in _rows(repo) if row[0] > 0] == [it["candidate_commit"] for it in its]


def test_a_candidate_replayed_onto_one_that_is_discarded_is_measured_on_the_incumbent(
    repo: Repo,
) -> None:
    its = _run(repo, "1:value=0:0,2:bonus:1")
    assert [(it["decision"], it["evaluator"]["score"]) for it in its] == [
        ("discard", 0.0),
        ("keep", 2.0),  # value 1 of the baseline and its own bonus file: not lane 1's 0
    ]
    assert any("while it was measured" in note for note in its[1]["notes"])
    head = git(repo.root, "rev-parse", BRANCH)
    assert git(repo.root, "rev-parse", f"{head}^") == its[0]["base_commit"]  # the baseline
    assert git(repo.root, "show", f"{head}:value.txt") == "1"


def test_a_conflict_with_a_candidate_that_is_discarded_is_no_verdict(repo: Repo) -> None:
    # lane 2 writes value.txt too: it cannot be replayed onto lane 1's candidate, but lane 1
    # is discarded and lane 2 measured on the baseline, where it applies
    its = _run(repo, "1:value=0:0,2:value=9:1")
    assert [(it["decision"], it["evaluator"]["score"]) for it in its] == [
        ("discard", 0.0),
        ("keep", 9.0),
    ]
    assert git(repo.root, "show", f"{BRANCH}:value.txt") == "9"


def _rows(repo: Repo) -> list[Any]:
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        return conn.execute("SELECT iteration, role, commit_sha FROM evaluations").fetchall()
    finally:
        conn.close()
