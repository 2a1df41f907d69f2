"""`semantic_gate` of a job: a dedicated reviewer model judges the change against the prompt
once the checks pass. Its rules as tables, then whole jobs through the real MCP client with a
`cmd:` agent and a reviewer scripted on 127.0.0.1: a change that passes its check but does not
do what the prompt asked is failed under `required`, a missing or unusable verdict is
`needs_evidence`, `warn` only warns."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from gateway_server import Gateway, Step
from mcp_helpers import connect
from test_outcome import GOOD  # a modifying job that did everything right
from worker_helpers import agent, job_repo

from autoresearch.contracts.job import SemanticGate
from autoresearch.contracts.job_result import CheckResult, SemanticStatus
from autoresearch.mcp.server import build_server
from autoresearch.worker.outcome import Reason, Status, resolve
from autoresearch.worker.semantic import Answer, judge
from helpers import Repo

S, G = SemanticStatus, SemanticGate


@pytest.mark.parametrize(
    ("gate", "semantic", "status", "reasons", "shown"),
    [
        (G.OFF, None, Status.ACCEPTED, [Reason.VERIFICATION_PASSED], None),
        (G.REQUIRED, S.PASSED, Status.ACCEPTED, [Reason.VERIFICATION_PASSED], "passed"),
        (G.REQUIRED, S.FAILED, Status.FAILED, [Reason.SEMANTIC_FAILED], "failed"),
        (G.REQUIRED, S.MISSING, Status.NEEDS_EVIDENCE, [Reason.SEMANTIC_EVIDENCE_MISSING],
         "missing"),
        (G.REQUIRED, None, Status.NEEDS_EVIDENCE, [Reason.SEMANTIC_EVIDENCE_MISSING], "not_run"),
        (G.WARN, S.FAILED, Status.ACCEPTED,
         [Reason.VERIFICATION_PASSED, Reason.SEMANTIC_WARNING], "failed"),
        (G.WARN, S.MISSING, Status.ACCEPTED,
         [Reason.VERIFICATION_PASSED, Reason.SEMANTIC_WARNING], "missing"),
        (G.WARN, S.PASSED, Status.ACCEPTED, [Reason.VERIFICATION_PASSED], "passed"),
    ],
)  # fmt: skip
def test_the_gate_in_the_verdict(
    gate: SemanticGate,
    semantic: SemanticStatus | None,
    status: Status,
    reasons: list[Reason],
    shown: str | None,
) -> None:
    outcome = resolve(replace(GOOD, semantic_gate=gate, semantic=semantic))
    assert (outcome.status, list(outcome.reason_codes)) == (status, reasons)
    assert outcome.verification.get("semantic") == shown


def test_a_failed_check_decides_before_the_gate() -> None:
    facts = replace(GOOD, checks=(CheckResult.FAILED,), semantic_gate=G.REQUIRED)
    assert resolve(facts).reason_codes == (Reason.CHECK_FAILED,)


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        (Answer("rev", "rev", "stop", '{"verdict": "pass", "reason": "ok"}'), S.PASSED),
        (Answer("rev", "rev", "stop", '```json\n{"verdict": "fail"}\n```'), S.FAILED),
        (Answer("rev", "rev", "length", '{"verdict": "pass"}'), S.MISSING),
        (Answer("rev", "other", "stop", '{"verdict": "pass"}'), S.MISSING),
        (Answer("rev", None, "stop", '{"verdict": "pass"}'), S.MISSING),
        (Answer("rev", "rev", "stop", ""), S.MISSING),
        (Answer("rev", "rev", "stop", '{"verdict": "maybe"}'), S.MISSING),
        (Answer("rev", "rev", "stop", "looks good to me"), S.MISSING),
    ],
)
def test_judge(answer: Answer, status: SemanticStatus) -> None:
    assert judge(answer).status is status


# --- whole jobs ------------------------------------------------------------------------------

CHECK = {"command": "grep -q 'VALUE = ' src/app.py", "timeout_seconds": 30}  # any VALUE passes


def job(gate: str, **extra: Any) -> dict[str, Any]:
    return {
        "prompt": "Set VALUE to 2 in src/app.py.",
        "verification_policy": {"version": 1, "task_kind": "modifying"},
        "agent": agent("edit", "src/app.py", "VALUE = 3"),  # passes the check, not the task
        "scoped_patch": {"paths": ["src"]},
        "checks": [CHECK],
        "semantic_gate": gate,
        **extra,
    }


def verdict(text: str, model: str | None = None) -> Step:
    return Step(text=text, model=model)


FAIL = json.dumps({"verdict": "fail", "reason": "src/app.py:1 sets VALUE to 3, not 2"})
PASS = json.dumps({"verdict": "pass", "reason": "src/app.py:1"})


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


async def run(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, args: dict[str, Any], steps: list[Step],
    semantic_model: str | None = "reviewer",
) -> tuple[dict[str, Any], Gateway]:  # fmt: skip
    with Gateway(steps) as gw:
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_URL", gw.url)
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MODELS", "cheap")
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MAX_ATTEMPTS", "1")
        if semantic_model is not None:
            monkeypatch.setenv("AUTORESEARCH_GATEWAY_SEMANTIC_MODEL", semantic_model)
        async with connect(build_server(repo.root)) as t:
            started = await t.ok("job_start", args)
            done = await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 60_000})
    return done.data["outcome"], gw


@pytest.mark.anyio
async def test_required_fails_a_change_that_passes_its_check_but_not_the_task(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome, gw = await run(repo, monkeypatch, job("required"), [verdict(FAIL)])
    assert (outcome["status"], outcome["reason_codes"]) == ("failed", ["semantic_failed"])
    assert outcome["verification"]["checks"] == "passed"
    assert outcome["verification"]["semantic"] == "failed"
    assert outcome["evidence"]["semantic"]["reason"].startswith("src/app.py:1 sets VALUE to 3")
    assert [r["model"] for r in gw.requests] == ["reviewer"]  # the dedicated model, pinned
    assert "Set VALUE to 2" in gw.requests[0]["messages"][1]["content"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("steps", "semantic_model", "why"),
    [
        ([], None, "AUTORESEARCH_GATEWAY_SEMANTIC_MODEL"),
        ([verdict(PASS, model="cheap")], "reviewer", "answered by cheap, not reviewer"),
        ([Step(text=PASS, finish_reason="length")], "reviewer", "cut"),
        ([Step(500)], "reviewer", "autoresearch_gateway_failed"),
    ],
)
async def test_required_without_a_usable_verdict_needs_evidence(
    repo: Repo,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[Step],
    semantic_model: str | None,
    why: str,
) -> None:
    outcome, _ = await run(repo, monkeypatch, job("required"), steps, semantic_model)
    assert outcome["status"] == "needs_evidence"
    assert outcome["reason_codes"] == ["semantic_evidence_missing"]
    assert why in outcome["evidence"]["semantic"]["reason"]


@pytest.mark.anyio
async def test_warn_only_warns_and_a_pass_accepts(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    warned, _ = await run(repo, monkeypatch, job("warn"), [verdict(FAIL)])
    assert warned["status"] == "accepted"
    assert warned["reason_codes"] == ["verification_passed", "semantic_warning"]
    repo.commit("the warned change")  # so the next job's change is its own
    right = job("required", agent=agent("edit", "src/app.py", "VALUE = 2"))
    passed, _ = await run(repo, monkeypatch, right, [verdict(PASS)])
    assert (passed["status"], passed["verification"]["semantic"]) == ("accepted", "passed")
    assert passed["evidence"]["semantic"]["answered_by"] == "reviewer"


@pytest.mark.anyio
async def test_a_failed_check_asks_no_reviewer(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = job("required", checks=[{"command": "exit 1", "timeout_seconds": 30}])
    outcome, gw = await run(repo, monkeypatch, bad, [verdict(PASS)])
    assert outcome["reason_codes"] == ["check_failed"] and gw.requests == []
