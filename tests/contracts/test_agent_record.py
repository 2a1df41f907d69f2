"""An iteration's agent record (contracts/agent_record.AgentRecord): the JSON it stores in
iterations.agent_json, and what the ledger shows of it, keep every key, in order, byte for
byte; a record read back from JSON writes the same JSON again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents.base import AgentResult, Usage
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.journal import iteration_records
from autoresearch.states import IterationKind, IterationState
from autoresearch.supervisor.loop import MSG_NO_ARTIFACT, session_record
from autoresearch.supervisor.prepare import prepare

FULL = Usage(1, 2, 3, 4, 5, 0.25, 6, "s", "m", True, "err", ["Write: x"])


SESSIONS = [
    (
        AgentResult("codex", 0, 1200),
        '{"agent": "codex", "exit_code": 0, "duration_ms": 1200, "timed_out": false, '
        '"cancelled": false}',
    ),
    (
        AgentResult("claude", 1, 5, True, True, spawn_error="boom", log_file="/l"),
        '{"agent": "claude", "exit_code": 1, "duration_ms": 5, "timed_out": true, '
        '"cancelled": true, "error": "boom", "log_file": "/l"}',
    ),
    (
        AgentResult("claude", 0, 7, usage=FULL, log_file="/x"),
        '{"agent": "claude", "exit_code": 0, "duration_ms": 7, "timed_out": false, '
        '"cancelled": false, "success": true, "input_tokens": 1, "output_tokens": 2, '
        '"cached_tokens": 3, "cache_write_tokens": 4, "reasoning_tokens": 5, '
        '"cost_usd": 0.25, "turns": 6, "session_id": "s", "model": "m", "error": "err", '
        '"log_file": "/x", "denials": ["Write: x"]}',
    ),
    (
        AgentResult("aider", None, 0, usage=Usage(success=False, error="")),
        '{"agent": "aider", "duration_ms": 0, "timed_out": false, "cancelled": false, '
        '"success": false}',
    ),
]


@pytest.mark.parametrize(("result", "expected"), SESSIONS)
def test_a_session_is_recorded_as_it_always_was(result: AgentResult, expected: str) -> None:
    # the JSON the versions before the typed record wrote (AgentResult.to_dict), byte for byte
    assert json.dumps(result.record().to_dict()) == expected
    again = AgentRecord.from_dict(json.loads(expected))
    assert again == result.record() and json.dumps(again.to_dict()) == expected


def test_the_journal_stores_each_session_as_it_always_did(mission_dir: Path) -> None:
    """iterations.agent_json, read with SQL, is the JSON above byte for byte (with the lane
    and failure a lane's session adds after it), and the iteration reads back the record."""
    handle = prepare(mission_dir, run_tag="T1")
    try:
        tail = ', "lane": 2, "failure": "agent exited with code 1"}'
        cases = [(r.record(), e) for r, e in SESSIONS]
        cases += [(r.record(2, "agent exited with code 1"), e[:-1] + tail) for r, e in SESSIONS]
        for n, (record, _) in enumerate(cases, start=1):
            now = utc_now_iso()
            it = iteration_records.IterationRecord(
                handle.run.run_id, n, IterationKind.ITERATION, IterationState.APPLIED,
                handle.run.keep_policy, now, now, agent=record,
            )  # fmt: skip
            with handle.journal.tx() as conn:
                iteration_records.insert_iteration(conn, it)
        for n, (record, expected) in enumerate(cases, start=1):
            row = handle.journal.row(
                "SELECT agent_json FROM iterations WHERE run_id = ? AND iteration = ?",
                (handle.run.run_id, n),
            )
            assert row is not None and row["agent_json"] == expected
            back = iteration_records.get_iteration(handle.journal, handle.run.run_id, n)
            assert back is not None and back.agent == record
    finally:
        handle.close()


@pytest.mark.parametrize(
    ("result", "wrote", "lane", "tail"),
    [
        (AgentResult("codex", 0, 9), True, None, {}),
        (AgentResult("codex", 0, 9), False, None, {"failure": MSG_NO_ARTIFACT}),
        (AgentResult("codex", 0, 9), False, 2, {"lane": 2, "failure": MSG_NO_ARTIFACT}),
        (AgentResult("codex", 3, 9), True, 1, {"lane": 1, "failure": "agent exited with code 3"}),
        (AgentResult("codex", 3, 9, cancelled=True), False, 1, {"lane": 1}),  # a stop: no failure
    ],
)
def test_lane_and_failure_follow_the_session_keys(
    result: AgentResult, wrote: bool, lane: int | None, tail: dict[str, Any]
) -> None:
    data = session_record(result, wrote, lane).to_dict()
    session = result.record().to_dict()
    assert data == {**session, **tail}
    assert list(data) == [*session, *tail]
    assert AgentRecord.from_dict(json.loads(json.dumps(data))).to_dict() == data


@pytest.mark.parametrize(
    "stored",
    [
        {},  # nothing known: an empty record, as falsy as no record
        {"agent": "offline"},  # an older row without the keys this version writes
        {"agent": "x", "exit_code": 0, "future_key": {"a": 1}, "lane": 3},  # unknown key kept
        {"agent": "x", "model": None},  # a null a writer left in: kept, not dropped
        {"agent": "x", "denials": []},  # none refused, written by another writer: kept
    ],
)
def test_a_stored_record_loses_no_key_when_read_and_written_again(stored: dict[str, Any]) -> None:
    record = AgentRecord.from_dict(stored)
    assert record.to_dict() == stored
    assert bool(record) == bool(stored)


def test_a_record_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(TypeError, match="an agent record is an object, not list"):
        AgentRecord.from_dict([1])  # type: ignore[arg-type]
