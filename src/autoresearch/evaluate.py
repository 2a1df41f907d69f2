"""Run an evaluator once and turn what happened into an evaluation record (supervisor.md §2);
the one classification of how a measured process ended, for every door.

`process_state` says how a process ended (pass, fail, timeout, error, cancelled): the
supervisor's evaluator and checks, a session's harness and checks (experiments.md "run") and a
job's checks are all classified by it. Status rules of a record: a process that did not pass
(spawn failure, non-zero exit, timeout) or unparsable output → `error`; otherwise `pass` or
`fail` from the verdict. A crash is an outcome, never a score: an `error` record carries no
`pass` and no `score`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autoresearch.children import ChildEnv, run_tag, spawn_env
from autoresearch.contracts.check_record import CheckRecord
from autoresearch.contracts.evaluator_output import (
    MSG_NOT_JSON,
    MSG_NOT_JSON_LONG_LINE,
    Verdict,
    metric_verdict,
    parse_json_verdict,
)
from autoresearch.contracts.metric_lines import MetricScanner, ParsedLines
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.decide import EvalSummary
from autoresearch.proc import Confinement, SupervisedOutcome, SupervisedSpec, run_supervised
from autoresearch.states import EvalFormat, EvalStatus, ProcessState, process_state
from autoresearch.streams import LineSplitter

JSON_HEAD_LIMIT = 1 << 20


@dataclass(frozen=True)
class EvaluationRecord:
    """One evaluation; `to_dict` is the record of §2 (latest-evaluator-result.json)."""

    command: str
    format: EvalFormat
    ran_at: str
    duration_ms: int
    status: EvalStatus
    passed: bool | None
    score: float | None
    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    log_file: str
    metrics: dict[str, float] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    parse_error: str | None = None
    spawn_error: str | None = None
    cancelled: bool = False

    def summary(self) -> EvalSummary:
        return EvalSummary(self.status, self.passed, self.score)

    @property
    def process(self) -> ProcessState:
        """How the measured process ended, whatever its output said (`process_state`)."""
        return process_state(self.timed_out, self.spawn_error, self.exit_code, self.cancelled)

    @property
    def reported_score(self) -> float | None:
        """The score, unless the evaluation is an error (a crash is never a score)."""
        return self.score if self.status != EvalStatus.ERROR else None

    @property
    def reported_pass(self) -> bool | None:
        """The evaluator's pass, unless the evaluation is an error (nothing it said counts)."""
        return self.passed if self.status != EvalStatus.ERROR else None

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "command": self.command,
            "ran_at": self.ran_at,
            "duration_ms": self.duration_ms,
            "status": self.status,
        }
        if self.reported_pass is not None:
            data["pass"] = self.reported_pass
        if self.reported_score is not None:
            data["score"] = self.reported_score
        if self.format == EvalFormat.METRIC:
            data["metrics"] = dict(self.metrics)
        data.update(exit_code=self.exit_code, timed_out=self.timed_out)
        data.update(stdout=self.stdout, stderr=self.stderr)
        if self.parse_error is not None:
            data["parse_error"] = self.parse_error
        if self.spawn_error is not None:
            data["spawn_error"] = self.spawn_error
        if self.extra:
            data["output"] = dict(self.extra)
        data["log_file"] = self.log_file
        return data

    def compact(self) -> dict[str, object]:
        """The small record kept in the ledger: the full output lives in the log file."""
        data = self.to_dict()
        for key in ("stdout", "stderr", "output", "command"):
            data.pop(key, None)
        return data


class JsonStdoutCollector:
    """Keeps what JSON parsing needs from stdout in bounded memory.

    The whole stdout when it is at most 1 MiB, else the last lines that look like objects.
    """

    def __init__(self) -> None:
        self._head = bytearray()
        self._overflow = False
        self._objects: deque[bytes] = deque(maxlen=16)
        self._lines = LineSplitter(self._on_line)

    def _on_line(self, line: bytes) -> None:
        if line.lstrip().startswith(b"{"):
            self._objects.append(line)

    def feed(self, data: bytes) -> None:
        if not self._overflow:
            if len(self._head) + len(data) > JSON_HEAD_LIMIT:
                self._overflow = True
                self._head.clear()
            else:
                self._head += data
        self._lines.feed(data)

    def close(self) -> None:
        self._lines.close()

    @property
    def dropped_long_lines(self) -> bool:
        """Output was over the limit and some line in it too long to be kept."""
        return self._overflow and self._lines.dropped > 0

    def text(self) -> str:
        if not self._overflow:
            return self._head.decode("utf-8", "replace")
        return "\n".join(line.decode("utf-8", "replace") for line in self._objects)


