"""Inputs written by untrusted code that used to crash, hang or exhaust the driver: each one is
now a documented error, recorded like any other invalid artifact."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autoresearch.contracts import candidate as cand
from autoresearch.contracts.evaluator_output import (
    MSG_BAD_SCORE,
    MSG_NOT_JSON,
    MSG_NOT_JSON_LONG_LINE,
    parse_json_verdict,
)
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.evaluate import evaluator_env, run_evaluator
from autoresearch.journal import iteration_records
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.step import step
from helpers import artifact


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """A driver that blocks (a FIFO) fails the test instead of hanging the suite."""

    def expire(*_: object) -> None:
        raise TimeoutError("the driver blocked")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(30)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def valid(h: RunHandle, **overrides: object) -> str:
    data = artifact(status="noop", base_commit=h.run.last_kept_commit or "", **overrides)
    return json.dumps(data)


def _directory(h: RunHandle, path: Path) -> None:
    path.unlink()
    path.mkdir()


def _fifo(h: RunHandle, path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link_to_zero(h: RunHandle, path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _link_to_json(h: RunHandle, path: Path) -> None:
    other = h.worktree / "other.json"
    other.write_text(valid(h, description="copied from elsewhere"))
    path.unlink()
    path.symlink_to(other)


def _deep(h: RunHandle, path: Path) -> None:
    path.write_text("[" * 10_000 + "]" * 10_000)


def _huge(h: RunHandle, path: Path) -> None:
    path.write_text(valid(h, description="x" * 5_000_000))


def _long_description(h: RunHandle, path: Path) -> None:
    path.write_text(valid(h, description="y" * 20_000))


def _duplicate_keys(h: RunHandle, path: Path) -> None:
    path.write_text(valid(h)[:-1] + ', "status": "abort"}')


def _nan(h: RunHandle, path: Path) -> None:
    path.write_text(valid(h)[:-1] + ', "extra": NaN}')


REFUSED = "autoresearch candidate artifact must be a regular file of at most 64 KiB: "


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_directory, REFUSED),
        (_fifo, REFUSED),
        (_link_to_zero, REFUSED),
        (_link_to_json, REFUSED),
        (_huge, REFUSED),
        (_deep, cand.MSG_NOT_JSON + ": nested deeper than 64 levels"),
        (_long_description, cand.MSG_DESCRIPTION_LONG),
        (_duplicate_keys, cand.MSG_NOT_JSON + ": duplicate key 'status'"),
        (_nan, cand.MSG_NOT_JSON + ": NaN is not a JSON number"),
    ],
)
def test_a_hostile_artifact_is_an_invalid_artifact(
    run: RunHandle, make: Callable[[RunHandle, Path], None], message: str
) -> None:
    make(run, run.paths.candidate)
    result = step(run)
    assert (result.decision, result.run_status) == ("error", "failed")
    assert result.decision_reason.startswith(message), result.decision_reason
    # nothing of the hostile file reached the journal, and the handoff is a file again
    it = iteration_records.get_iteration(run.journal, run.run_id, 1)
    assert it is not None and len(it.description) <= 200
    assert run.journal.path.stat().st_size < 2_000_000
    assert run.paths.candidate.is_file() and not run.paths.candidate.is_symlink()


# --- evaluator output -------------------------------------------------------------------------


def evaluate(tmp_path: Path, script: str) -> dict:
    (tmp_path / "eval.py").write_text(script)
    spec = EvaluatorSpec(command=f"{sys.executable} eval.py", format="json")
    env = evaluator_env("r", 1, tmp_path)
    record = run_evaluator(spec, tmp_path, env, tmp_path / "logs/eval.log", grace_seconds=0.5)
    return record.to_dict()


def test_deeply_nested_evaluator_output_is_a_parse_error(tmp_path: Path) -> None:
    data = evaluate(
        tmp_path,
        "print('{\"pass\": true, \"score\": 1, \"d\": ' + '[' * 50000 + ']' * 50000 + '}')",
    )
    assert data["status"] == "error"
    assert data["parse_error"] == MSG_NOT_JSON


def test_a_json_line_over_one_mib_names_the_limit(tmp_path: Path) -> None:
    script = "import json; print('x' * (2 << 20)); print(json.dumps({'pass': True, 'score': 1, 'blob': 'y' * (2 << 20)}))"
    data = evaluate(tmp_path, script)
    assert data["parse_error"] == MSG_NOT_JSON_LONG_LINE
    assert "1 MiB" in MSG_NOT_JSON_LONG_LINE


def test_nan_and_infinity_in_extra_keys_never_reach_a_view(tmp_path: Path) -> None:
    data = evaluate(
        tmp_path,
        'print(\'{"pass": true, "score": 2, "loss": NaN, "big": 1e999, "inf": -Infinity}\')',
    )
    assert (data["status"], data["score"]) == ("pass", 2.0)
    assert data["output"] == {"loss": None, "big": None, "inf": None}
    json.dumps(data, allow_nan=False)  # what strict parsers accept


@pytest.mark.parametrize("text", ['{"pass": true, "score": NaN}', '{"pass": true, "score": 1e999}'])
def test_a_non_finite_score_is_not_a_score(text: str) -> None:
    assert parse_json_verdict(text).parse_error == MSG_BAD_SCORE
