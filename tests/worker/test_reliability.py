"""`reliability_tier` and `blocking_policy`: what each tier asks of a request (a table), what
each policy does with a request that lacks it (`observe` records, `warn` marks an accepted
verdict, `enforce` refuses the job in one line), and one whole job through the MCP client."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from test_outcome import GOOD  # a modifying job that did everything right
from worker_helpers import agent, job_repo

from autoresearch.contracts.job import (
    BlockingPolicy,
    CheckSpec,
    JobSpec,
    ReliabilityTier,
    ScopeSpec,
)
from autoresearch.contracts.job import SemanticGate as G
from autoresearch.errors import ContractError
from autoresearch.mcp.server import build_server
from autoresearch.states import Isolation, TaskKind
from autoresearch.worker.outcome import Reason, Reliability, Status, resolve
from autoresearch.worker.reliability import (
    ENV_POLICY,
    ENV_TIER,
    default_policy,
    default_tier,
    missing_gates,
)
from helpers import Repo

T, B = ReliabilityTier, BlockingPolicy
BARE = JobSpec(
    prompt="p",
    repo_root="/r",
    allowed_dirs=("/r",),
    task_kind=None,
    agent="claude",
    model=None,
    scope=None,
    checks=(),
    isolation=Isolation.IN_PLACE,
    max_turns=None,
    timeout_seconds=60.0,
    include_diff=False,
)
FULL = replace(
    BARE,
    task_kind=TaskKind.MODIFYING,
    scope=ScopeSpec(("/r/src",)),
    checks=(CheckSpec("true"),),
    semantic_gate=G.REQUIRED,
    isolation=Isolation.WORKTREE,
)
STRICT_MISSING = ["verification_policy", "checks", "scoped_patch", "semantic_gate warn or required"]


@pytest.mark.parametrize(
    ("tier", "spec", "missing"),
    [
        (T.LITE, BARE, []),
        (T.STANDARD, BARE, ["verification_policy"]),
        (T.STANDARD, replace(BARE, task_kind=TaskKind.READ_ONLY), []),
        (T.STRICT, BARE, STRICT_MISSING),
        (T.STRICT, replace(FULL, semantic_gate=G.WARN, isolation=Isolation.IN_PLACE), []),
        (T.STRICT, replace(FULL, task_kind=TaskKind.READ_ONLY, scope=None), []),
        (T.CRITICAL, replace(FULL, semantic_gate=G.WARN), ["semantic_gate required"]),
        (T.CRITICAL, replace(FULL, isolation=Isolation.IN_PLACE), ["isolation worktree"]),
        (T.CRITICAL, FULL, []),
    ],
)
def test_what_each_tier_asks(tier: ReliabilityTier, spec: JobSpec, missing: list[str]) -> None:
    assert list(missing_gates(replace(spec, reliability_tier=tier))) == missing


@pytest.mark.parametrize(
    ("policy", "missing", "reasons"),
    [
        (B.OBSERVE, ("checks",), [Reason.VERIFICATION_PASSED]),
        (B.WARN, ("checks",), [Reason.VERIFICATION_PASSED, Reason.RELIABILITY_GATES_MISSING]),
        (B.WARN, (), [Reason.VERIFICATION_PASSED]),
        (B.ENFORCE, (), [Reason.VERIFICATION_PASSED]),  # enforce refused it at start
    ],
)
def test_what_each_policy_does_to_the_verdict(
    policy: BlockingPolicy, missing: tuple[str, ...], reasons: list[Reason]
) -> None:
    outcome = resolve(replace(GOOD, reliability=Reliability(T.STRICT, policy, missing)))
    assert (outcome.status, list(outcome.reason_codes)) == (Status.ACCEPTED, reasons)
    shown = outcome.policy["reliability"]
    assert shown == {"tier": "strict", "blocking_policy": policy.value, "missing": list(missing)}


def test_a_warning_never_turns_a_failure_into_more() -> None:
    facts = replace(GOOD, changed_files=0, reliability=Reliability(T.STRICT, B.WARN, ("checks",)))
    assert resolve(facts).reason_codes == (Reason.EXPECTED_CHANGE_MISSING,)


def test_a_default_job_shows_no_reliability() -> None:
    facts = replace(GOOD, reliability=Reliability(missing=("verification_policy",)))
    assert "reliability" not in resolve(facts).policy


# --- whole jobs ------------------------------------------------------------------------------


def job(**extra: Any) -> dict[str, Any]:
    return {
        "prompt": "Set VALUE to 2 in src/app.py.",
        "verification_policy": {"task_kind": "modifying"},
        "agent": agent("edit", "src/app.py", "VALUE = 2"),
        "scoped_patch": {"paths": ["src"]},
        "checks": [{"command": "grep -q 'VALUE = 2' src/app.py", "timeout_seconds": 30}],
        **extra,
    }


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


@pytest.mark.anyio
async def test_a_strict_job_under_warn_is_accepted_with_a_warning(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        started = await t.ok("job_start", job(reliability_tier="strict", blocking_policy="warn"))
        done = await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 60_000})
    outcome = done.data["outcome"]
    assert outcome["status"] == "accepted"
    assert outcome["reason_codes"] == ["verification_passed", "reliability_gates_missing"]
    assert outcome["policy"]["reliability"]["missing"] == ["semantic_gate warn or required"]


@pytest.mark.anyio
async def test_a_critical_job_under_enforce_is_refused_in_one_line(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        message = await t.error(
            "job_start", job(reliability_tier="critical", blocking_policy="enforce")
        )
        listed = await t.ok("job_list", {})
    assert message == (
        "reliability_tier critical needs semantic_gate required, isolation worktree "
        "(blocking_policy enforce refuses the job without them)"
    )
    assert listed.data["jobs"] == []  # nothing was queued


@pytest.mark.parametrize(
    ("env", "tier", "policy"),
    [
        ({}, T.STANDARD, B.OBSERVE),
        ({ENV_TIER: "critical", ENV_POLICY: "enforce"}, T.CRITICAL, B.ENFORCE),
        ({ENV_TIER: " ", ENV_POLICY: ""}, T.STANDARD, B.OBSERVE),
    ],
)
def test_the_machine_defaults(
    env: dict[str, str], tier: ReliabilityTier, policy: BlockingPolicy
) -> None:
    assert (default_tier(env), default_policy(env)) == (tier, policy)


def test_a_bad_default_is_refused_in_one_line() -> None:
    with pytest.raises(ContractError) as raised:
        default_tier({ENV_TIER: "paranoid"})
    assert raised.value.message == (
        "AUTORESEARCH_WORKER_RELIABILITY_TIER='paranoid' is none of lite, standard, strict, "
        "critical"
    )


@pytest.mark.anyio
async def test_the_environment_sets_a_request_s_defaults_and_the_request_wins(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_TIER, "critical")
    monkeypatch.setenv(ENV_POLICY, "enforce")
    async with connect(build_server(repo.root)) as t:
        message = await t.error("job_start", job())
        assert message.startswith("reliability_tier critical needs semantic_gate required")
        started = await t.ok("job_start", job(reliability_tier="lite"))
        done = await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 60_000})
    policy = done.data["outcome"]["policy"]["reliability"]
    assert policy == {"tier": "lite", "blocking_policy": "enforce", "missing": []}
