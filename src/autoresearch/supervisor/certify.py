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
import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

from autoresearch import children, git
from autoresearch.errors import RefusedError
from autoresearch.evaluate import EvaluationRecord, run_evaluator
from autoresearch.fsutil import atomic_write_json
from autoresearch.journal import iteration_records, runs
from autoresearch.jsonshape import (
    is_none,
    items,
    json_field,
    json_shape,
    mapping,
    number,
    optional_number,
    optional_text,
    text,
    whole,
)
from autoresearch.noise import (
    Interval,
    Role,
    Spread,
    difference_interval,
    mean_interval,
    pooled_spread,
    signed_interval,
    spread_of,
    squared_deviations,
)
from autoresearch.paired import in_turn, paired_differences, paired_interval, pairs_to_resolve
from autoresearch.settings import kill_grace
from autoresearch.states import ChildRole, DecisionKind, Direction, EvalPurpose, EvalStatus
from autoresearch.supervisor import estimates
from autoresearch.supervisor.handle import RunContext, RunHandle, lock_run
from autoresearch.supervisor.measure import scratch_checkout
from autoresearch.supervisor.record import measuring_env

CERTIFY_ITERATION = -1  # certification readings belong to no iteration
MAX_ROUNDS = 30  # rounds certify may take to resolve the claimed improvement (`most`)
NOTE_CONFLICT = "does not revert cleanly from the final state: not measured"
NOTE_SUPERSEDED = (
    "superseded: later keeps rewrote every line it changed, nothing of it is left in the "
    "final state: not measured"
)


class CertificationStopped(Exception):
    """certify's `stop` said stop: the readings taken are recorded, no report is written."""


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


