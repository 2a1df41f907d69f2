"""A lane's candidate.json is read and rewritten as the contract's record
(`contracts/candidate.CandidateArtifact`): a replay changes its base and commit and nothing
else, in the same bytes as before; an artifact that is not a valid record is left as the
session wrote it, so step judges it as the single loop does."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from autoresearch.contracts.candidate import MSG_BASE_REQUIRED
from autoresearch.fsutil import dump_json
from helpers import Repo, cli, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
EVALUATOR = (
    'import glob, json\nprint(json.dumps({"pass": True, "score": len(glob.glob("bonus-*"))}))\n'
)


def _run(repo: Repo, tag: str, plan: str, *args: str) -> dict[str, Any]:
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", tag, "--json", *args,
               cwd=repo.root, env={"LANE_PLAN": plan}, timeout=180)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    run_id = f"missions-demo-{tag.lower()}"
    return dict(json.loads(cli("status", run_id, "--json", cwd=repo.root).stdout))


def _mission(repo: Repo) -> None:
    repo.write("scripts/score.py", EVALUATOR)
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))


def test_a_replayed_artifact_changes_only_its_base_and_commit_in_the_same_bytes(
    repo: Repo,
) -> None:
    _mission(repo)
    # lane 2's session ends after lane 1's keep: its candidate is replayed onto that keep
    status = _run(repo, "T1", "1:bonus:0,2:bonus:1.5", "--lanes", "2", "--max-iterations", "2")
    its = status["iterations"][1:]
    assert [it["decision"] for it in its] == ["keep", "keep"]
    replayed = its[1]
    assert any("replayed onto" in note for note in replayed["notes"]), replayed["notes"]
    assert replayed["base_commit"] == its[0]["candidate_commit"]
    # what step judged (its sha256) is the session's artifact, keys in the session's order,
    # with the new base and commit: the bytes the dict rewrite of before wrote
    judged = {
        "status": "candidate",
        "candidate_commit": replayed["candidate_commit"],
        "base_commit": replayed["base_commit"],
        "description": "lane 2 session 1: bonus",
        "notes": [],
        "created_at": "2026-01-01T00:00:00Z",
    }
    sha = hashlib.sha256(dump_json(judged).encode()).hexdigest()
    assert _artifact_sha256(repo, replayed["iteration"]) == sha


def _artifact_sha256(repo: Repo, iteration: int) -> str:
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        query = "SELECT artifact_sha256 FROM iterations WHERE iteration = ?"
        return str(conn.execute(query, (iteration,)).fetchone()[0])
    finally:
        conn.close()


def test_an_artifact_without_its_base_fails_a_lane_as_it_fails_the_single_loop(
    repo: Repo,
) -> None:
    _mission(repo)
    # a malformed artifact is a failed session (issue 38): a limit of one ends the run on it
    limits = ("--max-iterations", "1", "--max-agent-failures", "1")
    single = _run(repo, "T1", "0:nobase:0", *limits)
    lanes = _run(repo, "T2", "1:nobase:0", "--lanes", "1", *limits)
    for status in (single, lanes):
        assert (status["status"], status["stop_reason"]) == ("failed", MSG_BASE_REQUIRED)
        assert status["iterations"][-1]["decision"] == "error"
