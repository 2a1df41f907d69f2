"""The one vocabulary: members equal the contract's strings, and "better" is defined once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autoresearch.decide import STOP_INTERRUPTED_DIRTY, Decision
from autoresearch.states import (
    REJECTS_CANDIDATE,
    DecisionKind,
    Direction,
    RunStatus,
    best_of,
    is_better,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("direction", "candidate", "incumbent", "better"),
    [
        (Direction.HIGHER, 2.0, 1.0, True),
        (Direction.HIGHER, 1.0, 1.0, False),
        (Direction.HIGHER, 0.5, 1.0, False),
        (Direction.LOWER, 0.5, 1.0, True),
        (Direction.LOWER, 1.0, 1.0, False),
        (Direction.LOWER, 2.0, 1.0, False),
    ],
)
def test_is_better(direction: Direction, candidate: float, incumbent: float, better: bool) -> None:
    assert is_better(direction, candidate, incumbent) is better


@pytest.mark.parametrize(
    ("direction", "scores", "best"),
    [
        (Direction.HIGHER, [], None),
        (Direction.HIGHER, [1.0, 3.0, 2.0], 3.0),
        (Direction.LOWER, [1.0, 3.0, 0.5], 0.5),
    ],
)
def test_best_of(direction: Direction, scores: list[float], best: float | None) -> None:
    assert best_of(direction, scores) == best


def test_members_are_the_contract_strings() -> None:
    assert RunStatus.RUNNING == "running"
    assert json.dumps({"s": RunStatus.FAILED}) == '{"s": "failed"}'
    assert f"{DecisionKind.KEEP}" == "keep"


def test_which_decisions_reset_is_defined_once() -> None:
    for kind in DecisionKind:
        d = Decision(kind, "r")
        assert d.keep == (kind is DecisionKind.KEEP)
        assert d.reset == (kind in REJECTS_CANDIDATE)
        # every decision but a keep brings the run branch back (the session may have moved it)
        assert d.needs_git_effect == (kind not in (DecisionKind.KEEP, DecisionKind.BASELINE))
    assert not Decision(DecisionKind.ERROR, STOP_INTERRUPTED_DIRTY).needs_git_effect


def test_mypy_reports_a_misspelt_state(tmp_path: Path) -> None:
    """mypy --strict with the project's configuration (its tools/mypy_states.py plugin) on a
    snippet: every misspelt status or decision is an error naming it, correct ones are not."""
    errors = _mypy_errors(
        tmp_path,
        """\
        from autoresearch.journal.runs import RunRecord
        from autoresearch.states import DecisionKind, RunStatus


        def misspelt(run: RunRecord, decision: DecisionKind | None) -> list[bool]:
            return [
                run.status == "runing",
                "stoped" != run.status,
                decision == "kep",
                RunStatus.FAILED == "fialed",
            ]


        def spelt(run: RunRecord, decision: DecisionKind | None) -> list[bool]:
            return [
                run.status == RunStatus.RUNNING,
                run.status != "stopped",
                decision == "keep",
            ]


        def assigned() -> RunStatus:
            return "runing"  # a str is not a RunStatus, misspelt or not
        """,
    )
    assert errors == {
        'run.status == "runing",': '"runing" is not a RunStatus '
        "(completed, failed, running, stopped)  [state-value]",
        '"stoped" != run.status,': '"stoped" is not a RunStatus '
        "(completed, failed, running, stopped)  [state-value]",
        'decision == "kep",': '"kep" is not a DecisionKind '
        "(abort, ambiguous, baseline, discard, error, interrupted, keep, noop)  [state-value]",
        'RunStatus.FAILED == "fialed",': '"fialed" is not a RunStatus '
        "(completed, failed, running, stopped)  [state-value]",
        'return "runing"  # a str is not a RunStatus, misspelt or not': "Incompatible return "
        'value type (got "str", expected "RunStatus")  [return-value]',
    }


def test_mypy_reports_a_misspelt_state_in_a_membership_test(tmp_path: Path) -> None:
    """`status in ("stoped", "running")`: each misspelt item of a tuple, list or set written
    out in place (or of a Final tuple) is an error naming it; correct items and a container of
    members are not. mypy tries `__contains__` with its errors held back, so the plugin reports
    from the iteration it falls back to."""
    errors = _mypy_errors(
        tmp_path,
        """\
        from typing import Final

        from autoresearch.journal.runs import RunRecord
        from autoresearch.states import DecisionKind, RunStatus

        PAIR: Final = ("stoped", "running")


        def misspelt(run: RunRecord, decision: DecisionKind) -> list[bool]:
            return [
                run.status in ("stoped", "running"),
                run.status not in ["runing"],
                decision in {"kep", "discard"},
                run.status in PAIR,
            ]


        def spelt(run: RunRecord, decision: DecisionKind) -> list[bool]:
            return [
                run.status in ("stopped", "running"),
                run.status in (RunStatus.RUNNING, "failed"),
                decision not in {"keep", "discard"},
                "runing" in ("stoped",),  # no state here
            ]
        """,
    )
    status = "is not a RunStatus (completed, failed, running, stopped)  [state-value]"
    decision = (
        "is not a DecisionKind "
        "(abort, ambiguous, baseline, discard, error, interrupted, keep, noop)  [state-value]"
    )
    assert errors == {
        'run.status in ("stoped", "running"),': f'"stoped" {status}',
        'run.status not in ["runing"],': f'"runing" {status}',
        'decision in {"kep", "discard"},': f'"kep" {decision}',
        "run.status in PAIR,": f'"stoped" {status}',
    }


def _mypy_errors(tmp_path: Path, source: str) -> dict[str, str]:
    """mypy --strict with the project's configuration (its tools/mypy_states.py plugin) on
    `source`: the source line each error is on → its errors (joined by " | ")."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(source))
    config = ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "c")]
    found = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *config, str(snippet)],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = snippet.read_text().splitlines()
    errors: dict[str, list[str]] = {}
    for n, message in re.findall(r"snippet\.py:(\d+): error: (.*)", found.stdout):
        errors.setdefault(lines[int(n) - 1].strip(), []).append(message)
    return {line: " | ".join(messages) for line, messages in errors.items()}
