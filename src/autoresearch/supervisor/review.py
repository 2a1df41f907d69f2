"""`autoresearch finalize`: a run's kept commits as review branches cut from its start point.

Kept commits that touch disjoint files become independent branches; commits that share a file
stay together, in run order. The last commit of each branch carries the evidence (scores
before and after, the run id). Everything is built with plumbing in a throw-away index: no
checkout is touched and no existing ref moves – the run branch is never rewritten, and a review
branch that exists already is left alone (an identical one is reported as such). Commits keep
their author and dates, so building the same plan twice gives the same SHAs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from autoresearch import git
from autoresearch.errors import RefusedError
from autoresearch.journal import iteration_records
from autoresearch.journal.runs import RunRecord
from autoresearch.jsonshape import json_shape
from autoresearch.noise import Interval
from autoresearch.paths import STATE_DIR, RepoPaths, slug
from autoresearch.redact import redact
from autoresearch.states import ReviewState
from autoresearch.supervisor import estimates
from autoresearch.supervisor.certify import (
    Certification,
    certification_lines,
    read_certification,
)
from autoresearch.supervisor.kept import KeptStep, kept_steps
from autoresearch.supervisor.run_read import read_run

BRANCH_PREFIX = "autoresearch-review"
HONEST_NOTE = (
    "Scores were measured on the run branch in iteration order, each change on top of the\n"
    "earlier keeps; this branch on its own was not measured."
)


def msg_nothing_kept(run_id: str) -> str:
    return f"autoresearch_finalize_nothing_kept:{run_id}: the run kept no commit"


def msg_dirty_checkout(paths: list[str]) -> str:
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (
        f"autoresearch_finalize_dirty_checkout:{shown}: your checkout has uncommitted changes "
        "in files the review branches change; commit or stash them first"
    )


def msg_conflict(commit: str, start: str) -> str:
    return (
        f"autoresearch_finalize_conflict:{commit[:7]}: the kept change does not apply to the "
        f"run's start point {start[:7]} (use --single for one squashed branch)"
    )


def msg_branch_exists(name: str) -> str:
    return (
        f"autoresearch_finalize_branch_exists:{name}: a different branch of that name exists; "
        f"delete it (git branch -D {name}) to build it again"
    )


@dataclass(frozen=True)
class Keep:
    """One kept iteration: its commits (oldest first) on top of the previous kept state."""

    iteration: int
    base: str
    commit: str
    description: str
    score_before: float | None
    score_after: float | None
    commits: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    # the two scores' estimates (mean, 95 % interval, n) when the evaluator varies
    before_interval: Interval | None = None
    after_interval: Interval | None = None


@dataclass(frozen=True)
class Branch:
    """One review branch: its name, the keeps it carries and the files they touch."""

    name: str
    keeps: tuple[Keep, ...]
    files: tuple[str, ...]
    squash: bool = False
    head: str | None = None  # the built tip
    state: ReviewState = ReviewState.PLANNED

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    def json_extra(self) -> dict[str, object]:
        """The iterations it carries, beside the keeps (what a reader of the JSON looks up)."""
        return {"iterations": [k.iteration for k in self.keeps]}


@dataclass(frozen=True)
class FinalizeResult:
    run_id: str
    start_commit: str
    run_branch: str
    dry_run: bool
    branches: tuple[Branch, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


# --- the plan (pure) -----------------------------------------------------------------------


def group_keeps(keeps: list[Keep]) -> list[list[Keep]]:
    """Keeps that share a file (directly or through others) form one group, in run order."""
    groups: list[tuple[set[str], list[Keep]]] = []
    for keep in keeps:
        touched = set(keep.files)
        joined = [g for g in groups if g[0] & touched]
        merged_files, merged_keeps = set(touched), [keep]
        for g in joined:
            merged_files |= g[0]
            merged_keeps += g[1]
            groups.remove(g)
        groups.append((merged_files, sorted(merged_keeps, key=lambda k: k.iteration)))
    return sorted((g[1] for g in groups), key=lambda ks: ks[0].iteration)


TOPIC_MAX = 40


def topic(files: list[str]) -> str:
    """A branch-name word for a group: its first file, slugged (`paths.slug`, at most
    TOPIC_MAX characters)."""
    return slug(files[0], "change", TOPIC_MAX) if files else "change"


def plan(run_id: str, keeps: list[Keep], single: bool) -> list[Branch]:
    if single:
        files = tuple(sorted({f for k in keeps for f in k.files}))
        return [Branch(f"{BRANCH_PREFIX}/{run_id}/all", tuple(keeps), files, squash=True)]
    branches = []
    for n, group in enumerate(group_keeps(keeps), start=1):
        touched = sorted({f for k in group for f in k.files})
        name = f"{BRANCH_PREFIX}/{run_id}/{n}-{topic(touched)}"
        branches.append(Branch(name, tuple(group), tuple(touched)))
    return branches


def evidence(run: RunRecord, branch: Branch, certification: Certification | None = None) -> str:
    """The block the last commit message of a branch ends with; `certification`: the run's
    last `certify` report of its final commit, when there is one."""
    direction = run.evaluator.direction
    metric = run.evaluator.metric or "score"
    first, last = branch.keeps[0], branch.keeps[-1]
    lines = [
        "autoresearch evidence",
        f"Run: {run.run_id} (branch {run.branch_name})",
        f"Metric: {metric} ({direction} is better)",
        f"Before: {_score(first.score_before, first.before_interval)} "
        f"(kept state before iteration {first.iteration})",
        f"After: {_score(last.score_after, last.after_interval)} (iteration {last.iteration})",
        "Steps:",
        *(
            f"  iteration {k.iteration}: {_score(k.score_before, k.before_interval)} -> "
            f"{_score(k.score_after, k.after_interval)}  {k.description}"
            for k in branch.keeps
        ),
        *_certification(certification),
        HONEST_NOTE,
        "",
        f"Autoresearch-Run: {run.run_id}",
        f"Autoresearch-Iterations: {', '.join(str(k.iteration) for k in branch.keeps)}",
    ]
    return "\n".join(lines)


def _certification(data: Certification | None) -> list[str]:
    if data is None:
        return ["Certification: none recorded for this run"]
    first, *rest = certification_lines(data)
    return [f"Certification (whole run, baseline -> final): {first}", *rest]


def _score(value: float | None, interval: Interval | None) -> str:
    """The mean ± its half-width (n) when the readings vary; else the value as measured."""
    return estimates.text(value, interval) or "n/a"


def squash_message(branch: Branch) -> str:
    head = f"autoresearch: {len(branch.keeps)} kept changes"
    return "\n".join([head, "", *(f"- {k.description}" for k in branch.keeps)])


# --- reading the run -----------------------------------------------------------------------


def kept(repo_root: Path, steps: list[KeptStep]) -> list[Keep]:
    """The run's keeps in order, each with its commits and the files they touch."""
    return [
        Keep(
            k.iteration,
            k.base,
            k.commit,
            k.description,
            k.before,
            k.after,
            tuple(git.commits_between(repo_root, k.base, k.commit)),
            tuple(git.changed_files(repo_root, k.base, k.commit)),
            k.before_estimate,
            k.after_estimate,
        )
        for k in steps
    ]


