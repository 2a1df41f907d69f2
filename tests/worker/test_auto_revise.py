"""auto_revise: after failed checks the job's agent runs again with a failure digest, at most
`revise_passes` times, then the checks again. Whole jobs through the real MCP client with a
`cmd:` agent that gets the task wrong first and right when told what failed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from worker_helpers import agent, job_repo

from autoresearch.contracts.check_record import CheckRecord
from autoresearch.contracts.job_result import CheckRun
from autoresearch.mcp.server import build_server
from autoresearch.paths import job_paths
from autoresearch.states import ProcessState
from autoresearch.worker.instructions import revise_digest
from helpers import Repo

CHECK = {"command": "grep -q 'VALUE = 2' src/app.py", "timeout_seconds": 30}


def job(first: str, again: str, **extra: Any) -> dict[str, Any]:
    return {
        "prompt": "Set VALUE to 2 in src/app.py.",
        "verification_policy": {"task_kind": "modifying"},
        "agent": agent("revise", "src/app.py", first, again),
        "scoped_patch": {"paths": ["src"]},
        "checks": [CHECK],
        **extra,
    }


async def run(repo: Repo, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    async with connect(build_server(repo.root)) as t:
        started = await t.ok("job_start", args)
        job_id = started.data["job_id"]
        done = await t.ok("job_wait", {"job_id": job_id, "timeout_ms": 60_000})
    return job_id, done.data["outcome"]


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


@pytest.mark.anyio
async def test_a_revise_pass_fixes_a_failing_check(repo: Repo) -> None:
    job_id, outcome = await run(repo, job("VALUE = 3", "VALUE = 2", auto_revise=True))
    assert (outcome["status"], outcome["reason_codes"]) == ("accepted", ["verification_passed"])
    assert outcome["evidence"]["revisions"] == 1
    assert [c["exit_code"] for c in outcome["evidence"]["checks"]] == [0]
    digest = (job_paths(repo.root, job_id).root / "revise-01.md").read_text()
    assert digest.startswith("Set VALUE to 2 in src/app.py.")
    assert "--- Revise pass 1 of 1" in digest
    assert "- `grep -q 'VALUE = 2' src/app.py`: failed, exit code 1" in digest


@pytest.mark.anyio
async def test_without_auto_revise_the_failed_check_stands(repo: Repo) -> None:
    job_id, outcome = await run(repo, job("VALUE = 3", "VALUE = 2"))
    assert outcome["reason_codes"] == ["check_failed"] and "revisions" not in outcome["evidence"]
    assert not (job_paths(repo.root, job_id).root / "revise-01.md").exists()


@pytest.mark.anyio
async def test_revise_passes_are_bounded(repo: Repo) -> None:
    args = job("VALUE = 3", "VALUE = 4", auto_revise=True, revise_passes=2)
    job_id, outcome = await run(repo, args)
    assert outcome["reason_codes"] == ["check_failed"] and outcome["evidence"]["revisions"] == 2
    root = job_paths(repo.root, job_id).root
    assert (root / "revise-02.md").exists() and not (root / "revise-03.md").exists()


def test_the_digest_names_only_the_failed_checks() -> None:
    def check(command: str, state: ProcessState, code: int, tail: str) -> CheckRun:
        return CheckRun(command, command, CheckRecord(state, code, 5, "log", tail), None)

    checks = [
        check("ruff check", ProcessState.PASS, 0, "All checks passed!"),
        check("pytest -q", ProcessState.FAIL, 1, "\n".join(f"line {i}" for i in range(100))),
    ]
    text = revise_digest(1, 2, checks)
    assert "Revise pass 1 of 2" in text and "ruff check" not in text
    assert "- `pytest -q`: failed, exit code 1" in text
    assert "line 59" not in text and "line 60" in text and "line 99" in text  # the last 40


REVISE_BIN = Path(__file__).resolve().parent / "fakes" / "revise_bin"


@pytest.mark.anyio
async def test_the_last_revise_pass_runs_on_the_escalation_model(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("PATH", f"{REVISE_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ARGV_LOG", str(argv_log))
    args = job("", "", agent="claude", model="cheap", auto_revise=True, escalate_model="strong")
    args["sandbox"] = "none"  # the fake claude logs its argv to tmp_path, outside the repository
    _, outcome = await run(repo, args)
    assert outcome["status"] == "accepted" and outcome["evidence"]["revisions"] == 1
    sessions = [json.loads(line) for line in argv_log.read_text().splitlines()]
    models = [argv[argv.index("--model") + 1] for argv in sessions]
    assert models == ["cheap", "strong"]


@pytest.mark.anyio
async def test_an_escalation_model_without_auto_revise_is_refused(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        message = await t.error("job_start", job("a", "b", escalate_model="strong"))
    assert message == "escalate_model is the last revise pass's model: it needs auto_revise"
