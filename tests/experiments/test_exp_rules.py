"""The decisions of `log` (pure): values, keep refusals, secondary sets, scope, commit text."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from autoresearch.contracts.check_record import CheckRecord
from autoresearch.errors import ContractError, RefusedError
from autoresearch.experiments.params import LogParams
from autoresearch.experiments.rules import (
    benchmark_state,
    deviations,
    expected_secondary,
    keep_message,
    path_matches,
    plan_log,
)
from autoresearch.experiments.runner import clip_tail
from autoresearch.journal.sessions import SessionRecord, SessionRunRecord

SESSION = SessionRecord(
    session_id=1,
    name="s",
    metric="score",
    direction="lower",
    command="bash autoresearch.sh",
    branch="autoresearch/s-20261130",
    directory="/x",
    baseline_commit="a" * 40,
    kept_commit="a" * 40,
    created_at="t",
    updated_at="t",
)
RUN = SessionRunRecord(
    run_id=1,
    session_id=1,
    number=4,
    segment=1,
    command="bash autoresearch.sh",
    base_commit="a" * 40,
    started_at="t",
    completed_at="t",
    exit_code=0,
    parsed_primary=9.5,
    parsed_metrics={"score": 9.5, "mem": 12.0},
    parsed_asi={"hypothesis": "h1", "n": 1},
)


def params(status: str = "keep", **kw: Any) -> LogParams:
    return LogParams(status=status, description="d", **kw)


def test_keep_message_has_the_result_trailer() -> None:
    text = keep_message("Cache the parse table ", "score", 8.0, {"mem": 12.5, "alloc": 3.0})
    assert text == (
        'Cache the parse table\n\nResult: {"status":"keep", "score":8, "alloc":3, "mem":12.5}'
    )
    trailer = text.split("Result: ", 1)[1]
    assert json.loads(trailer) == {"status": "keep", "score": 8, "alloc": 3, "mem": 12.5}


def test_primary_defaults_to_the_parsed_value_and_asi_is_merged() -> None:
    plan = plan_log(SESSION, RUN, params(asi={"n": 2, "next_action_hint": "go"}), None)
    assert plan.metric == 9.5
    assert plan.metrics == {"mem": 12.0}
    assert plan.asi == {"hypothesis": "h1", "n": 2, "next_action_hint": "go"}
    override = plan_log(SESSION, RUN, params(metric=7.0, metrics={"mem": 1.0}), None)
    assert (override.metric, override.metrics) == (7.0, {"mem": 1.0})


@pytest.mark.parametrize(
    ("run_changes", "message"),
    [
        (
            {"exit_code": 3},
            r"cannot keep run #4: the benchmark did not pass \(fail\); log it as crash",
        ),
        ({"timed_out": True, "exit_code": -15}, r"did not pass \(timeout\)"),
        ({"exit_code": None, "error": "could not start"}, r"did not pass \(error\)"),
        (
            {"checks": CheckRecord.from_dict({"status": "fail"})},
            r"cannot keep run #4: the checks failed \(fail\); log it as checks_failed",
        ),
        (
            {"checks": CheckRecord.from_dict({"status": "timeout"})},
            r"the checks failed \(timeout\)",
        ),
    ],
)
def test_keep_is_refused_after_a_crash_or_failed_checks(
    run_changes: dict[str, Any], message: str
) -> None:
    run = replace(RUN, **run_changes)
    with pytest.raises(RefusedError, match=message):
        plan_log(SESSION, run, params("keep"), None)
    # the same run may be logged as what it is
    plan_log(SESSION, run, params("crash"), None)
    plan_log(SESSION, run, params("checks_failed"), None)


def test_a_missing_primary_value_is_an_error_for_keep_and_discard_only() -> None:
    run = replace(RUN, parsed_primary=None, parsed_metrics={})
    with pytest.raises(ContractError, match="no score value was parsed from run #4"):
        plan_log(SESSION, run, params("discard"), None)
    # exit 0 without the primary METRIC is a failed benchmark: it can never be kept
    with pytest.raises(RefusedError, match="the benchmark did not pass"):
        plan_log(SESSION, run, params("keep"), None)
    assert plan_log(SESSION, run, params("crash"), None).metric is None


@pytest.mark.parametrize(
    ("expected", "given", "error"),
    [
        (["mem"], None, None),
        (["mem", "alloc"], None, "missing alloc"),
        ([], None, "new mem"),
        (["alloc"], None, "missing alloc; new mem"),
        (["mem"], {"alloc": 1.0}, "new alloc"),
    ],
)
def test_secondary_metrics_stay_the_same_set(
    expected: list[str], given: dict[str, float] | None, error: str | None
) -> None:
    p = params("discard", metrics=given)
    if error is None:
        assert plan_log(SESSION, RUN, p, expected).set_changed == ()
        return
    with pytest.raises(ContractError, match=f"same set within a segment \\({error}\\)"):
        plan_log(SESSION, RUN, p, expected)
    forced = plan_log(SESSION, RUN, replace(p, force=True), expected)
    assert forced.set_changed
    # crash and checks_failed runs are outcomes: their metrics are not checked
    plan_log(SESSION, RUN, params("crash", metrics=given), expected)


def test_declared_secondary_metrics_filter_the_parsed_ones() -> None:
    declared = replace(SESSION, secondary=("mem",))
    run = replace(RUN, parsed_metrics={"score": 1.0, "mem": 2.0, "noise": 3.0})
    assert plan_log(declared, run, params(), ["mem"]).metrics == {"mem": 2.0}


def test_expected_set_is_the_latest_scored_runs_else_the_declared() -> None:
    assert expected_secondary(SESSION, []) is None
    assert expected_secondary(replace(SESSION, secondary=("b", "a")), []) == ["a", "b"]
    earlier = [
        replace(RUN, status="keep", metrics={"mem": 1.0}),
        replace(RUN, status="discard", metrics={"mem": 1.0, "x": 2.0}),
        replace(RUN, status="crash", metrics={}),
    ]
    assert expected_secondary(SESSION, earlier) == ["mem", "x"]


@pytest.mark.parametrize(
    ("path", "pattern", "ok"),
    [
        ("src/a.py", "src", True),
        ("src/a.py", "src/", True),
        ("src/a.py", "src/a.py", True),
        ("srcx/a.py", "src", False),
        ("src/deep/a.py", "src/*.py", True),
        ("lib/a.py", "*.py", True),
        ("a.txt", ".", True),
    ],
)
def test_path_matches(path: str, pattern: str, ok: bool) -> None:
    assert path_matches(path, pattern) is ok


@pytest.mark.parametrize(
    ("paths", "scope", "off_limits", "expected"),
    [
        (["src/a.py", "README.md"], [], [], []),
        (["src/a.py", "README.md"], ["src"], [], ["README.md"]),
        (["src/a.py", "tests/t.py"], [], ["tests"], ["tests/t.py"]),
        (["src/a.py", "src/vendor/x.py"], ["src"], ["src/vendor"], ["src/vendor/x.py"]),
        (["autoresearch.sh", "src/a.py"], ["src"], [], ["autoresearch.sh"]),
        (["autoresearch.checks.sh"], [], [], ["autoresearch.checks.sh"]),
    ],
)
def test_deviations(
    paths: list[str], scope: list[str], off_limits: list[str], expected: list[str]
) -> None:
    assert deviations(paths, scope, off_limits) == expected


def test_benchmark_state() -> None:
    assert benchmark_state(RUN) == "pass"
    assert benchmark_state(replace(RUN, exit_code=1)) == "fail"
    assert benchmark_state(replace(RUN, timed_out=True)) == "timeout"
    assert benchmark_state(replace(RUN, exit_code=None)) == "error"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\nb\n", "a\nb"),
        ("\n".join(str(i) for i in range(30)) + "\n", "\n".join(str(i) for i in range(20, 30))),
        ("x" * 10_000, "x" * 4096),
        ("é" * 3000, "é" * 2048),
        ("", ""),
    ],
)
def test_clip_tail_keeps_ten_lines_and_4_kb(text: str, expected: str) -> None:
    assert clip_tail(text) == expected
    assert len(clip_tail(text).encode()) <= 4096