@dataclass(frozen=True)
class Measured:
    """One subject's certification readings and their mean with its 95 % interval."""

    commit: str
    readings: list[float]
    interval: Interval | None  # None: no passing reading

    def to_json(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Measured:
        readings, interval = _floats(data.get("readings")), _interval(data.get("interval"))
        return cls(str(data["commit"]), readings, interval)


@dataclass(frozen=True)
class Worth:
    """What one kept change is worth: the final state minus the final state without it."""

    iteration: int
    commit: str
    parent: str
    description: str | None
    without_commit: str | None  # None: it does not come out of the final state alone
    removed_by: str | None
    # without_commit is None, set by __post_init__: a field, not a property, so that the
    # report has it in its place
    conflict: bool = field(init=False)
    superseded: bool
    readings: list[float]  # of the final state without it
    worth: Interval | None
    significant: bool
    # why it was not measured
    note: str | None = field(default=None, metadata=json_field(omit_when=is_none))

    def __post_init__(self) -> None:
        object.__setattr__(self, "conflict", self.without_commit is None)

    def to_json(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Worth:
        return cls(
            iteration=whole(data["iteration"]),
            commit=str(data["commit"]),
            parent=str(data.get("parent") or ""),
            description=optional_text(data.get("description")),
            without_commit=optional_text(data.get("without_commit")),
            removed_by=optional_text(data.get("removed_by")),
            superseded=bool(data.get("superseded")),
            readings=_floats(data.get("readings")),
            worth=_interval(data.get("worth")),
            significant=bool(data.get("significant")),
            note=optional_text(data.get("note")),
        )


def _measured(ablations: tuple[Worth, ...]) -> int:
    return sum(1 for a in ablations if not a.conflict)


def _ablations_json(ablations: object) -> dict[str, object]:
    """The ablations and how many of them were measured; nothing when none were asked for."""
    if ablations is None:
        return {}
    found = cast(tuple[Worth, ...], ablations)
    return {"ablations": found, "ablations_measured": _measured(found)}


@dataclass(frozen=True)
class Certification:
    """A `certify` report (certification.json, `certify --json`): the baseline and the final
    commit re-measured, the improvement (better is +) and, with `ablate`, each keep's worth."""

    run_id: str
    repeats: int
    direction: Direction
    failed_readings: int
    spread: float
    baseline: Measured
    final: Measured
    improvement: Interval | None  # None: no passing reading of one of the two
    significant: bool
    same_commit: bool
    baseline_mean: float | None
    # None: no ablation was asked for (no key); else with how many were measured
    ablations: tuple[Worth, ...] | None = field(
        default=None, metadata=json_field(inline=True, convert=_ablations_json)
    )
    # why the interval cannot resolve the run's claimed effect
    resolution: str | None = field(default=None, metadata=json_field(omit_when=is_none))

    @property
    def ablations_measured(self) -> int:
        return _measured(self.ablations or ())

    def to_json(self) -> dict[str, object]:
        return json_shape(self)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Certification:
        """The report as written by `to_json` (KeyError, TypeError, ValueError: it is not)."""
        found = data.get("ablations")
        return cls(
            run_id=str(data["run_id"]),
            repeats=whole(data["repeats"]),
            direction=Direction(text(data["direction"])),
            failed_readings=whole(data.get("failed_readings") or 0),
            spread=number(data.get("spread") or 0.0),
            baseline=Measured.from_json(mapping(data["baseline"])),
            final=Measured.from_json(mapping(data["final"])),
            improvement=_interval(data.get("improvement")),
            significant=bool(data.get("significant")),
            same_commit=bool(data.get("same_commit")),
            baseline_mean=optional_number(data.get("baseline_mean")),
            ablations=None if found is None else tuple(_ablations(found)),
            resolution=optional_text(data.get("resolution")),
        )


def _ablations(found: object) -> list[Worth]:
    return [Worth.from_json(mapping(worth)) for worth in items(found)]


def _floats(values: object) -> list[float]:
    return [number(v) for v in items(values)]


def _interval(data: object) -> Interval | None:
    return Interval.from_dict(mapping(data)) if data else None


def open_any_run(repo_root: Path, run_id: str) -> RunHandle:
    """Lock a run, whatever its status, for work that no driver may do at the same time."""
    return lock_run(repo_root, run_id)


def certify(
    h: RunHandle,
    repeats: int,
    progress: Callable[[str], None] | None = None,
    ablate: bool = False,
    most: int = MAX_ROUNDS,
    stop: Callable[[], bool] | None = None,
) -> Certification:
    """`repeats` rounds, then more (to `most`) while the interval cannot resolve the run's
    claim; `stop`, asked before each reading, True: CertificationStopped (readings stay)."""
    run = h.run
    if run.baseline_commit is None or run.last_kept_commit is None:
        raise RefusedError(f"run {run.run_id} has no baseline yet: nothing to certify")
    subjects = [Subject("baseline", run.baseline_commit), Subject("final", run.last_kept_commit)]
    ablations = ablations_of(h.context, run) if ablate else []
    subjects += [a.subject for a in ablations if a.subject is not None]
    scores = {s.commit: _recorded(h.context, s.commit) for s in subjects}
    rounds = Rounds(h.context, scores, repeats * len(subjects), progress, stop)
    # interleaved and in turn: baseline, final, (each ablated state,) then the reverse … so
    # that drift affects all alike, and each round's baseline and final readings are a pair
    for round_ in range(repeats):
        rounds.take(in_turn(subjects, round_), round_)
    claimed = estimates.claimed_improvement(h.journal, run)
    done = repeats
    while done < (wanted := min(most, rounds_to_resolve(run.direction, scores, subjects, claimed))):
        rounds.total = repeats * len(subjects) + 2 * (wanted - repeats)
        rounds.take(in_turn(subjects[:2], done), done)
        done += 1
    failures = rounds.failures
    final = str(run.last_kept_commit)
    found = tuple(_worth(h.context, final, a, scores) for a in ablations) if ablate else None
    result = _report(h.context, subjects[:2], scores, done, failures, found)
    result = replace(result, resolution=_resolution(result, claimed, scores))
    atomic_write_json(h.paths.certification, result.to_json())
    return result


def ablations_of(h: RunContext, run: runs.RunRecord) -> list[Ablation]:
    """Each kept change of the run (parent..kept), taken out of the final state."""
    root, final = h.repo.repo_root, str(run.last_kept_commit)
    parent = str(run.baseline_commit)
    info = git.commit_info(root, final)
    found: list[Ablation] = []
    for it in iteration_records.all_iterations(h.journal, h.run_id):
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


def last_certification(h: RunContext, run: runs.RunRecord) -> Certification | None:
    """The last `certify` report of `run`, if it has one for its current final commit."""
    return read_certification(h.paths.certification, run.last_kept_commit)


def read_certification(path: Path, final: str | None) -> Certification | None:
    """certification.json, if it is a readable report of the final commit `final`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        found = Certification.from_json(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    # a certification of an earlier final state says nothing about this one
    return found if found.final.commit == final else None


def ablation_summary(data: Certification) -> str | None:
    """How many kept changes were measured without (None: no ablation was asked for)."""
    found = data.ablations
    if found is None:
        return None
    measured = data.ablations_measured
    gone = sum(1 for a in found if a.conflict and a.superseded)
    stuck = len(found) - measured - gone
    text = f"ablations: {measured} of {len(found)} kept changes measured"
    if gone:
        text += f"; {gone} superseded (later keeps rewrote all of it)"
    if stuck:
        text += f"; {stuck} do not come out of the final state alone (not measured)"
    return text


def certification_lines(data: Certification) -> list[str]:
    """A certification in a few lines, for evidence blocks and reports."""
    imp = data.improvement
    if not imp:
        return ["no passing readings of the baseline and the final commit"]
    verdict = "significant" if data.significant else "not significant"
    lines = [
        f"improvement {imp.signed_text()}"
        f" ({verdict}; baseline and final re-measured {data.repeats} times each, interleaved)"
    ]
    if moved := level_moved(data):
        lines.append(f"  {moved}")
    if data.resolution:
        lines.append(f"  {data.resolution}")
    summary = ablation_summary(data)
    if summary:
        lines.append(f"  {summary}")
    for a in data.ablations or ():
        if a.conflict and a.superseded:
            lines.append(f"  iteration {a.iteration}: superseded by later keeps, not measured")
        elif a.conflict:
            lines.append(f"  iteration {a.iteration}: does not revert cleanly, not measured")
        elif a.worth:
            w = a.worth
            real = "real" if a.significant else "not significant"
            lines.append(f"  iteration {a.iteration}: worth {w.signed_text()} ({real})")
    return lines


MSG_LEVEL_MOVED = (
    "the baseline read {first} in the first round and {last} in the last: the machine's "
    "speed moved during certification; the paired change above is what to trust"
)
# a move of the baseline between two of its readings that one reading's noise explains in
# about 1 case in 20: 2 standard deviations of a difference of two readings
MOVE_IN_SPREADS = 2 * math.sqrt(2)


def level_moved(data: Certification) -> str | None:
    """One line when the baseline's reading in the last round differs from its first by
    more than the noise explains (MOVE_IN_SPREADS of one reading's spread): the level moved
    while certify read, so each commit's mean mixes two levels, which the paired change does
    not. None: it did not, or there is nothing to compare."""
    readings = data.baseline.readings
    if data.same_commit or len(readings) < 2:
        return None
    first, last = readings[0], readings[-1]
    if abs(last - first) <= MOVE_IN_SPREADS * data.spread:
        return None
    places = data.baseline.interval.decimals if data.baseline.interval else None

    def shown(x: float) -> str:
        return f"{x:.{places}f}" if places is not None else f"{x:.6g}"

    return MSG_LEVEL_MOVED.format(first=shown(first), last=shown(last))


class Rounds:
    """Takes certify's interleaved rounds: one reading of each subject that has fewer than the
    round's number (readings already recorded count), progress reported as it goes."""

    def __init__(
        self,
        h: RunContext,
        scores: dict[str, list[float]],
        total: int,
        progress: Callable[[str], None] | None,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self.h, self.scores, self.total, self.progress = h, scores, total, progress
        self.stop, self.failures = stop, 0

    def take(self, subjects: list[Subject], round_: int) -> None:
        """One round; a reading that fails drops the round's others from this certification
        (they stay recorded), so each commit's k-th reading is of the k-th complete round
        and the pairs stay pairs. Kept, they were paired with the next round's readings, one
        round apart, and a drift between rounds no longer cancelled."""
        taken, failed = [], False
        for subject in subjects:
            got = self.scores[subject.commit]
            if len(got) > round_:
                continue
            if self.stop is not None and self.stop():
                raise CertificationStopped
            reading = _measure(self.h, subject, len(got) + self.failures + 1)
            if reading.status == EvalStatus.PASS and reading.score is not None:
                got.append(reading.score)
                taken.append(got)
            else:
                self.failures, failed = self.failures + 1, True
            if self.progress:
                done = sum(min(len(v), round_ + 1) for v in self.scores.values())
                score = "" if reading.score is None else reading.score
                self.progress(f"[{done}/{self.total}] {subject.label} {subject.commit[:12]}: "
                              f"{reading.status} {score}")  # fmt: skip
        if failed:  # the round is incomplete
            for got in taken:
                got.pop()


def rounds_to_resolve(
    direction: Direction,
    scores: Mapping[str, list[float]],
    subjects: list[Subject],
    claimed: float | None,
) -> int:
    """Rounds whose interval would resolve the claimed improvement (noise.pairs_to_resolve),
    from the spread of the baseline and final pairs so far; at most MAX_ROUNDS."""
    pairs = paired_differences(direction, scores[subjects[1].commit], scores[subjects[0].commit])
    wanted = pairs_to_resolve(pairs, claimed or 0.0)
    return len(pairs) if wanted == len(pairs) else min(wanted, MAX_ROUNDS)


def _resolution(
    data: Certification, claimed: float | None, scores: Mapping[str, list[float]]
) -> str | None:
    """Why the interval cannot confirm or refute the run's claim (None: it can)."""
    imp = data.improvement
    if imp is None or not claimed or imp.half_width <= abs(claimed) / 2:
        return None
    pairs = paired_differences(
        data.direction, scores[data.final.commit], scores[data.baseline.commit]
    )
    return (
        f"the interval (± {imp.half_width:.2g}) is too wide to resolve the run's claimed "
        f"improvement ({claimed:+.3g}): about {pairs_to_resolve(pairs, claimed)} readings of "
        "each would"
    )


def _recorded(h: RunContext, commit: str) -> list[float]:
    return [r.score for r in runs.readings(h.journal, h.run_id, commit) if r.role == Role.CERTIFY]


def _measure(h: RunContext, subject: Subject, n: int) -> EvaluationRecord:
    tree = scratch_checkout(h, h.paths.scratch / "certify" / subject.label, subject.commit)
    mission_dir = tree / h.sandbox.relative_dir
    env = measuring_env(h, CERTIFY_ITERATION, tree, mission_dir)

    def register(pgid: int) -> None:
        children.register(h.journal, h.tag, pgid, ChildRole.CERTIFY)

    reading = run_evaluator(
        h.evaluator,
        tree,
        env,
        h.paths.logs / f"certify-{subject.label}-{n:03d}.log",
        on_spawn=register,
        grace_seconds=kill_grace(),
        box=h.box(agent=False),
    )
    with h.journal.tx() as conn:
        runs.insert_evaluation(
            conn, h.run_id, CERTIFY_ITERATION, EvalPurpose.CERTIFY, reading, Role.CERTIFY,
            subject.commit,
        )  # fmt: skip
    return reading


def _better_is_positive(h: RunContext, after: list[float], before: list[float]) -> Interval:
    """after − before, better is +: the paired interval of each round's two readings (taken
    together: drift cancels); with fewer than two pairs, Welch's of the means."""
    pairs = paired_differences(h.direction, after, before)
    if len(pairs) >= 2:
        return paired_interval(pairs)
    return signed_interval(h.direction, difference_interval(after, before))


def _worth(h: RunContext, final_commit: str, a: Ablation, scores: dict[str, list[float]]) -> Worth:
    """What a kept change is worth: the final state minus the final state without it."""
    unmeasured = Worth(
        iteration=a.iteration,
        commit=a.kept,
        parent=a.parent,
        description=a.description,
        without_commit=a.without,
        removed_by=None if a.removed_by is None else str(a.removed_by),
        superseded=a.superseded,
        readings=[],
        worth=None,
        significant=False,
    )
    if a.without is None:
        return replace(unmeasured, note=NOTE_SUPERSEDED if a.superseded else NOTE_CONFLICT)
    final, without = scores[final_commit], scores[a.without]
    worth = _better_is_positive(h, final, without) if final and without else None
    return replace(
        unmeasured, readings=without, worth=worth, significant=bool(worth and worth.low > 0)
    )


def _report(
    h: RunContext,
    subjects: list[Subject],
    scores: dict[str, list[float]],
    repeats: int,
    failures: int,
    ablations: tuple[Worth, ...] | None,
) -> Certification:
    base, final = scores[subjects[0].commit], scores[subjects[1].commit]
    same = subjects[0].commit == subjects[1].commit
    spread = pairs_spread(h.direction, base, final) if not same else pooled_spread([base])

    def measured(s: Subject) -> Measured:
        values = scores[s.commit]
        return Measured(s.commit, values, mean_interval(values, spread) if values else None)

    improvement = _better_is_positive(h, final, base) if base and final else None
    return Certification(
        run_id=h.run_id,
        repeats=repeats,
        direction=h.direction,
        failed_readings=failures,
        spread=spread.sd,
        baseline=measured(subjects[0]),
        final=measured(subjects[1]),
        improvement=improvement,
        significant=bool(improvement and improvement.low > 0),
        same_commit=same,
        baseline_mean=statistics.fmean(base) if base else None,
        ablations=ablations,
    )


def pairs_spread(direction: Direction, base: list[float], final: list[float]) -> Spread:
    """The spread of one reading, from within certify's pairs: each round's two readings share
    the machine's level, so their difference holds none of it, and has twice a reading's
    variance. A level that moves between rounds (a load that ended) adds nothing, where the
    spread of each commit's readings over all rounds counted it as noise (scale.py measures
    the run's spread within blocks for the same reason). Plain, not clipped: the means it
    bounds are plain means. Fewer than two pairs: each commit's readings pooled."""
    pairs = paired_differences(direction, final, base)
    if len(pairs) < 2:
        return pooled_spread([base, final])
    return spread_of(squared_deviations(pairs) / 2, len(pairs) - 1)
