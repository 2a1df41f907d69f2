"""The decisions of `log`, pure: which values are recorded, when keep is refused, which
secondary metrics are consistent, which paths deviate from the scope, and the commit message.

Everything here runs before any git effect, so a refused log changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import TYPE_CHECKING

from autoresearch.errors import ContractError, RefusedError
from autoresearch.paths import HARNESS_FILES
from autoresearch.states import (
    DEFAULT_PLATEAU,
    SCORED_VERDICTS,
    ProcessState,
    Verdict,
    process_state,
)

if TYPE_CHECKING:  # a Stop hook reads these rules and builds no log's parameters,
    # nor, without a session, reads the sessions' records (journal/peek.py)
    from autoresearch.experiments.params import LogParams
    from autoresearch.experiments.verbs import Verbs
    from autoresearch.journal.sessions import SessionRecord, SessionRunRecord


def no_pending_run(say: Verbs) -> str:
    """experiments.md's refusal, with the calling door's verb (the MCP text is the spec's)."""
    return f"no pending run available. Run {say.run} first."


SETUP_COMMIT_MESSAGE = "autoresearch: harness setup"
CANCELLED = ProcessState.CANCELLED


def max_reached_message(limit: int) -> str:
    return f"Maximum experiments reached ({limit})."


# Auto-resume by the host hooks stops after this many resumed turns, or when more than
# FAILURE_STREAK of the segment's latest results all failed.
MAX_RESUMED_TURNS = 200
FAILURE_STREAK = 20
MSG_PLATEAU = (
    "plateau: none of the last {n} logged runs was kept; the obvious direction is exhausted: "
    "try a different kind of change (another part of the code, another idea), not another "
    "variation of what was tried"
)
FAILED_VERDICTS = frozenset({Verdict.DISCARD, Verdict.CRASH, Verdict.CHECKS_FAILED})


def plateau_notice(newest_first: Sequence[Verdict], n: int = DEFAULT_PLATEAU) -> str | None:
    """An experiment session's plateau (issue 33): none of the segment's latest `n` logged runs
    was kept. The agent decides what is kept, so a keep is the session's improvement."""
    latest = newest_first[:n]
    if len(latest) < n or Verdict.KEEP in latest:
        return None
    return MSG_PLATEAU.format(n=n)


def failure_streak(statuses_newest_first: Sequence[Verdict]) -> int:
    """How many of the latest results, newest first, failed in a row."""
    count = 0
    for status in statuses_newest_first:
        if status not in FAILED_VERDICTS:
            break
        count += 1
    return count


@dataclass(frozen=True)
class LogPlan:
    """What a log records, decided before git is touched."""

    metric: float | None
    metrics: dict[str, float]
    asi: dict[str, object]
    set_changed: tuple[str, ...] = ()
    measured: float | None = None  # the parsed value, when the logged one differs from it

    def mismatch(self, name: str) -> str | None:
        """The deviation a logged value that differs from the measured one records."""
        if self.measured is None or self.metric is None:
            return None
        return f"{name}: logged {_number(self.metric)}, measured {_number(self.measured)}"


def benchmark_state(run: SessionRunRecord) -> ProcessState:
    """How the benchmark ended; exiting 0 without the primary METRIC line is a failure, as in
    the supervisor's `format: metric`."""
    # the evaluator's output contract: a Stop hook reads these rules and judges no benchmark
    from autoresearch.contracts.evaluator_output import metric_passed

    state = process_state(run.timed_out, run.error, run.exit_code)
    if state == ProcessState.PASS and not metric_passed(run.exit_code, run.parsed_primary):
        return ProcessState.FAIL
    return state


def checks_failed(run: SessionRunRecord) -> bool:
    return run.checks is not None and not run.checks.passed


def plan_log(
    session: SessionRecord,
    run: SessionRunRecord,
    params: LogParams,
    expected: Sequence[str] | None,
) -> LogPlan:
    """Decide the recorded values, or refuse (RefusedError / ContractError)."""
    if params.status == Verdict.KEEP:
        _refuse_keep(run)
    metric = params.metric if params.metric is not None else run.parsed_primary
    if metric is None and params.status in SCORED_VERDICTS:
        raise ContractError(
            f"log: no {session.metric} value was parsed from run #{run.number}; "
            "pass the primary metric value explicitly, or log the run as crash"
        )
    metrics = secondary_metrics(session, run, params.metrics)
    changed: tuple[str, ...] = ()
    if params.status in SCORED_VERDICTS and expected is not None:
        changed = _check_set(sorted(metrics), expected, params.force)
    asi = {**run.parsed_asi, **dict(params.asi or {})}
    parsed = run.parsed_primary
    measured = parsed if metric is not None and parsed is not None and metric != parsed else None
    return LogPlan(metric, metrics, asi, changed, measured)


def _refuse_keep(run: SessionRunRecord) -> None:
    state = benchmark_state(run)
    if state != ProcessState.PASS:
        raise RefusedError(
            f"cannot keep run #{run.number}: the benchmark did not pass ({state}); log it as crash"
        )
    if checks_failed(run):
        status = run.checks.state if run.checks else None
        raise RefusedError(
            f"cannot keep run #{run.number}: the checks failed ({status}); log it as checks_failed"
        )


def secondary_metrics(
    session: SessionRecord, run: SessionRunRecord, given: Mapping[str, float] | None
) -> dict[str, float]:
    """Parsed metrics other than the primary (only the declared ones when declared),
    overridden by the values given to log."""
    parsed = {k: v for k, v in run.parsed_metrics.items() if k != session.metric}
    if session.secondary:
        parsed = {k: v for k, v in parsed.items() if k in session.secondary}
    merged = {**parsed, **{k: float(v) for k, v in (given or {}).items()}}
    merged.pop(session.metric, None)
    return merged


def _check_set(names: Sequence[str], expected: Sequence[str], force: bool) -> tuple[str, ...]:
    missing = sorted(set(expected) - set(names))
    new = sorted(set(names) - set(expected))
    if not missing and not new:
        return ()
    detail = "; ".join(
        part
        for part in (
            f"missing {', '.join(missing)}" if missing else "",
            f"new {', '.join(new)}" if new else "",
        )
        if part
    )
    if not force:
        raise ContractError(
            f"log: secondary metrics must stay the same set within a segment ({detail}); "
            "fix the harness or the metrics you pass, or log with force to accept the new set"
        )
    return (*(f"-{m}" for m in missing), *(f"+{n}" for n in new))


def expected_secondary(
    session: SessionRecord, earlier: Sequence[SessionRunRecord]
) -> list[str] | None:
    """The set the next keep/discard must report: the latest scored run's, else the declared."""
    for run in reversed(earlier):
        if run.status in SCORED_VERDICTS and run.metrics is not None:
            return sorted(run.metrics)
    return sorted(session.secondary) if session.secondary else None


# --- scope audit ---------------------------------------------------------------------------


def path_matches(path: str, pattern: str) -> bool:
    """A path is covered by a pattern naming it, a folder above it, or a glob matching it."""
    clean = pattern.strip().strip("/")
    if clean in ("", "."):
        return True
    return path == clean or path.startswith(clean + "/") or fnmatch(path, clean)


def deviations(paths: Iterable[str], scope: Sequence[str], off_limits: Sequence[str]) -> list[str]:
    """Changed paths outside `scope` (when set), inside `off_limits`, or in the harness."""
    out = []
    for path in paths:
        outside = bool(scope) and not any(path_matches(path, s) for s in scope)
        forbidden = any(path_matches(path, o) for o in (*off_limits, *HARNESS_FILES))
        if outside or forbidden:
            out.append(path)
    return out


# --- commit message ------------------------------------------------------------------------


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() and abs(value) < 1e16 else value


def keep_message(
    description: str,
    metric: str,
    value: float,
    metrics: Mapping[str, float],
    measured: float | None = None,
) -> str:
    """`<description>\\n\\nResult: {"status":"keep", "<metric>":<value>, …}`; a logged value
    that differs from the measured one carries `"measured":<parsed value>` beside it."""
    result: dict[str, object] = {"status": Verdict.KEEP, metric: _number(value)}
    if measured is not None:
        result["measured"] = _number(measured)
    for name, extra in sorted(metrics.items()):
        result.setdefault(name, _number(extra))
    trailer = json.dumps(result, separators=(", ", ":"), ensure_ascii=False)
    return f"{description.strip()}\n\nResult: {trailer}"
