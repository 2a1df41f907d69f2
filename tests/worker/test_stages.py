"""`stages` of a job: sub-tasks run in order on the job's workspace, each followed by its own
checks; a stage without complete evidence stops the job before the next one runs, and the
verdict is `needs_evidence` (`stage_evidence_incomplete`). Whole jobs through the real MCP
client with `cmd:` agents; the record as the journal keeps it."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from test_auto_revise import run  # start a job over MCP, wait for its verdict
from test_outcome import GOOD  # a modifying job that did everything right
from worker_helpers import agent, job_repo

from autoresearch.journal import jobs as store
from autoresearch.journal.db import open_journal
from autoresearch.mcp.server import build_server
from autoresearch.paths import job_paths
from autoresearch.worker.outcome import Executor, Reason, Status, resolve
from helpers import Repo, cli

# The fake agent writes what a stage's instructions ask; a stage is told which one it is.
STAGE_AGENT = agent("stage", "src/app.py")


def staged(first_check: str, **extra: Any) -> dict[str, Any]:
    return {
        "prompt": "Set VALUE to 2, then add NAME = 'x' to src/app.py.",
        "verification_policy": {"version": 1, "task_kind": "modifying"},
        "agent": STAGE_AGENT,
        "scoped_patch": {"paths": ["src"]},
        "stages": [
            {"prompt": "Set VALUE to 2.", "checks": [{"command": first_check}]},
            {"prompt": "Add NAME.", "checks": [{"command": "grep -q NAME src/app.py"}]},
        ],
        "checks": [{"command": "grep -q 'VALUE = 2' src/app.py", "timeout_seconds": 30}],
        **extra,
    }


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


@pytest.mark.anyio
async def test_a_two_stage_job_is_accepted(repo: Repo) -> None:
    job_id, outcome = await run(repo, staged("grep -q 'VALUE = 2' src/app.py"))
    assert (outcome["status"], outcome["reason_codes"]) == ("accepted", ["verification_passed"])
    stages = outcome["evidence"]["stages"]
    assert [(s["stage"], s["complete"], len(s["checks"])) for s in stages] == [
        (1, True, 1),
        (2, True, 1),
    ]
    assert (repo.root / "src/app.py").read_text() == "VALUE = 2\nNAME = 'x'\n"
    assert outcome["policy"]["stages_declared"] == 2
    root = job_paths(repo.root, job_id).root
    second = (root / "stage-02.md").read_text()
    assert "--- Stage 2 of 2" in second  # told what stage 1 proved, not left to guess
    assert "- stage 1: complete; passed `grep -q 'VALUE = 2' src/app.py`\n" in second
    assert "Evidence of the earlier stages" not in (root / "stage-01.md").read_text()
    assert (root / "stage-01-check-01.log").exists()
    with open_journal(repo.root) as journal:  # the stages are in the job's record
        record = store.get_job(journal, job_id)
    assert record is not None and record.evidence is not None
    assert [s.complete for s in record.evidence.stages] == [True, True]
    assert len(record.spec.stages) == 2 and record.spec.stages[1].prompt == "Add NAME."


@pytest.mark.anyio
async def test_a_failed_stage_stops_the_next_one(repo: Repo) -> None:
    job_id, outcome = await run(repo, staged("grep -q 'VALUE = 9' src/app.py"))
    assert (outcome["status"], outcome["reason_codes"]) == (
        "needs_evidence",
        ["stage_evidence_incomplete"],
    )
    assert outcome["retryable"] is True
    stages = outcome["evidence"]["stages"]
    assert [(s["stage"], s["complete"]) for s in stages] == [(1, False)]
    assert stages[0]["checks"][0]["exit_code"] == 1
    assert (repo.root / "src/app.py").read_text() == "VALUE = 2\n"  # stage 2 never ran
    assert not (job_paths(repo.root, job_id).root / "stage-02.md").exists()
    assert outcome["evidence"]["checks"] == []  # nor did the job's checks


@pytest.mark.anyio
async def test_a_stage_whose_session_fails_stops_the_job(repo: Repo) -> None:
    args = staged("true", agent=agent("fail", "src/app.py", "VALUE = 5"))
    _, outcome = await run(repo, args)
    assert outcome["reason_codes"] == ["stage_evidence_incomplete"]
    assert outcome["evidence"]["stages"][0]["executor"] == "failed"


@pytest.mark.anyio
async def test_an_empty_stage_prompt_is_refused(repo: Repo) -> None:
    args = staged("true")
    args["stages"][1]["prompt"] = " "
    async with connect(build_server(repo.root)) as t:
        assert await t.error("job_start", args) == "stage 2: prompt is empty"


@pytest.mark.parametrize(
    ("declared", "complete", "status", "reasons"),
    [
        (0, 0, Status.ACCEPTED, [Reason.VERIFICATION_PASSED]),
        (2, 2, Status.ACCEPTED, [Reason.VERIFICATION_PASSED]),
        (2, 1, Status.NEEDS_EVIDENCE, [Reason.STAGE_EVIDENCE_INCOMPLETE]),
        (2, 0, Status.NEEDS_EVIDENCE, [Reason.STAGE_EVIDENCE_INCOMPLETE]),
    ],
)
def test_stages_in_the_verdict(
    declared: int, complete: int, status: Status, reasons: list[Reason]
) -> None:
    outcome = resolve(replace(GOOD, stages_declared=declared, stages_complete=complete))
    assert (outcome.status, list(outcome.reason_codes)) == (status, reasons)


def test_an_incomplete_stage_decides_before_the_executor_but_after_scope() -> None:
    failed = replace(GOOD, stages_declared=2, stages_complete=0, executor=Executor.FAILED)
    assert resolve(failed).reason_codes == (Reason.STAGE_EVIDENCE_INCOMPLETE,)
    outside = replace(failed, out_of_scope=1)
    assert resolve(outside).reason_codes == (Reason.SCOPE_VIOLATION,)


def test_stages_from_the_cli(repo: Repo) -> None:
    args = ["job", "start", "Set VALUE to 2, then add NAME.", "--json", "--agent", STAGE_AGENT]
    args += ["--task-kind", "modifying", "--scope", "src", "--check", "grep -q NAME src/app.py"]
    args += ["--stage", "Set VALUE to 2.", "--stage", "Add NAME."]
    bad = cli(*args, "--stage-check", "3:true", cwd=repo.root)
    assert bad.returncode == 2
    assert "--stage-check '3:true': give N:COMMAND for a stage 1..2" in bad.stderr
    started = cli(*args, "--stage-check", "1:grep -q 'VALUE = 2' src/app.py", cwd=repo.root)
    job_id = json.loads(started.stdout)["job_id"]
    waited = cli("job", "wait", job_id, "--json", cwd=repo.root)
    assert waited.returncode == 0, waited.stdout
    stages = json.loads(waited.stdout)["outcome"]["evidence"]["stages"]
    assert [len(s["checks"]) for s in stages] == [1, 0]
    text = cli("job", "get", job_id, cwd=repo.root).stdout
    assert "  stage 1: complete\n  stage 2: complete\n" in text
    # last: a stopped job leaves stage 1's edit in place
    failing = cli(*args, "--stage-check", "1:false", cwd=repo.root)
    stopped = cli("job", "wait", json.loads(failing.stdout)["job_id"], cwd=repo.root)
    assert stopped.returncode == 1
    assert "needs_evidence (stage_evidence_incomplete)" in stopped.stdout
    assert "  stage 1: incomplete (session passed); failed: false\n" in stopped.stdout
