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
# score = value.txt + one per bonus file. The reading of lane 1's candidate marks READING
# (lane 2's session waits for it: LANE_WAIT), then holds the slot until lane 2's candidate
# was replayed onto it (a worktree's HEAD is a child of its own) or, where the two conflict
# (SPECULATE=conflict), until lane 2 committed and the driver had a second to try; a replay
# that never comes in 60 s fails the reading, and the test with it. Other readings at once.
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, pathlib, subprocess, time
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
    def heads():  # (parent, subject) of each worktree's HEAD
        listed = git("worktree", "list", "--porcelain").splitlines()
        shas = [line.split()[1] for line in listed if line.startswith("HEAD ")]
        return [tuple(git("log", "-1", "--format=%P%n%s", sha).split("\\n")) for sha in shas]
    def lane_2_done(mine):
        found = heads()
        if os.environ.get("SPECULATE") == "conflict":
            return any(subject.startswith("lane 2 ") for _, subject in found)
        return any(parent == mine for parent, _ in found)
    value, bonus = float(open("value.txt").read()), glob.glob("bonus-*.txt")
    if git("log", "-1", "--format=%s").startswith("lane 1 "):
        pathlib.Path(os.environ["READING"]).touch()
        mine, deadline = git("rev-parse", "HEAD"), time.monotonic() + 60
        while not lane_2_done(mine):
            if time.monotonic() > deadline:
                raise SystemExit("lane 2's candidate was never replayed onto this one")
            time.sleep(0.05)
        if os.environ.get("SPECULATE") == "conflict":
            time.sleep(1)  # a conflicting replay leaves nothing to see: the driver's try
    print(json.dumps({"pass": True, "score": value + len(bonus)}))
    """
)


def _run(repo: Repo, plan: str, marks: Path, speculate: str = "replay") -> list[dict[str, Any]]:
    """Two lanes, one slot, two iterations: lane 1's session ends at once, lane 2's once lane
    1's reading has started, and that reading holds the slot until lane 2's candidate was
    replayed onto it (EVALUATOR). The recorded iterations (the baseline left out)."""
    repo.write("scripts/score.py", EVALUATOR)
    extra = "evaluation:\n  slots: 1\n"
    # unboxed: the mark lies outside the repository, where a box would not show it
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra, unboxed=True))
    reading = marks / "reading"
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "T1", "--json",
               "--lanes", "2", "--max-iterations", "2", cwd=repo.root, timeout=180,
               env={"LANE_PLAN": plan, "LANE_WAIT": f"2:{reading}", "READING": str(reading),
                    "SPECULATE": speculate})  # fmt: skip
    assert done.returncode == 0, done.stderr
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    its: list[dict[str, Any]] = status["iterations"][1:]
    assert [it["agent"]["lane"] for it in its] == [1, 2]
    return its


def test_the_next_candidate_is_replayed_onto_the_one_in_the_slot_and_measured_once(
    repo: Repo, tmp_path: Path
) -> None:
    its = _run(repo, "1:value=5:0,2:bonus:0", tmp_path)
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
    repo: Repo, tmp_path: Path
) -> None:
    its = _run(repo, "1:value=0:0,2:bonus:0", tmp_path)
    assert [(it["decision"], it["evaluator"]["score"]) for it in its] == [
        ("discard", 0.0),
        ("keep", 2.0),  # value 1 of the baseline and its own bonus file: not lane 1's 0
    ]
    assert any("while it was measured" in note for note in its[1]["notes"])
    head = git(repo.root, "rev-parse", BRANCH)
    assert git(repo.root, "rev-parse", f"{head}^") == its[0]["base_commit"]  # the baseline
    assert git(repo.root, "show", f"{head}:value.txt") == "1"


def test_a_conflict_with_a_candidate_that_is_discarded_is_no_verdict(
    repo: Repo, tmp_path: Path
) -> None:
    # lane 2 writes value.txt too: it cannot be replayed onto lane 1's candidate, but lane 1
    # is discarded and lane 2 measured on the baseline, where it applies
    its = _run(repo, "1:value=0:0,2:value=9:0", tmp_path, speculate="conflict")
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
