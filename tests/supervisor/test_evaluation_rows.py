"""An evaluation row is the record's §2 values: its columns are what the record's to_dict says
(an error's pass and score NULL, as to_dict leaves them out) and record_json is that to_dict,
on a real journal of a prepared run. Pins the row format now that the storage takes the typed
`EvaluationRecord` and the role enum instead of a dict and a string."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from autoresearch.contracts.evaluator_output import Verdict
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.evaluate import EvaluationRecord, build_record
from autoresearch.journal import runs
from autoresearch.noise import Role
from autoresearch.proc import SupervisedOutcome
from autoresearch.states import EvalPurpose
from autoresearch.supervisor.handle import RunHandle

JSON = EvaluatorSpec(command="python3 eval.py", format="json", timeout_seconds=5)
METRIC = EvaluatorSpec(command="sh bench.sh", format="metric", timeout_seconds=5)
OK = SupervisedOutcome(
    started_at="2024-01-01T00:00:00Z", duration_ms=1234, exit_code=0, stdout=" out \n",
    stderr="err", log_path=Path("logs/evaluator-0001.log"),
)  # fmt: skip

RECORDS = {
    "pass": build_record(JSON, OK, Verdict(True, 0.5, extra={"k": 1})),
    "fail": build_record(JSON, OK, Verdict(False, 2.0)),
    "unscored": build_record(JSON, OK, Verdict(True, None)),
    "parse error": build_record(JSON, OK, Verdict(None, parse_error="not json")),
    "exit 2 said pass": build_record(JSON, replace(OK, exit_code=2), Verdict(True, 1.0)),
    "timed out": build_record(
        JSON, replace(OK, exit_code=None, timed_out=True), Verdict(True, 1.0)
    ),
    "spawn error": build_record(
        JSON,
        replace(OK, exit_code=None, spawn_error="no such file", log_path=None),
        Verdict(None),
    ),
    "metric": build_record(METRIC, OK, Verdict(True, 3.0, metrics={"ms": 3.0, "rss": 7.0})),
}


def columns_of(data: dict[str, Any]) -> tuple[Any, ...]:
    """The columns as they were computed from the to_dict before the storage took the record."""
    return (
        data["status"],
        None if data.get("pass") is None else int(bool(data["pass"])),
        data.get("score"),
        data.get("exit_code"),
        int(bool(data.get("timed_out"))),
        int(data.get("duration_ms", 0)),
        data.get("log_file"),
    )


@pytest.mark.parametrize("name", list(RECORDS))
def test_an_evaluation_row_holds_the_records_to_dict(run: RunHandle, name: str) -> None:
    record: EvaluationRecord = RECORDS[name]
    with run.journal.tx() as conn:
        runs.insert_evaluation(
            conn, run.run_id, 7, EvalPurpose.ITERATION, record, Role.CANDIDATE, "c1"
        )
        row = conn.execute(
            "SELECT status, pass, score, exit_code, timed_out, duration_ms, log_file, "
            "record_json, purpose, role, commit_sha FROM evaluations WHERE iteration = 7"
        ).fetchone()
    data = record.to_dict()
    assert tuple(row[:7]) == columns_of(data)
    assert row[7] == json.dumps(data)  # the same text, key order included
    assert tuple(row[8:]) == ("iteration", "candidate", "c1")
    if record.status != "error":
        assert row[1] is not None
    else:
        assert row[1] is None and row[2] is None


def test_a_reading_comes_back_with_its_role_as_the_enum(run: RunHandle) -> None:
    with run.journal.tx() as conn:
        runs.insert_evaluation(
            conn, run.run_id, 7, EvalPurpose.ITERATION, RECORDS["pass"], Role.CONFIRM, "c1"
        )
    (reading,) = [r for r in runs.readings(run.journal, run.run_id) if r.iteration == 7]
    assert reading.role is Role.CONFIRM and reading.commit == "c1" and reading.score == 0.5
