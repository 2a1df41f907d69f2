"""What a run's views say beyond its pooled numbers (#34, trust.md "What a real machine adds"):
the improvement certify measured in paired rounds, the drift the run saw, and why the best
reads worse than an earlier level when it does.

Every view of a run (`status`, `status RUN_ID`, the summary after `run`, MCP run_status) takes
these facts from `facts`, so they agree with each other and with the report, which reads the
same `estimates` functions. The pooled best is a mean of readings taken at other moments than
the baseline's: when the machine drifted it can read worse than an earlier keep even though
every keep was judged on readings paired in time. The views then say so instead of showing a
best that silently went backwards.
"""

from __future__ import annotations

from typing import NamedTuple

from autoresearch.journal import runs
from autoresearch.journal.db import Journal
from autoresearch.journal.runs import RunRecord
from autoresearch.noise import Interval
from autoresearch.states import KeepPolicy, best_by, is_better
from autoresearch.supervisor import estimates

# status's note when the best reads worse than an earlier level of the run
MSG_BEST_WORSE = (
    "the best reads worse than {label} did ({value}): their readings were taken at other "
    "moments and the machine may have drifted in between; each keep was judged on readings "
    "paired in time"
)
MSG_CERTIFY_HINT = "; `autoresearch certify {run_id}` compares them paired"


# a NamedTuple: status imports it, and a frozen dataclass compiles its methods at import
class HonestFacts(NamedTuple):
    """A run's paired improvement (None: not certified), its drift and the best's note."""

    certified_improvement: Interval | None  # final − baseline, better is +, certify's pairs
    drift: tuple[estimates.LevelDrift, ...]
    best_note: str | None


def facts(journal: Journal, run: RunRecord) -> HonestFacts:
    certified = estimates.certified_improvement(journal, run)
    return HonestFacts(certified, estimates.level_drift(journal, run), best_note(journal, run))


def best_note(journal: Journal, run: RunRecord) -> str | None:
    """Why the best (the kept commit's mean) reads worse than the baseline or an earlier kept
    commit (None: it reads no worse than any of them, or the run keeps without scores)."""
    kept = run.last_kept_commit
    if run.keep_policy != KeepPolicy.SCORE_IMPROVEMENT or kept in (None, run.baseline_commit):
        return None
    found = estimates.RunReadings.load(journal, run)
    best = found.estimate(kept)
    earlier = [("the baseline", run.baseline_commit)]
    earlier += [(f"kept commit {c[:7]}", c) for c in runs.kept_commits(journal, run.run_id)]
    levels = [(label, found.estimate(c)) for label, c in earlier if c and c != kept]
    known = [(label, level) for label, level in levels if level is not None]
    top = best_by(run.direction, known, lambda pair: pair[1].mean)
    if best is None or top is None or not is_better(run.direction, top[1].mean, best.mean):
        return None
    note = MSG_BEST_WORSE.format(label=top[0], value=estimates.text(top[1].mean, top[1]))
    certified = estimates.certified_improvement(journal, run) is not None
    return note if certified else note + MSG_CERTIFY_HINT.format(run_id=run.run_id)
