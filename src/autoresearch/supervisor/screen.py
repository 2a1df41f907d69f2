"""Carrying out the cascade (#34, contracts/screen.py): before a candidate's full evaluation,
its checks, then evaluator.screen on it and on the reference (the kept commit, in its scratch
checkout); screening.verdict decides whether the full evaluation runs.

Order: checks first (a candidate that fails them spends no evaluator at all), then the screen,
then the full evaluation, whose keep policy finds the checks already run. The screen's
readings are no journal readings (they measure something else than the evaluator and would
mix into its statistics): what the screen saw is in the decision's reason when it discards,
and in the screen logs of the iteration. The reference's screen reading is taken once per
kept commit and reused for a few candidates (REFERENCE_USES), then taken afresh, so that the
two sides compared were read close in time and a drifting machine is followed.
A run with lanes judges a screened candidate in the step, as the single lane does (no first
reading ahead of it); its lanes share the reference reading, the kept commit being one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from autoresearch import screening
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.contracts.screen import ScreenSpec
from autoresearch.decide import Decision, checks_failed
from autoresearch.evaluate import EvaluationRecord
from autoresearch.policies import Checks
from autoresearch.supervisor import measure, record
from autoresearch.supervisor.handle import RunHandle

# Candidates one reference screen reading serves before it is taken again.
REFERENCE_USES = 5


@dataclass(frozen=True)
class Screened:
    """What the cascade found before the full evaluation: the discard (None: evaluate in
    full) and the checks it ran (None: none were run here; the policy asks for them)."""

    discard: Decision | None = None
    checks: Checks | None = None
    note: str | None = None  # what the screen saw (a note of the decision)


@dataclass
class _Reference:
    commit: str
    reading: screening.ScreenReading
    uses: int = 0


# (repository, run id) → the kept commit's screen reading and how often it served, for every
# lane (one kept commit): per process, so a resumed run reads its reference again
_REFERENCES: dict[tuple[str, str], _Reference] = {}


def screen(
    h: RunHandle,
    iteration: int,
    commit: str,
    first: EvaluationRecord | None,
    should_cancel: Callable[[], bool] | None,
) -> Screened:
    """The checks and the screen of candidate `commit`, when the run has a screen and no full
    reading of the candidate was taken yet (`first`)."""
    spec = ScreenSpec.of(h.evaluator.extra)
    if spec is None or first is not None:
        return Screened()
    failure = record.run_checks(h.context, iteration, should_cancel)
    checks = Checks(failure, str(h.paths.checks_log(iteration)))
    if failure is not None:
        return Screened(checks_failed(failure, checks.log), checks)
    command = screen_evaluator(h.evaluator, spec)
    log = h.paths.screen_log(iteration, "candidate")
    taken = record.evaluate(h, iteration, should_cancel, commit=commit, screen=(command, log))
    reference = _reference(h, iteration, command, should_cancel)
    kept = h.run.last_kept_commit or ""
    found = screening.verdict(
        h.evaluator.direction, spec.margin, screening.ScreenReading.of(taken), reference,
        f"kept commit {kept[:7]}",
    )  # fmt: skip
    return Screened(found.discard, checks, found.note)


def screen_evaluator(full: EvaluatorSpec, spec: ScreenSpec) -> EvaluatorSpec:
    """The screen as an evaluator: its command, read as the evaluator is unless it says."""
    return replace(
        full,
        command=spec.command,
        format=spec.format or full.format,
        metric=spec.metric or full.metric,
        timeout_seconds=spec.timeout_seconds or full.timeout_seconds,
        extra={},
    )


def _reference(
    h: RunHandle,
    iteration: int,
    command: EvaluatorSpec,
    should_cancel: Callable[[], bool] | None,
) -> screening.ScreenReading | None:
    """The kept commit's screen reading: the one taken for it lately, else a fresh one."""
    kept = h.run.last_kept_commit
    if kept is None:
        return None
    key = (str(h.repo.repo_root), h.run_id)
    known = _REFERENCES.get(key)
    if known is None or known.commit != kept or known.uses >= REFERENCE_USES:
        tree = measure.incumbent_checkout(h.context, kept)
        log = h.paths.screen_log(iteration, "reference")
        taken = record.evaluate(
            h, iteration, should_cancel, tree=tree, commit=kept, screen=(command, log)
        )
        known = _REFERENCES[key] = _Reference(kept, screening.ScreenReading.of(taken))
    known.uses += 1
    return known.reading
