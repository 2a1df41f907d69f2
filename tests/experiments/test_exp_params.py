"""Parameters of the session tools: validation, omitted fields, branch names (pure)."""

from __future__ import annotations

import pytest

from autoresearch.errors import ContractError
from autoresearch.experiments.params import (
    InitParams,
    LogParams,
    RunNote,
    is_metric_name,
    is_session_branch,
    run_timeout,
    session_branch,
    validate_init,
    validate_log,
    validate_new_session,
)


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        ([], "autoresearch/speed-20261130"),
        (["autoresearch/speed-20261130"], "autoresearch/speed-20261130-2"),
        (
            ["autoresearch/speed-20261130", "autoresearch/speed-20261130-2"],
            "autoresearch/speed-20261130-3",
        ),
        (["autoresearch/speed-20261129"], "autoresearch/speed-20261130"),
    ],
)
def test_session_branch_clashes(existing: list[str], expected: str) -> None:
    assert session_branch("Speed", "20261130", existing) == expected


def test_is_session_branch() -> None:
    assert is_session_branch("autoresearch/x-20261130")
    assert not is_session_branch("main")
    assert not is_session_branch(None)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("score", True),
        ("latency_µs", True),
        ("p-99.ms", True),
        ("a b", False),
        ("", False),
        ("__proto__", False),
        ("a=b", False),
    ],
)
def test_metric_names_follow_the_grammar(name: str, ok: bool) -> None:
    assert is_metric_name(name) is ok


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (InitParams(name=" "), "name must not be empty"),
        (InitParams(metric="a b"), "invalid metric name"),
        (InitParams(direction="up"), "direction must be lower or higher"),
        (InitParams(secondary=("ok", "not ok")), "invalid secondary metric name(s): not ok"),
        (InitParams(max_iterations=-1), "max_iterations must be a positive number"),
        (InitParams(command="  "), "command must not be empty"),
    ],
)
def test_invalid_init_fields(params: InitParams, message: str) -> None:
    with pytest.raises(ContractError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate_init(params)


def test_new_session_needs_name_and_metric() -> None:
    with pytest.raises(ContractError, match="name and metric required for a new session"):
        validate_new_session(InitParams())
    with pytest.raises(ContractError, match="metric required"):
        validate_new_session(InitParams(name="x"))
    validate_new_session(InitParams(name="x", metric="m"))


def test_given_fields_are_only_the_ones_passed() -> None:
    assert InitParams(goal="g", new_segment=True, worktree=True).given() == {"goal": "g"}
    assert InitParams(max_iterations=0).given() == {"max_iterations": None}
    assert InitParams(scope=()).given() == {"scope": ()}
    assert InitParams(name="n", scope=("src",)).to_dict()["scope"] == ["src"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (LogParams(status="maybe", description="d"), "status must be one of"),
        (LogParams(status="keep", description=" "), "description is required"),
        (LogParams(status="keep", description="d", metric=float("nan")), "finite"),
        (LogParams(status="keep", description="d", metrics={"a b": 1.0}), "invalid metric name"),
        (LogParams(status="keep", description="d", metrics={"m": float("inf")}), "finite"),
        (
            LogParams(status="keep", description="d", flag_runs=(RunNote(1, " "),)),
            "run 1 needs a reason",
        ),
    ],
)
def test_invalid_log_params(params: LogParams, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        validate_log(params)


def test_timeouts_of_zero_or_less_mean_none() -> None:
    assert run_timeout(0) is None
    assert run_timeout(-5) is None
    assert run_timeout(2.5) == 2.5
