"""What a finished run's numbers point to: the status to log, and what to tell the agent.
Pure; the agent decides and logs."""

from __future__ import annotations

from autoresearch.experiments.confidence import SegmentStats
from autoresearch.experiments.rules import checks_failed
from autoresearch.journal.sessions import SessionRecord, SessionRunRecord
from autoresearch.noise import Interval
from autoresearch.states import ProcessState, Verdict, is_better

NOTHING_TO_LOG = "none"


def suggest(
    session: SessionRecord,
    run: SessionRunRecord,
    status: ProcessState,
    segment: SegmentStats,
    paired: Interval | None = None,
) -> str:
    """The status the numbers point to; the agent decides and logs it. Paired readings compare
    with the kept commit as it reads now, never with a best read at another moment."""
    if status == ProcessState.CANCELLED:
        return NOTHING_TO_LOG
    if status != ProcessState.PASS or run.parsed_primary is None:
        return Verdict.CRASH
    if checks_failed(run):
        return Verdict.CHECKS_FAILED
    if segment.best is None:
        return Verdict.KEEP
    if paired is not None:
        # a keep needs the pairs to show it: better beyond their noise
        return Verdict.KEEP if paired.low > 0 else Verdict.DISCARD
    improved = is_better(session.direction, run.parsed_primary, segment.best.metric)
    return Verdict.KEEP if improved else Verdict.DISCARD


def paired_advice(paired: Interval | None) -> list[str]:
    if paired is None or paired.mean <= 0 or paired.low > 0:
        return []
    return [
        f"it reads better than the kept commit read alongside ({paired.signed_text()}), "
        "within the noise: more --repeats can resolve it; a keep now rests on no evidence"
    ]


def advice(
    session: SessionRecord, run: SessionRunRecord, status: ProcessState, segment: SegmentStats
) -> list[str]:
    if status == ProcessState.CANCELLED:
        return [
            f"run #{run.number} was cancelled: its processes were stopped and the run is "
            "abandoned (nothing to log); start a new run when ready"
        ]
    if status == ProcessState.FAIL and run.exit_code == 0 and run.parsed_primary is None:
        return [
            f"the benchmark exited 0 but printed no `METRIC {session.metric}=<value>` line, so "
            "it failed (the rule of the supervisor's format: metric too): fix the harness, or "
            "log this run as crash"
        ]
    if status == ProcessState.PASS and segment.baseline is None and not checks_failed(run):
        return [f"segment {session.segment} has no baseline yet: log this run as keep to set it"]
    return []
