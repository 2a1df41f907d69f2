"""Memory across runs (issue 33): a digest of the earlier runs of a run's mission, for its
instructions, so that a new run does not re-discover what an earlier one already kept or
already saw fail. `digest_lines` is pure (same records, same text); `earlier_runs` reads them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from autoresearch.journal import iteration_records, runs
from autoresearch.journal.db import Journal
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.runs import RunRecord
from autoresearch.journal.views import format_score
from autoresearch.noise import Interval
from autoresearch.states import DecisionKind, Direction
from autoresearch.supervisor import estimates

RUNS_CAP = 5  # earlier runs shown, newest first
KEPT_CAP = 5  # kept changes shown per run: the largest improvements
FAILED_CAP = 3  # failed descriptions shown per run: the most frequent
DESCRIPTION_CAP = 100
DIGEST_CAP = 4000  # characters of the whole section, however many runs and iterations
SCAN_CAP = 500  # iterations read per run and kind: the digest's cost stays bounded
FAILED = (DecisionKind.DISCARD, DecisionKind.ERROR, DecisionKind.AMBIGUOUS)


@dataclass(frozen=True)
class KeptChange:
    """A kept iteration of an earlier run and how much better it made the score (+: better)."""

    iteration: int
    description: str
    gain: float | None


@dataclass(frozen=True)
class EarlierRun:
    """What the digest says of one earlier run."""

    run_id: str
    status: str
    iterations: int
    baseline_score: float | None
    final_score: float | None
    kept: tuple[KeptChange, ...] = ()
    failed: tuple[tuple[str, int], ...] = ()  # (description, how many times), most first
    certified: Interval | None = None


def _clip(text: str, limit: int = DESCRIPTION_CAP) -> str:
    one_line = " ".join(text.split()) or "(no description)"
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _signed(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.6g}"


def run_lines(run: EarlierRun) -> list[str]:
    """One earlier run's part of the digest."""
    base = format_score(run.baseline_score) or "n/a"
    final = format_score(run.final_score) or "n/a"
    head = f"- run {run.run_id} ({run.status}, {run.iterations} iterations): {base} → {final}"
    if run.certified is not None:
        c = run.certified
        head += f"; certified improvement {_signed(c.mean)} [{c.low:.6g}, {c.high:.6g}]"
    lines = [head] if run.kept else [head, "  - nothing was kept"]
    best = sorted(run.kept, key=lambda k: (-(k.gain or 0.0), k.iteration))[:KEPT_CAP]
    lines += [
        f"  - kept (iteration {k.iteration}, {_signed(k.gain)}): {_clip(k.description)}"
        for k in sorted(best, key=lambda k: k.iteration)
    ]
    return lines + [f"  - failed ×{n}: {_clip(d)}" for d, n in run.failed[:FAILED_CAP]]


def digest_lines(earlier: Sequence[EarlierRun]) -> list[str]:
    """The section "Earlier runs of this mission" (`earlier`: newest first), at most
    DIGEST_CAP characters: a run that does not fit whole is left out with the older ones."""
    if not earlier:
        return []
    lines = [
        "Earlier runs of this mission (newest first; score changes: + is better; what was "
        "kept there is not in this run's history, what failed is worth not retrying as is):"
    ]
    size = len(lines[0])
    for run in earlier[:RUNS_CAP]:
        part = run_lines(run)
        cost = sum(len(line) + 1 for line in part)
        if size + cost > DIGEST_CAP:
            break
        lines += part
        size += cost
    return [*lines, ""] if len(lines) > 1 else []


def kept_changes(
    kept: Sequence[IterationRecord], baseline: float | None, direction: Direction
) -> tuple[KeptChange, ...]:
    """Each kept iteration (oldest first) with its score's gain over the previous kept one."""
    sign = -1.0 if direction == Direction.LOWER else 1.0
    out, before = [], baseline
    for it in kept:
        score = it.evaluator.score if it.evaluator else None
        gain = None if score is None or before is None else sign * (score - before)
        out.append(KeptChange(it.iteration, it.description or "", gain))
        before = score if score is not None else before
    return tuple(out)


def most_failed(failed: Sequence[IterationRecord]) -> tuple[tuple[str, int], ...]:
    """Failed descriptions, most frequent first (ties: the one seen first)."""
    counts = Counter(_clip(it.description or "") for it in failed)  # keeps first-seen order
    ranked = sorted(counts.items(), key=lambda dn: -dn[1])  # a stable sort: ties stay in order
    return tuple(ranked[:FAILED_CAP])


def earlier_run(journal: Journal, run: RunRecord) -> EarlierRun:
    baseline = runs.baseline_score(journal, run.run_id, run.baseline_commit)
    kept = iteration_records.decided_iterations(journal, run.run_id, (DecisionKind.KEEP,), SCAN_CAP)
    failed = iteration_records.decided_iterations(journal, run.run_id, FAILED, SCAN_CAP)
    return EarlierRun(
        run_id=run.run_id,
        status=str(run.status),
        iterations=run.iteration,
        baseline_score=baseline,
        final_score=run.last_kept_score,
        # more keeps than were read: the first one read did not start from the baseline
        kept=kept_changes(kept, None if len(kept) == SCAN_CAP else baseline, run.direction),
        failed=most_failed(failed),
        certified=estimates.certified_improvement(journal, run),
    )


def earlier_runs(journal: Journal, run: RunRecord) -> list[EarlierRun]:
    """The earlier runs of `run`'s mission, newest first, as the digest shows them."""
    return [earlier_run(journal, r) for r in runs.earlier_runs_of_mission(journal, run, RUNS_CAP)]
