"""The one vocabulary: members equal the contract's strings, and "better" is defined once."""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from autoresearch.decide import STOP_INTERRUPTED_DIRTY, Decision
from autoresearch.states import (
    REJECTS_CANDIDATE,
    DecisionKind,
    Direction,
    RunStatus,
    best_by,
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


@pytest.mark.parametrize(
    ("direction", "items", "best"),
    [
        (Direction.HIGHER, [], None),
        (Direction.HIGHER, [("a", 1.0), ("b", 3.0), ("c", 2.0)], "b"),
        (Direction.LOWER, [("a", 1.0), ("b", 3.0), ("c", 0.5)], "c"),
        (Direction.LOWER, [("a", 2.0), ("b", 1.0), ("c", 1.0)], "b"),  # the earliest of equals
        (Direction.HIGHER, [("a", 2.0), ("b", 2.0)], "a"),
        (Direction.HIGHER, [("a", -1.0)], "a"),
    ],
)
def test_best_by(direction: Direction, items: list[tuple[str, float]], best: str | None) -> None:
    found = best_by(direction, items, lambda item: item[1])
    assert (found[0] if found else None) == best
    assert best_of(direction, [v for _, v in items]) == (found[1] if found else None)


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


STATUS = "is not a RunStatus (completed, failed, running, stopped)  [state-value]"
DECISION = (
    "is not a DecisionKind "
    "(abort, ambiguous, baseline, discard, error, interrupted, keep, noop)  [state-value]"
)


def test_mypy_reports_a_misspelt_optional_state_and_frozenset_in_a_membership_test(
    tmp_path: Path,
) -> None:
    """An Optional state in a tuple or set, a frozenset written in place, a Final frozenset or
    set: each misspelt item is an error (the old plugin saw none of these)."""
    errors = _mypy_errors(
        tmp_path,
        """\
        from typing import Final

        from autoresearch.journal.runs import RunRecord
        from autoresearch.states import DecisionKind, RunStatus

        FROZEN: Final = frozenset({"stoped", "running"})
        SET: Final = {"runing"}
        LOOSE = frozenset({"runing"})  # not Final: it may be rebound


        def misspelt(run: RunRecord, decision: DecisionKind | None) -> list[bool]:
            return [
                decision in ("kep", "discard"),
                decision not in {"discrad"},
                run.status in frozenset({"stoped", "running"}),
                run.status in FROZEN,
                run.status in SET,
            ]


        def spelt(
            run: RunRecord, decision: DecisionKind | None, mixed: RunStatus | str
        ) -> list[bool]:
            return [
                decision in ("keep", "discard"),
                run.status in frozenset({"stopped", "running"}),
                run.status in LOOSE,
                mixed in ("runing",),  # a str may be anything
            ]
        """,
    )
    assert errors == {
        'decision in ("kep", "discard"),': f'"kep" {DECISION}',
        'decision not in {"discrad"},': f'"discrad" {DECISION}',
        'run.status in frozenset({"stoped", "running"}),': f'"stoped" {STATUS}',
        "run.status in FROZEN,": f'"stoped" {STATUS}',
        "run.status in SET,": f'"runing" {STATUS}',
    }


def test_mypy_reports_a_misspelt_state_taken_out_as_a_string(tmp_path: Path) -> None:
    """`run.status.value == "runing"`, `str(run.status) != "stoped"` and `.value in (...)`:
    the string is the state's, checked the same way (the old plugin saw none of these), the
    string first too (`"runing" == run.status.value`: the plugin before this saw none)."""
    errors = _mypy_errors(
        tmp_path,
        """\
        from autoresearch.journal.runs import RunRecord
        from autoresearch.states import DecisionKind


        def misspelt(run: RunRecord, decision: DecisionKind) -> list[bool]:
            return [
                run.status.value == "runing",
                decision.value != "kep",
                str(run.status) != "stoped",
                "fialed" == str(run.status),
                run.status.value in ("runing", "stopped"),
                str(decision) not in ["kep"],
                "stoped" == run.status.value,
                "kep" != decision.value,
                "runing" == run.status._value_,
            ]


        def spelt(run: RunRecord, decision: DecisionKind, name: str) -> list[bool]:
            return [
                run.status.value == "running",
                str(run.status) != "stopped",
                decision.value in ("keep", "discard"),
                "stopped" == run.status.value,
                "keep" != decision.value,
                str(name) == "runing",  # no state here
                "runing" == name,
            ]
        """,
    )
    assert errors == {
        'run.status.value == "runing",': f'"runing" {STATUS}',
        'decision.value != "kep",': f'"kep" {DECISION}',
        'str(run.status) != "stoped",': f'"stoped" {STATUS}',
        '"fialed" == str(run.status),': f'"fialed" {STATUS}',
        'run.status.value in ("runing", "stopped"),': f'"runing" {STATUS}',
        'str(decision) not in ["kep"],': f'"kep" {DECISION}',
        '"stoped" == run.status.value,': f'"stoped" {STATUS}',
        '"kep" != decision.value,': f'"kep" {DECISION}',
        '"runing" == run.status._value_,': f'"runing" {STATUS}',
    }


def test_mypy_reports_a_misspelt_state_in_a_match_pattern(tmp_path: Path) -> None:
    """Each string pattern of a `match` on a state (an Optional one, an or-pattern, a pattern
    nested in a sequence or a class) is checked against what is matched there; a match on a
    plain str is not, and mypy still narrows it by the pattern (the old plugin saw no
    pattern)."""
    errors = _mypy_errors(
        tmp_path,
        """\
        from typing import Literal

        from autoresearch.journal.runs import RunRecord
        from autoresearch.states import DecisionKind, RunStatus


        def misspelt(
            run: RunRecord, decision: DecisionKind | None, pair: tuple[RunStatus, int]
        ) -> int:
            match run.status:
                case "runing":
                    return 1
                case "stopped" | "fialed":
                    return 2
            match decision:
                case "kep":
                    return 3
            match pair:
                case ("stoped", 1):
                    return 4
            match run:
                case RunRecord(status="complted"):
                    return 5
            return 0


        def spelt(run: RunRecord, name: str) -> Literal["a", "b"] | None:
            match run.status:
                case "running" | "stopped":
                    pass
                case RunStatus.FAILED:
                    pass
            match name:
                case "a" | "b":
                    return name  # narrowed to the literals, as without the plugin
            return None
        """,
    )
    assert errors == {
        'case "runing":': f'"runing" {STATUS}',
        'case "stopped" | "fialed":': f'"fialed" {STATUS}',
        'case "kep":': f'"kep" {DECISION}',
        'case ("stoped", 1):': f'"stoped" {STATUS}',
        'case RunRecord(status="complted"):': f'"complted" {STATUS}',
    }


def test_mypy_reports_a_misspelt_policy_action_role_or_purpose(tmp_path: Path) -> None:
    """A run's keep policy, the loop's next action, a child's role and an evaluation's purpose
    were plain strings: any spelling passed."""
    errors = _mypy_errors(
        tmp_path,
        """\
        import sqlite3

        from autoresearch.evaluate import EvaluationRecord
        from autoresearch.journal import children, runs
        from autoresearch.journal.runs import RunRecord
        from autoresearch.states import EvalPurpose
        from autoresearch.supervisor.loop import Action


        def misspelt(run: RunRecord, action: Action, child: children.Child) -> list[bool]:
            return [
                run.keep_policy == "score_improvment",
                action.kind != "finsh",
                child.role == "agnet",
            ]


        def spelt(run: RunRecord, action: Action, child: children.Child) -> list[bool]:
            return [
                run.keep_policy == "pass_only",
                action.kind == "process_pending",
                child.role == "harness",
            ]


        def written(conn: sqlite3.Connection, record: EvaluationRecord) -> int:
            return runs.insert_evaluation(conn, "r", 1, "certfy", record)


        def roles(conn: sqlite3.Connection, record: EvaluationRecord, r: runs.Reading) -> list[object]:
            return [
                runs.insert_evaluation(conn, "r", 1, EvalPurpose.CERTIFY, record, "certfy"),
                r.role == "candidat",
            ]
        """,
    )
    assert errors == {
        'run.keep_policy == "score_improvment",': '"score_improvment" is not a KeepPolicy '
        "(pass_only, score_improvement)  [state-value]",
        'action.kind != "finsh",': '"finsh" is not a ActionKind '
        "(exit, finish, launch, process_pending)  [state-value]",
        'child.role == "agnet",': '"agnet" is not a ChildRole '
        "(agent, certify, checks, evaluator, harness)  [state-value]",
        'return runs.insert_evaluation(conn, "r", 1, "certfy", record)': "Argument 4 to "
        '"insert_evaluation" has incompatible type "str"; expected "EvalPurpose"  [arg-type]',
        # an evaluation row's role and a reading's (they were plain strings too)
        'runs.insert_evaluation(conn, "r", 1, EvalPurpose.CERTIFY, record, "certfy"),': "Argument "
        '6 to "insert_evaluation" has incompatible type "str"; expected "Role | None"  [arg-type]',
        'r.role == "candidat",': '"candidat" is not a Role '
        "(baseline, candidate, certify, confirm, incumbent)  [state-value]",
    }


def _mypy_errors(tmp_path: Path, source: str) -> dict[str, str]:
    """mypy --strict with the project's configuration (its tools/mypy_states.py plugin) on
    `source`: the source line each error is on → its errors (joined by " | ")."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(source))
    config = ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(_mypy_cache())]
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


_CACHES: list[Path] = []


def _mypy_cache() -> Path:
    """One mypy cache for this test process: what the first check read (typeshed, the package)
    the others take from it instead of checking it anew, ~1 s of CPU each. A cache of its own
    per process: two xdist workers never write one at once."""
    if not _CACHES:
        folder = Path(tempfile.mkdtemp(prefix="autoresearch-test-mypy-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _CACHES.append(folder)
    return _CACHES[0]


def test_mypy_reports_a_misspelt_verdict_direction_or_status_of_a_report(tmp_path: Path) -> None:
    """These fields and parameters were plain strings (issue #9's audit): a session's verdict
    (`exp log --status`) as logged and as its statistics see it, a session's direction, the
    status a stop and a clean report, a report's decisions, status and direction, and the
    direction of the noise arithmetic. Any spelling passed; now a misspelt one is an error."""
    errors = _mypy_errors(
        tmp_path,
        """\
        from autoresearch.experiments.confidence import Point
        from autoresearch.experiments.logger import LogReport
        from autoresearch.decide import previous_outcome
        from autoresearch.experiments.params import InitParams, LogParams
        from autoresearch.experiments.rules import failure_streak
        from autoresearch.experiments.status import SessionSummary
        from autoresearch.noise import signed
        from autoresearch.states import is_better
        from autoresearch.report.model import ReportData, Row
        from autoresearch.supervisor.clean import CleanResult
        from autoresearch.supervisor.summary import StopOutcome


        def misspelt(
            log: LogParams,
            logged: LogReport,
            point: Point,
            init: InitParams,
            listed: SessionSummary,
            stopped: StopOutcome,
            cleaned: CleanResult,
            row: Row,
            report: ReportData,
        ) -> list[object]:
            return [
                log.status == "kep",
                logged.status != "discrad",
                point.status == "crahs",
                init.direction == "hihger",
                listed.direction == "lowr",
                stopped.status == "stoped",
                cleaned.status == "complete",
                row.decision == "kep",
                report.direction == "up",
                report.status == "runing",
                row.decision in ("crash", "discrad"),
                signed("higer", 1.0),
                is_better("lowre", 1.0, 2.0),
                previous_outcome("kep", None),
                failure_streak(("crash", "crahs")),
            ]


        def matched(row: Row) -> int:
            match row.decision:
                case "keep" | "checks_failed":
                    return 1
                case "abrot":
                    return 2
            return 0


        def spelt(
            log: LogParams, point: Point, row: Row, report: ReportData, stopped: StopOutcome
        ) -> list[bool]:
            return [
                log.status == "checks_failed",
                point.status == "keep",
                row.decision == "baseline",  # a run's decision
                row.decision == "crash",  # a session's verdict
                report.status == "closed",  # a session's
                report.direction == "lower",
                stopped.status == "running",
                row.decision in ("crash", "interrupted"),
            ]
        """,
    )
    verdict = "is not a Verdict (checks_failed, crash, discard, keep)  [state-value]"
    direction = "is not a Direction (higher, lower)  [state-value]"
    # a union of states: a string any of them may equal passes
    decision_or_verdict = (
        "is not a DecisionKind (abort, ambiguous, baseline, discard, error, interrupted, keep, "
        "noop) or a Verdict (checks_failed, crash, discard, keep)  [state-value]"
    )
    assert errors == {
        'log.status == "kep",': f'"kep" {verdict}',
        'logged.status != "discrad",': f'"discrad" {verdict}',
        'point.status == "crahs",': f'"crahs" {verdict}',
        'init.direction == "hihger",': f'"hihger" {direction}',
        'listed.direction == "lowr",': f'"lowr" {direction}',
        'stopped.status == "stoped",': f'"stoped" {STATUS}',
        'cleaned.status == "complete",': f'"complete" {STATUS}',
        'row.decision == "kep",': f'"kep" {decision_or_verdict}',
        'report.direction == "up",': f'"up" {direction}',
        'report.status == "runing",': '"runing" is not a RunStatus (completed, failed, running, '
        "stopped) or a SessionState (active, closed, open)  [state-value]",
        'row.decision in ("crash", "discrad"),': f'"discrad" {decision_or_verdict}',
        'case "abrot":': f'"abrot" {decision_or_verdict}',
        'signed("higer", 1.0),': 'Argument 1 to "signed" has incompatible type "str"; '
        'expected "Direction"  [arg-type]',
        'is_better("lowre", 1.0, 2.0),': 'Argument 1 to "is_better" has incompatible type '
        '"str"; expected "Direction"  [arg-type]',
        'previous_outcome("kep", None),': 'Argument 1 to "previous_outcome" has incompatible '
        'type "str"; expected "DecisionKind | None"  [arg-type]',
        'failure_streak(("crash", "crahs")),': 'Argument 1 to "failure_streak" has '
        'incompatible type "tuple[str, str]"; expected "Sequence[Verdict]"  [arg-type]',
    }
