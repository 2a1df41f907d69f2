"""certify (trust.md): re-measure a run's baseline and final kept commit, interleaved, in
scratch checkouts, and report the improvement with a 95 % interval; with `ablate`, also the
final state without each kept change in turn, and what each one is worth.

Every reading is a journal row (role `certify`, iteration -1), written as soon as it is
taken, so an interrupted certification resumes where it stopped: readings already recorded
count towards `repeats`. An ablated state is a commit built without a checkout (the final tree
with the kept change taken out – its diff reversed, else a three-way merge, else its diff
without context lines: git.tree_without – with the final commit's author and dates), so
building it again gives the same SHA and its recorded readings are found again. The last
report is kept in the run's scratch folder (`certification.json`), where `review` and `report`
find it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autoresearch import children, git
from autoresearch.errors import NotFoundError, RefusedError
from autoresearch.evaluate import EvaluationRecord, run_evaluator
from autoresearch.fsutil import atomic_write_json
from autoresearch.journal import runs
from autoresearch.noise import Interval, Role, difference_interval, mean_interval, pooled_spread
from autoresearch.settings import journal_timeout, kill_grace
from autoresearch.states import DecisionKind, Direction, EvalStatus
from autoresearch.supervisor.handle import RunHandle, driver_lock, open_journal
from autoresearch.supervisor.measure import scratch_checkout
from autoresearch.supervisor.record import measuring_env

CERTIFY_ITERATION = -1  # certification readings belong to no iteration
NOTE_CONFLICT = "does not revert cleanly from the final state: not measured"
NOTE_SUPERSEDED = (
    "superseded: later keeps rewrote every line it changed, nothing of it is left in the "
    "final state: not measured"
)


@dataclass(frozen=True)
class Subject:
    label: str
    commit: str


@dataclass(frozen=True)
class Ablation:
    """The final state without one kept change (`without` None: it does not revert cleanly)."""

    iteration: int
    kept: str  # the kept commit
    parent: str  # the kept commit before it (or the baseline): the change is parent..kept
    description: str
    without: str | None
    removed_by: git.Removal | None = None  # how the change was taken out of the final state
    superseded: bool = False  # not taken out: later keeps rewrote all of it

    @property
    def subject(self) -> Subject | None:
        if self.without is None:
            return None
        return Subject(f"without-{self.iteration:04d}", self.without)


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
    h: RunHandle,
    repeats: int,
    progress: Callable[[str], None] | None = None,
    ablate: bool = False,
) -> dict[str, Any]:
    run = h.run
    if run.baseline_commit is None or run.last_kept_commit is None:
        raise RefusedError(f"run {run.run_id} has no baseline yet: nothing to certify")
    subjects = [Subject("baseline", run.baseline_commit), Subject("final", run.last_kept_commit)]
    ablations = ablations_of(h) if ablate else []
    subjects += [a.subject for a in ablations if a.subject is not None]
    scores = {s.commit: _recorded(h, s.commit) for s in subjects}
    failures = 0
    total = repeats * len(subjects)
    # interleaved: baseline, final, (each ablated state,) baseline, final … so that drift
    # affects all alike
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
                done = sum(min(len(v), repeats) for v in scores.values())
                score = "" if reading.score is None else reading.score
                progress(f"[{done}/{total}] {subject.label} {subject.commit[:12]}: "
                         f"{reading.status} {score}")  # fmt: skip
    data = _report(h, subjects[:2], scores, repeats, failures)
    if ablate:
        data["ablations"] = [_worth(h, a, scores) for a in ablations]
        data["ablations_measured"] = sum(1 for a in data["ablations"] if not a["conflict"])
    atomic_write_json(h.paths.certification, data)
    return data


def ablations_of(h: RunHandle) -> list[Ablation]:
    """Each kept change of the run (parent..kept), taken out of the final state."""
    root, final = h.repo.repo_root, str(h.run.last_kept_commit)
    parent = str(h.run.baseline_commit)
    info = git.commit_info(root, final)
    found: list[Ablation] = []
    for it in runs.all_iterations(h.journal, h.run_id):
        kept = it.kept_commit or it.candidate_commit
        if it.decision != DecisionKind.KEEP or it.iteration <= 0 or kept is None:
            continue
        if kept == parent or not git.is_ancestor(root, kept, final):
            continue  # not part of the final state (a later rebaseline, a rolled-back keep)
        taken = git.tree_without(root, final, parent, kept)
        without, how, gone = None, None, False
        if taken is not None:
            message = f"autoresearch certify: {final[:12]} without {kept[:12]}"
            without, how = git.commit_tree(root, taken[0], final, message, info), taken[1]
        else:
            gone = git.superseded(root, final, parent, kept)
        found.append(Ablation(it.iteration, kept, parent, it.description, without, how, gone))
        parent = kept
    return found


def last_certification(h: RunHandle) -> dict[str, Any] | None:
    """The last `certify` report of the run, if it has one for its current final commit."""
    return read_certification(h.paths.certification, h.run.last_kept_commit)


def read_certification(path: Path, final: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("final"), dict):
        return None
    # a certification of an earlier final state says nothing about this one
    return data if data["final"].get("commit") == final else None


def ablation_summary(data: dict[str, Any]) -> str | None:
    """How many kept changes were measured without (None: no ablation was asked for)."""
    found = data.get("ablations")
    if found is None:
        return None
    measured = sum(1 for a in found if not a.get("conflict"))
    gone = sum(1 for a in found if a.get("conflict") and a.get("superseded"))
    stuck = len(found) - measured - gone
    text = f"ablations: {measured} of {len(found)} kept changes measured"
    if gone:
        text += f"; {gone} superseded (later keeps rewrote all of it)"
    if stuck:
        text += f"; {stuck} do not come out of the final state alone (not measured)"
    return text


def certification_lines(data: dict[str, Any]) -> list[str]:
    """A certification in a few lines, for evidence blocks and reports."""
    imp = data.get("improvement")
    if not imp:
        return ["no passing readings of the baseline and the final commit"]
    verdict = "significant" if data.get("significant") else "not significant"
    repeats = data.get("repeats")
    lines = [
        f"improvement {imp['mean']:+.6g}, 95 % interval [{imp['low']:+.6g}, {imp['high']:+.6g}]"
        f" ({verdict}; baseline and final re-measured {repeats} times each, interleaved)"
    ]
    summary = ablation_summary(data)
    if summary:
        lines.append(f"  {summary}")
    for a in data.get("ablations") or []:
        if a.get("conflict") and a.get("superseded"):
            lines.append(f"  iteration {a['iteration']}: superseded by later keeps, not measured")
        elif a.get("conflict"):
            lines.append(f"  iteration {a['iteration']}: does not revert cleanly, not measured")
        elif a.get("worth"):
            w = a["worth"]
            real = "real" if a.get("significant") else "not significant"
            lines.append(
                f"  iteration {a['iteration']}: worth {w['mean']:+.6g} "
                f"[{w['low']:+.6g}, {w['high']:+.6g}] ({real})"
            )
    return lines


def _recorded(h: RunHandle, commit: str) -> list[float]:
    return [r.score for r in runs.readings(h.journal, h.run_id, commit) if r.role == Role.CERTIFY]


def _measure(h: RunHandle, subject: Subject, n: int) -> EvaluationRecord:
    tree = scratch_checkout(h, h.paths.scratch / "certify" / subject.label, subject.commit)
    mission_dir = tree / h.run.sandbox.relative_dir
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


def _better_is_positive(h: RunHandle, after: list[float], before: list[float]) -> Interval:
    diff = difference_interval(after, before)
    if h.run.direction == Direction.LOWER:  # "improvement" reads as better-is-positive
        diff = Interval(-diff.mean, -diff.high, -diff.low, diff.n, diff.level)
    return diff


def _worth(h: RunHandle, a: Ablation, scores: dict[str, list[float]]) -> dict[str, Any]:
    """What a kept change is worth: the final state minus the final state without it."""
    data: dict[str, Any] = {
        "iteration": a.iteration,
        "commit": a.kept,
        "parent": a.parent,
        "description": a.description,
        "without_commit": a.without,
        "removed_by": None if a.removed_by is None else str(a.removed_by),
        "conflict": a.without is None,
        "superseded": a.superseded,
        "readings": [],
        "worth": None,
        "significant": False,
    }
    if a.without is None:
        data["note"] = NOTE_SUPERSEDED if a.superseded else NOTE_CONFLICT
        return data
    final, without = scores[str(h.run.last_kept_commit)], scores[a.without]
    data["readings"] = without
    if final and without:
        worth = _better_is_positive(h, final, without)
        data["worth"] = worth.to_dict()
        data["significant"] = worth.low > 0
    return data


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
    improvement = _better_is_positive(h, final, base) if base and final else None
    data["improvement"] = improvement.to_dict() if improvement else None
    data["significant"] = bool(improvement and improvement.low > 0)
    data["same_commit"] = subjects[0].commit == subjects[1].commit
    data["baseline_mean"] = statistics.fmean(base) if base else None
    return data
