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
from autoresearch.jsonshape import is_empty, is_none, json_field, json_shape
from autoresearch.proc import (
    Confinement,
    SupervisedOutcome,
    SupervisedSpec,
    run_supervised,
    stop_grace,
)
from autoresearch.states import EvalFormat, EvalStatus, ProcessState, process_state
from autoresearch.streams import LineSplitter

JSON_HEAD_LIMIT = 1 << 20


_HIDDEN = json_field(hidden=True)  # what the record keeps that §2's record does not show
_SHOWN_IF_SET = json_field(omit_when=is_none)


@dataclass(frozen=True)
class EvaluationRecord:
    """One evaluation; `to_dict` is the record of §2 (latest-evaluator-result.json): its
    fields in order, the `reported_` ones set by __post_init__ from the status and format
    (fields, not properties, so that the record has them in their place)."""

    command: str
    format: EvalFormat = field(metadata=_HIDDEN)
    ran_at: str
    duration_ms: int
    status: EvalStatus
    passed: bool | None = field(metadata=_HIDDEN)
    score: float | None = field(metadata=_HIDDEN)
    # the evaluator's pass and score, unless the evaluation is an error (a crash is never a
    # score, nothing it said counts); no key when None
    reported_pass: bool | None = field(
        init=False, metadata=json_field(key="pass", omit_when=is_none)
    )
    reported_score: float | None = field(
        init=False, metadata=json_field(key="score", omit_when=is_none)
    )
    # a metric evaluator's metrics (a JSON evaluator's record has no such key)
    reported_metrics: dict[str, float] | None = field(
        init=False, metadata=json_field(key="metrics", omit_when=is_none)
    )
    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    # keyword-only, so that they can sit before log_file (no default), as the JSON has them
    parse_error: str | None = field(default=None, kw_only=True, metadata=_SHOWN_IF_SET)
    spawn_error: str | None = field(default=None, kw_only=True, metadata=_SHOWN_IF_SET)
    # what a JSON evaluator printed beside pass and score (no key when nothing)
    extra: dict[str, object] = field(
        default_factory=dict, kw_only=True, metadata=json_field(key="output", omit_when=is_empty)
    )
    log_file: str
    metrics: dict[str, float] = field(default_factory=dict, metadata=_HIDDEN)
    cancelled: bool = field(default=False, metadata=_HIDDEN)

    def __post_init__(self) -> None:
        error = self.status == EvalStatus.ERROR
        object.__setattr__(self, "reported_pass", None if error else self.passed)
        object.__setattr__(self, "reported_score", None if error else self.score)
        shown = dict(self.metrics) if self.format == EvalFormat.METRIC else None
        object.__setattr__(self, "reported_metrics", shown)

    def summary(self) -> EvalSummary:
        return EvalSummary(self.status, self.passed, self.score)

    @property
    def process(self) -> ProcessState:
        """How the measured process ended, whatever its output said (`process_state`)."""
        return process_state(self.timed_out, self.spawn_error, self.exit_code, self.cancelled)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

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
    grace_seconds: float | None = None,
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
            grace_seconds=stop_grace(grace_seconds),
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
