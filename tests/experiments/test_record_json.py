"""The JSON of the session records that answer `to_dict` (issue #9, note N1): pinned literally.

Each case builds a record with realistic values (nested records, tuples, enums, None where
the type allows) and pins the exact plain data `to_dict()` returns: the same keys in the same
order, lists where the record holds tuples, enum members where it holds enums. `--json`, the
MCP tools' structured output and the ledger all print this, so a change here is a contract
change, whichever way a record builds its dict.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from autoresearch.contracts.check_record import CheckRecord
from autoresearch.experiments.confidence import BestRef, Confidence, Ref, Significance
from autoresearch.experiments.ledger import Progress
from autoresearch.experiments.logger import GitEffect
from autoresearch.experiments.pairing import LevelDrift
from autoresearch.experiments.params import RunNote, RunParams
from autoresearch.experiments.runner import RunReport
from autoresearch.experiments.session import CloseResult, InitResult, ReopenResult
from autoresearch.experiments.status import SessionSummary
from autoresearch.journal.sessions import SessionRecord
from autoresearch.noise import Interval
from autoresearch.states import (
    Direction,
    GitAction,
    ProcessState,
    SessionState,
)

SESSION = SessionRecord(
    session_id=3,
    name="speed",
    metric="seconds",
    direction=Direction.LOWER,
    command="bash autoresearch.sh",
    branch="autoresearch/speed-20261130",
    directory="/repo",
    baseline_commit="a" * 40,
    kept_commit="b" * 40,
    created_at="2026-11-30T10:00:00Z",
    updated_at="2026-11-30T11:00:00Z",
    goal="faster parse",
    unit="s",
    own_worktree=True,
    segment=2,
    max_iterations=20,
    secondary=("memory_mb",),
    scope=("src/", "bench.py"),
    off_limits=("tests/",),
    constraints=(),
    notes="## Ideas\n- cache",
    closed_at=None,
)
SESSION_JSON: dict[str, Any] = {
    "session_id": 3,
    "name": "speed",
    "metric": "seconds",
    "direction": Direction.LOWER,
    "command": "bash autoresearch.sh",
    "branch": "autoresearch/speed-20261130",
    "directory": "/repo",
    "baseline_commit": "a" * 40,
    "kept_commit": "b" * 40,
    "created_at": "2026-11-30T10:00:00Z",
    "updated_at": "2026-11-30T11:00:00Z",
    "goal": "faster parse",
    "unit": "s",
    "own_worktree": True,
    "segment": 2,
    "max_iterations": 20,
    "secondary": ["memory_mb"],
    "scope": ["src/", "bench.py"],
    "off_limits": ["tests/"],
    "constraints": [],
    "notes": "## Ideas\n- cache",
    "closed_at": None,
}

SIGNIFICANCE = Significance(True, 0.5, 0.25, 0.75, 0.1, 4)
SIGNIFICANCE_JSON: dict[str, Any] = {
    "significant": True,
    "difference": 0.5,
    "low": 0.25,
    "high": 0.75,
    "spread": 0.1,
    "df": 4,
    "reason": None,
    "basis": "pooled",
    "pairs": 0,
}
THEN, NOW = Interval(131.0, 129.0, 133.0, 3), Interval(100.0, 99.0, 101.0, 3)
DRIFT = LevelDrift("baseline", "a" * 40, THEN, 1, NOW, 5, True, "the baseline now reads …")
DRIFT_JSON: dict[str, Any] = {
    "label": "baseline",
    "commit": "a" * 40,
    "then": {"mean": 131.0, "low": 129.0, "high": 133.0, "n": 3, "level": 0.95},
    "then_run": 1,
    "now": {"mean": 100.0, "low": 99.0, "high": 101.0, "n": 3, "level": 0.95},
    "now_run": 5,
    "significant": True,
    "text": "the baseline now reads …",
}

CHECKS = CheckRecord(ProcessState.FAIL, 1, 1234, "/repo/.autoresearch/run-4.checks.log", "E1")
CHECKS_JSON: dict[str, Any] = {
    "status": ProcessState.FAIL,
    "exit_code": 1,
    "duration_seconds": 1.234,
    "log_path": "/repo/.autoresearch/run-4.checks.log",
    "tail": "E1",
}


def _run_report(checks: CheckRecord | None) -> RunReport:
    return RunReport(
        session_id=3,
        run=4,
        segment=2,
        command="bash autoresearch.sh",
        status=ProcessState.PASS,
        exit_code=0,
        timed_out=False,
        duration_seconds=2.5,
        metric_name="seconds",
        unit="s",
        metric=1.5,
        metrics={"memory_mb": 120.0},
        asi={"hypothesis": "cache the table", "nested": {"k": [1, 2]}},
        checks=checks,
        readings=[1.4, 1.6],
        reference_commit="b" * 40,
        reference_readings=[1.7, 1.9],
        paired=Interval(0.3, 0.1, 0.5, 2),
        log_path="/repo/.autoresearch/run-4.log",
        tail="METRIC seconds=1.5",
        baseline=Ref(1, 2.0, "a" * 40),
        best=Ref(2, 1.8, None),
        delta_pct=-25.0,
        progress=Progress(3, 20),
        abandoned_run=None,
        suggested_status="keep",
        messages=("abandoned run #3 (interrupted before it completed)", "use these values"),
    )


def _run_report_json(checks: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "session_id": 3,
        "run": 4,
        "segment": 2,
        "command": "bash autoresearch.sh",
        "status": ProcessState.PASS,
        "exit_code": 0,
        "timed_out": False,
        "duration_seconds": 2.5,
        "metric_name": "seconds",
        "unit": "s",
        "metric": 1.5,
        "metrics": {"memory_mb": 120.0},
        "asi": {"hypothesis": "cache the table", "nested": {"k": [1, 2]}},
        "checks": checks,
        "readings": [1.4, 1.6],
        "reference_commit": "b" * 40,
        "reference_readings": [1.7, 1.9],
        "paired": {"mean": 0.3, "low": 0.1, "high": 0.5, "n": 2, "level": 0.95},
        "log_path": "/repo/.autoresearch/run-4.log",
        "tail": "METRIC seconds=1.5",
        "baseline": {"run": 1, "metric": 2.0, "commit": "a" * 40},
        "best": {"run": 2, "metric": 1.8, "commit": None},
        "delta_pct": -25.0,
        "progress": {"logged": 3, "max": 20, "reached": False},
        "abandoned_run": None,
        "suggested_status": "keep",
        "messages": ["abandoned run #3 (interrupted before it completed)", "use these values"],
    }


CASES: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "RunParams",
        RunParams(timeout_seconds=60.0, checks_timeout_seconds=0.0, repeats=3),
        {"timeout_seconds": 60.0, "checks_timeout_seconds": 0.0, "repeats": 3},
    ),
    ("RunNote", RunNote(7, "noisy machine"), {"run_id": 7, "reason": "noisy machine"}),
    ("Ref", Ref(1, 2.0, "a" * 40), {"run": 1, "metric": 2.0, "commit": "a" * 40}),
    ("Ref no commit", Ref(1, 2.0), {"run": 1, "metric": 2.0, "commit": None}),
    (
        "BestRef",
        BestRef(2, 1.5, "c" * 40, delta_pct=-25.0),
        {"run": 2, "metric": 1.5, "commit": "c" * 40, "delta_pct": -25.0, "paired": None},
    ),
    (
        "BestRef paired",
        BestRef(2, 1.5, "c" * 40, delta_pct=-25.0, paired=Interval(0.3, 0.1, 0.5, 2)),
        {
            "run": 2,
            "metric": 1.5,
            "commit": "c" * 40,
            "delta_pct": -25.0,
            "paired": {"mean": 0.3, "low": 0.1, "high": 0.5, "n": 2, "level": 0.95},
        },
    ),
    (
        "Confidence with significance",
        Confidence(2.5, "likely real", 0.2, 5, None, SIGNIFICANCE, (DRIFT,)),
        {
            "value": 2.5,
            "label": "likely real",
            "mad": 0.2,
            "runs": 5,
            "reason": None,
            "significance": SIGNIFICANCE_JSON,
            "drift": [DRIFT_JSON],
        },
    ),
    (
        "Confidence without",
        Confidence(None, None, None, 2, "fewer than 3 comparable runs"),
        {
            "value": None,
            "label": None,
            "mad": None,
            "runs": 2,
            "reason": "fewer than 3 comparable runs",
            "significance": None,
            "drift": [],
        },
    ),
    ("Progress", Progress(3, 20), {"logged": 3, "max": 20, "reached": False}),
    ("Progress reached", Progress(20, 20), {"logged": 20, "max": 20, "reached": True}),
    ("Progress no limit", Progress(3, None), {"logged": 3, "max": None, "reached": False}),
    ("RunReport with checks", _run_report(CHECKS), _run_report_json(CHECKS_JSON)),
    ("RunReport without checks", _run_report(None), _run_report_json(None)),
    (
        "InitResult",
        InitResult(
            session_id=3,
            created=True,
            branch="autoresearch/speed-20261130",
            created_branch=True,
            directory="/repo",
            worktree="/repo.worktrees/speed",
            setup_commit="a" * 40,
            setup_files=("autoresearch.sh", "notes.txt"),
            segment=2,
            new_segment=True,
            updated=("goal", "scope"),
            abandoned_run=4,
            session=SESSION,
            messages=("created branch autoresearch/speed-20261130",),
        ),
        {
            "session_id": 3,
            "created": True,
            "branch": "autoresearch/speed-20261130",
            "created_branch": True,
            "directory": "/repo",
            "worktree": "/repo.worktrees/speed",
            "setup_commit": "a" * 40,
            "setup_files": ["autoresearch.sh", "notes.txt"],
            "segment": 2,
            "new_segment": True,
            "updated": ["goal", "scope"],
            "abandoned_run": 4,
            "session": SESSION_JSON,
            "messages": ["created branch autoresearch/speed-20261130"],
        },
    ),
    (
        "InitResult re-init",
        InitResult(
            3,
            False,
            "autoresearch/x",
            False,
            "/repo",
            None,
            None,
            (),
            1,
            False,
            (),
            None,
            SESSION,
            (),
        ),
        {
            "session_id": 3,
            "created": False,
            "branch": "autoresearch/x",
            "created_branch": False,
            "directory": "/repo",
            "worktree": None,
            "setup_commit": None,
            "setup_files": [],
            "segment": 1,
            "new_segment": False,
            "updated": [],
            "abandoned_run": None,
            "session": SESSION_JSON,
            "messages": [],
        },
    ),
    (
        "CloseResult",
        CloseResult(3, "autoresearch/speed-20261130", "/repo", 4, ("closed session #3",)),
        {
            "session_id": 3,
            "branch": "autoresearch/speed-20261130",
            "directory": "/repo",
            "abandoned_run": 4,
            "messages": ["closed session #3"],
        },
    ),
    (
        "ReopenResult",
        ReopenResult(
            3, "autoresearch/speed-20261130", "/repo", 3, True, False, SESSION, ("reopened",)
        ),
        {
            "session_id": 3,
            "branch": "autoresearch/speed-20261130",
            "directory": "/repo",
            "segment": 3,
            "new_segment": True,
            "worktree_restored": False,
            "session": SESSION_JSON,
            "messages": ["reopened"],
        },
    ),
    (
        "SessionSummary",
        SessionSummary(
            3,
            "speed",
            "autoresearch/speed-20261130",
            "/repo",
            "seconds",
            Direction.HIGHER,
            2,
            SessionState.CLOSED,
            5,
            2.0,
            None,
            "2026-11-30T10:00:00Z",
            "2026-11-30T12:00:00Z",
        ),
        {
            "session_id": 3,
            "name": "speed",
            "branch": "autoresearch/speed-20261130",
            "directory": "/repo",
            "metric": "seconds",
            "direction": Direction.HIGHER,
            "segment": 2,
            "state": SessionState.CLOSED,
            "logged": 5,
            "baseline": 2.0,
            "best": None,
            "created_at": "2026-11-30T10:00:00Z",
            "closed_at": "2026-11-30T12:00:00Z",
            "delta_pct": None,
            "paired": None,
        },
    ),
    (
        "GitEffect committed",
        GitEffect(GitAction.COMMITTED, "c" * 40, None, "c" * 40),
        {
            "action": GitAction.COMMITTED,
            "commit": "c" * 40,
            "patch_path": None,
            "kept_commit": "c" * 40,
        },
    ),
    (
        "GitEffect reverted",
        GitEffect(GitAction.REVERTED, None, "/repo/.autoresearch/run-4.patch", "b" * 40),
        {
            "action": GitAction.REVERTED,
            "commit": None,
            "patch_path": "/repo/.autoresearch/run-4.patch",
            "kept_commit": "b" * 40,
        },
    ),
]


def _exact(value: Any) -> Any:
    """`value` with every type and every key order made part of the comparison: a tuple
    where a list was pinned, a str where an enum was, or keys in another order all differ."""
    if isinstance(value, dict):
        return ("dict", [(k, _exact(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_exact(v) for v in value])
    return (type(value).__name__, value)


@pytest.mark.parametrize(("record", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_record_json_is_pinned(record: Any, expected: dict[str, Any]) -> None:
    got = record.to_dict()
    assert got == expected
    assert _exact(got) == _exact(expected)
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(expected))
