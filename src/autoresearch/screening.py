"""The cascade's decision (#34): whether a candidate's screen reading lets it go on to the
full evaluation. Pure; the step carries it out (supervisor/screen.py).

The screen's reading of the candidate is compared with the screen's reading of the reference
(the kept commit), never with the full evaluator's scores: the screen measures something else
(a shorter training, a subset), so only its own readings of both sides compare. A candidate
is discarded when it reads worse than the reference by more than the screen's margin; a
screen of the candidate that crashes, times out or prints no usable score is an outcome (the
candidate is discarded, `screen failed: …`), never a score. A reference whose screen failed
says nothing of the candidate: the full evaluation decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoresearch.decide import Decision
from autoresearch.evaluate import EvaluationRecord
from autoresearch.noise import signed
from autoresearch.states import DecisionKind, Direction, EvalStatus

# the pinned reasons of a candidate the screen discarded (no full evaluation was run)
REASON_SCREEN_WORSE = "screen: clearly worse than {reference} ({candidate} vs {reference_score})"
REASON_SCREEN_FAILED = "screen failed: {why}"
NOTE_SCREENED = "discarded by evaluator.screen before the full evaluation"


@dataclass(frozen=True)
class ScreenReading:
    """One screen run, as the decision sees it: a score, or why there is none."""

    score: float | None
    failure: str | None = None  # `timeout`, `exit 2`, `did not pass`, `no score`…

    @classmethod
    def of(cls, record: EvaluationRecord) -> ScreenReading:
        if record.timed_out:
            return cls(None, "timeout")
        if record.spawn_error is not None:
            return cls(None, f"could not start ({record.spawn_error})")
        if record.status == EvalStatus.FAIL:
            return cls(None, "did not pass")
        if record.status != EvalStatus.PASS:
            code = record.exit_code
            return cls(None, f"exit {code}" if code not in (None, 0) else "no usable output")
        if record.score is None:
            return cls(None, "no score")
        return cls(record.score)


@dataclass(frozen=True)
class ScreenVerdict:
    """Go on to the full evaluation (`discard` None), or the discard and why."""

    discard: Decision | None
    note: str  # what the screen saw: a note of the iteration's decision


def verdict(
    direction: Direction,
    margin: float,
    candidate: ScreenReading,
    reference: ScreenReading | None,
    reference_name: str,
) -> ScreenVerdict:
    """The table: a failed candidate screen discards; no usable reference goes on; a
    candidate worse than the reference by more than `margin` is discarded; else it goes on."""
    if candidate.score is None:
        failed = REASON_SCREEN_FAILED.format(why=candidate.failure or "no score")
        return ScreenVerdict(_discard(failed, failed), failed)
    if reference is None or reference.score is None:
        why = reference.failure if reference else "no reference"
        return ScreenVerdict(None, f"screen {_number(candidate.score)}; reference: {why}")
    seen = f"screen {_number(candidate.score)} vs {_number(reference.score)}"
    if signed(direction, candidate.score - reference.score) < -margin:
        reason = REASON_SCREEN_WORSE.format(
            reference=reference_name,
            candidate=_number(candidate.score),
            reference_score=_number(reference.score),
        )
        return ScreenVerdict(_discard(reason, seen), seen)
    return ScreenVerdict(None, seen)


def _number(score: float) -> str:
    """A screen's score as its reasons print it: 6 significant digits, never a float's tail."""
    return f"{score:.6g}"


def _discard(reason: str, seen: str) -> Decision:
    return Decision(DecisionKind.DISCARD, reason, (NOTE_SCREENED, seen))
