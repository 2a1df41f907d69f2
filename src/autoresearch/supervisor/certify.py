"""certify (trust.md): re-measure a run's baseline and final kept commit, interleaved, in
scratch checkouts, and report the improvement with a 95 % interval.

Every reading is a journal row (role `certify`, iteration -1), written as soon as it is
taken, so an interrupted certification resumes where it stopped: readings already recorded
count towards `repeats`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autoresearch import children
from autoresearch.errors import NotFoundError, RefusedError
from autoresearch.evaluate import EvaluationRecord, run_evaluator
from autoresearch.journal import runs
from autoresearch.noise import Interval, Role, difference_interval, mean_interval, pooled_spread
from autoresearch.settings import journal_timeout, kill_grace
from autoresearch.states import EvalStatus
from autoresearch.supervisor.handle import RunHandle, driver_lock, open_journal
from autoresearch.supervisor.measure import scratch_checkout
from autoresearch.supervisor.record import measuring_env

CERTIFY_ITERATION = -1  # certification readings belong to no iteration


@dataclass(frozen=True)
class Subject:
    label: str
    commit: str


def open_any_run(repo_root: Path, run_id: str) -> RunHandle:
    """Lock a run, whatever its status, for work that no driver may do at the same time."""
    from autoresearch.paths import RepoPaths

    journal = open_journal(repo_root, journal_timeout())
    try:
        run = runs.get_run(journal, run_id)
        if run is None:
            raise NotFoundError(f"unknown run: {run_id}")
        repo = RepoPaths(repo_root)
        lock = driver_lock(repo, run_id)
    except BaseException:
        journal.close()
        raise
    return RunHandle(journal, repo, run, lock)


def certify(
    h: RunHandle, repeats: int, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    run = h.run
    if run.baseline_commit is None or run.last_kept_commit is None:
        raise RefusedError(f"run {run.run_id} has no baseline yet: nothing to certify")
    subjects = [Subject("baseline", run.baseline_commit), Subject("final", run.last_kept_commit)]
    scores = {s.commit: _recorded(h, s.commit) for s in subjects}
    failures = 0
    # interleaved: baseline, final, baseline, final … so that drift affects both alike
    for round_ in range(repeats):
        for subject in subjects:
            if len(scores[subject.commit]) > round_:
                continue
            reading = _measure(h, subject, len(scores[subject.commit]) + failures + 1)
            if reading.status == EvalStatus.PASS and reading.score is not None:
                scores[subject.commit].append(reading.score)
            else:
                failures += 1
            if progress:
                progress(f"{subject.label} {subject.commit[:12]}: {reading.status} "
                         f"{'' if reading.score is None else reading.score}")  # fmt: skip
    return _report(h, subjects, scores, repeats, failures)


def _recorded(h: RunHandle, commit: str) -> list[float]:
    return [r.score for r in runs.readings(h.journal, h.run_id, commit) if r.role == Role.CERTIFY]


def _measure(h: RunHandle, subject: Subject, n: int) -> EvaluationRecord:
    tree = scratch_checkout(h, h.paths.scratch / "certify" / subject.label, subject.commit)
    mission_dir = tree / str(h.run.sandbox.get("relative_dir", "."))
    env = measuring_env(h, CERTIFY_ITERATION, tree, mission_dir)

    def register(pgid: int) -> None:
        children.register(h.journal, h.tag, pgid, "certify")

    reading = run_evaluator(
        h.evaluator,
        tree,
        env,
        h.paths.logs / f"certify-{subject.label}-{n:03d}.log",
        on_spawn=register,
        grace_seconds=kill_grace(),
    )
    with h.journal.tx() as conn:
        runs.insert_evaluation(
            conn, h.run_id, CERTIFY_ITERATION, "certify", reading.to_dict(), Role.CERTIFY,
            subject.commit,
        )  # fmt: skip
    return reading


def _report(
    h: RunHandle,
    subjects: list[Subject],
    scores: dict[str, list[float]],
    repeats: int,
    failures: int,
) -> dict[str, Any]:
    spread = pooled_spread([scores[s.commit] for s in subjects])
    data: dict[str, Any] = {
        "run_id": h.run_id,
        "repeats": repeats,
        "direction": h.run.direction,
        "failed_readings": failures,
        "spread": spread.sd,
    }
    for s in subjects:
        values = scores[s.commit]
        data[s.label] = {
            "commit": s.commit,
            "readings": values,
            "interval": mean_interval(values, spread).to_dict() if values else None,
        }
    base, final = scores[subjects[0].commit], scores[subjects[1].commit]
    improvement: Interval | None = None
    if base and final:
        diff = difference_interval(final, base)
        if h.run.direction == "lower":  # "improvement" reads as better-is-positive
            diff = Interval(-diff.mean, -diff.high, -diff.low, diff.n, diff.level)
        improvement = diff
    data["improvement"] = improvement.to_dict() if improvement else None
    data["significant"] = bool(improvement and improvement.low > 0)
    data["same_commit"] = subjects[0].commit == subjects[1].commit
    data["baseline_mean"] = statistics.fmean(base) if base else None
    return data