def start_point(run: RunRecord) -> str:
    return str(run.sandbox.start_commit or run.baseline_commit)


# --- building ------------------------------------------------------------------------------


def finalize(
    repo_root: Path, run_id: str, single: bool = False, dry_run: bool = False
) -> FinalizeResult:
    """Plan the review branches of `run_id`, build their commits and (unless `dry_run`) create
    them all in one ref transaction."""
    journal, run = read_run(repo_root, run_id)
    with journal:
        steps = kept_steps(journal, run, iteration_records.all_iterations(journal, run_id))
    keeps = kept(repo_root, steps)
    if not keeps:
        raise RefusedError(msg_nothing_kept(run_id))
    branches = plan(run_id, keeps, single)
    _refuse_dirty_checkout(repo_root, branches)
    start = start_point(run)
    built = [_build(repo_root, run, start, b) for b in branches]
    built = [_compare_existing(repo_root, b) for b in built]
    if not dry_run:
        git.create_branches(
            repo_root, {b.name: b.head or "" for b in built if b.state == ReviewState.PLANNED}
        )
        built = [_created(b) for b in built]
    return FinalizeResult(run_id, start, run.branch_name, dry_run, tuple(built))


def _refuse_dirty_checkout(repo_root: Path, branches: list[Branch]) -> None:
    """Uncommitted changes matter when they are in files a review branch changes: merging the
    branch into that checkout would collide with them. Anything else is the user's business."""
    touched = {f for b in branches for f in b.files}
    dirty = sorted(
        {
            path
            for entry in git.status(repo_root)
            for path in (entry.path, entry.orig_path)
            if path and path in touched and not path.startswith(f"{STATE_DIR}/")
        }
    )
    if dirty:
        raise RefusedError(msg_dirty_checkout(dirty))


def _build(repo_root: Path, run: RunRecord, start: str, branch: Branch) -> Branch:
    if branch.squash:
        first, last = branch.keeps[0], branch.keeps[-1]
        steps = [(first.base, last.commit, squash_message(branch), last.commit)]
    else:
        steps = []
        for keep in branch.keeps:
            parent = keep.base
            for commit in keep.commits:
                steps.append((parent, commit, git.commit_message(repo_root, commit), commit))
                parent = commit
    certified = read_certification(
        RepoPaths(repo_root).run(run.run_id).certification, run.last_kept_commit
    )
    head = start
    for i, (base, tip, message, info_of) in enumerate(steps):
        tree = git.tree_with_patch(repo_root, head, git.diff_between(repo_root, base, tip))
        if tree is None:
            raise RefusedError(msg_conflict(tip, start))
        if i == len(steps) - 1:
            message = f"{message.rstrip()}\n\n{evidence(run, branch, certified)}\n"
        # the agent wrote the commit messages and descriptions: all of it is masked, not only
        # the evidence block
        info = git.commit_info(repo_root, info_of)
        head = git.commit_tree(repo_root, tree, head, redact(message), info)
    return replace(branch, head=head)


def _compare_existing(repo_root: Path, branch: Branch) -> Branch:
    existing = git.resolve_commits(repo_root, [f"refs/heads/{branch.name}"])[0]
    if existing is None:
        return branch
    if existing != branch.head:
        raise RefusedError(msg_branch_exists(branch.name))
    return replace(branch, state=ReviewState.UNCHANGED)


def _created(branch: Branch) -> Branch:
    if branch.state != ReviewState.PLANNED:
        return branch
    return replace(branch, state=ReviewState.CREATED)