def evaluator_env(
    run_id: str,
    iteration: int,
    worktree: Path,
    mission_dir: Path | None = None,
    sealed_dir: Path | None = None,
) -> dict[str, str]:
    """The caller's environment plus AUTORESEARCH_RUN_ID, _ITERATION, _WORKTREE,
    _MISSION_DIR (the mission folder inside the worktree, so commands can be relative to it)
    and, for a sealed run, _SEALED_DIR (the caller has verified that copy)."""
    tag = run_tag(run_id, worktree)
    where = mission_dir or worktree
    return spawn_env(ChildEnv(tag, iteration=iteration, mission_dir=where, sealed_dir=sealed_dir))


def run_evaluator(
    spec: EvaluatorSpec,
    worktree: Path,
    env: Mapping[str, str],
    log_path: Path,
    on_spawn: Callable[[int], None] | None = None,
    grace_seconds: float = 3.0,
    should_cancel: Callable[[], bool] | None = None,
    box: Confinement | None = None,
) -> EvaluationRecord:
    """Run `sh -c <command>` in the worktree (inside `box`, the run's OS sandbox, if any) and
    interpret its output."""
    collector = JsonStdoutCollector()
    parsed = ParsedLines()
    stdout_consumers: list[Any] = [MetricScanner(parsed)]
    if spec.format == EvalFormat.JSON:
        stdout_consumers.append(collector)
    outcome = run_supervised(
        SupervisedSpec(
            argv=["sh", "-c", spec.command],
            cwd=worktree,
            env=env,
            log_path=log_path,
            timeout=spec.timeout_seconds,
            grace_seconds=grace_seconds,
            stdout_consumers=stdout_consumers,
            stderr_consumers=[MetricScanner(parsed)],
            on_spawn=on_spawn,
            should_cancel=should_cancel,
            box=box,
        )
    )
    if spec.format == EvalFormat.JSON:
        verdict = parse_json_verdict(collector.text())
        if verdict.parse_error == MSG_NOT_JSON and collector.dropped_long_lines:
            verdict = replace(verdict, parse_error=MSG_NOT_JSON_LONG_LINE)
        return build_record(spec, outcome, verdict)
    return metric_record(spec, outcome, parsed.metrics)


def metric_record(
    spec: EvaluatorSpec, outcome: SupervisedOutcome, metrics: dict[str, float]
) -> EvaluationRecord:
    """The record of a `format: metric` process (an evaluator, or a session's harness, whose
    METRIC lines were scanned into `metrics`): pass when it exited 0 with the primary metric."""
    return build_record(
        spec, outcome, metric_verdict(metrics, spec.metric or "", outcome.exit_code)
    )


def outcome_state(outcome: SupervisedOutcome) -> ProcessState:
    """`process_state` of a supervised child."""
    return process_state(
        outcome.timed_out, outcome.spawn_error, outcome.exit_code, outcome.cancelled
    )


def check_record(outcome: SupervisedOutcome, tail: str = "") -> CheckRecord:
    """How a run of the checks ended, from its process (pure)."""
    return CheckRecord(
        state=outcome_state(outcome),
        exit_code=outcome.exit_code,
        duration_ms=outcome.duration_ms,
        log_file=str(outcome.log_path or ""),
        tail=tail,
        spawn_error=outcome.spawn_error,
    )


def build_record(
    spec: EvaluatorSpec, outcome: SupervisedOutcome, verdict: Verdict
) -> EvaluationRecord:
    """Combine the process outcome and the parsed verdict into a record (pure).

    A cancelled evaluation is classified by how its process ended and flagged `cancelled`:
    its caller rolls it back whatever its status."""
    ran = process_state(outcome.timed_out, outcome.spawn_error, outcome.exit_code)
    parse_error = verdict.parse_error
    if ran is not ProcessState.PASS or parse_error is not None:
        status = EvalStatus.ERROR
    else:
        status = EvalStatus.PASS if verdict.passed else EvalStatus.FAIL
    return EvaluationRecord(
        command=spec.command,
        format=spec.format,
        ran_at=outcome.started_at,
        duration_ms=outcome.duration_ms,
        status=status,
        passed=verdict.passed,
        score=verdict.score,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        stdout=outcome.stdout.strip(),
        stderr=outcome.stderr.strip(),
        log_file=str(outcome.log_path or ""),
        metrics=dict(verdict.metrics),
        extra=dict(verdict.extra),
        parse_error=parse_error if not outcome.timed_out else None,
        spawn_error=outcome.spawn_error,
        cancelled=outcome.cancelled,
    )
