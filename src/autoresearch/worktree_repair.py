"""Half-built worktree registrations a kill inside `git worktree add` left (git.py): which
are the tool's to repair, and the repair a writing command makes by itself.

A null HEAD in one registration makes every `git fetch` of the repository fail, the user's
own included, so a run that is never continued must not leave one behind: `heal` runs where a
command starts a run's work (`record.reap_stale_children`: prepare, run, resume, step,
finalize), in `clean`, and before an experiment session or a delegation job adds its
worktree; `doctor --repair-worktrees` does it on request. (Not in supervisor/: the
experiments and the worker call it too.) Only the tool's
own trees (under its state folder, or a `check --try` scratch tree) are ever removed, never
one a live driver of another run may be using, never one holding anything but git's own
files (git.removable).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from autoresearch import git
from autoresearch.fsutil import private_dir
from autoresearch.journal.runs import RunRecord
from autoresearch.locks import FileLock
from autoresearch.paths import (
    JOB_WORKTREE_PREFIX,
    LANES_DIR,
    RUNS_DIR,
    SESSION_WORKTREE_PREFIX,
    WORKTREES_DIR,
    RepoPaths,
)
from autoresearch.states import RunStatus

# `check --try` evaluates in `<temp>/autoresearch-try-*/tree` (supervisor/trial.py)
_TRY_PREFIX = "autoresearch-try-"

MSG_NOT_OURS = "not a worktree of autoresearch: it is only reported, never touched"
# How old a half-built registration must be before a repair takes it for a killed add, unless
# it is the driving run's own: every add of this version holds the worktree lock (the repair
# reads again under it), an older autoresearch's does not, and a checkout may take minutes
SETTLE_SECONDS = 600.0


def own_tree(repo: RepoPaths, folder: Path | None) -> bool:
    """Whether the worktree folder is one the tool made: under its state folder (lanes, run
    worktrees, scratch and incumbent checkouts, sessions, jobs) or a `check --try` tree."""
    if folder is None:
        return False
    if folder.name == "tree" and folder.parent.name.startswith(_TRY_PREFIX):
        return True
    return _relative(repo, folder) is not None


def run_of(repo: RepoPaths, folder: Path | None) -> str | None:
    """The run a tool worktree belongs to (`worktrees/<run>`, `worktrees/lanes/<run>/<k>`,
    `runs/<run>/…`), or None (a session's, a job's, a `check --try` tree)."""
    rel = _relative(repo, folder) if folder is not None else None
    if rel is None or len(rel) < 2:
        return None
    if rel[0] == RUNS_DIR:
        return rel[1]
    if rel[0] == WORKTREES_DIR and rel[1] == LANES_DIR:
        return rel[2] if len(rel) > 2 else None
    if rel[0] == WORKTREES_DIR and "-" in rel[1]:  # a run id always holds a `-`
        others = (SESSION_WORKTREE_PREFIX, JOB_WORKTREE_PREFIX)
        return None if rel[1].startswith(others) else rel[1]
    return None


def _relative(repo: RepoPaths, folder: Path) -> tuple[str, ...] | None:
    """The folder's parts below the state folder (compared as real paths: git records the
    real one), or None when it is not below it."""
    state = os.path.realpath(repo.state_dir)
    real = os.path.realpath(folder)
    if os.path.commonpath([state, real]) != state or real == state:
        return None
    return Path(os.path.relpath(real, state)).parts


def refusal(
    repo: RepoPaths, current_run: str | None = None
) -> Callable[[git.HalfBuiltWorktree], str | None]:
    """The `refuse` of git.repair_half_built: the user's trees are never touched, nor a tree
    of a run another process drives right now (it may be about to check it out again);
    `current_run` is the run this process drives (it holds that run's driver lock)."""

    def refuse(tree: git.HalfBuiltWorktree) -> str | None:
        if not own_tree(repo, tree.folder):
            return MSG_NOT_OURS
        run = run_of(repo, tree.folder)
        # not this driver's own: an add of an autoresearch older than the worktree lock (a
        # session's, a job's, another run's) may be in progress there right now
        if (run is None or run != current_run) and tree.age_seconds < SETTLE_SECONDS:
            return (
                f"it may still be being added ({tree.age_seconds:.0f} s old): left until it "
                f"is {SETTLE_SECONDS // 60:.0f} minutes old"
            )
        # a run folder only: probing a driver lock makes its file (and folders)
        driven = run is not None and run != current_run and repo.run(run).root.is_dir()
        if driven and run is not None and FileLock(repo.run(run).driver_lock).held_elsewhere():
            return (
                f"run {run} is being driven right now: stop it first (autoresearch stop "
                f"{run}); its driver rebuilds the trees it uses"
            )
        return None

    return refuse


def heal(repo: RepoPaths, current_run: str | None = None) -> list[git.HalfBuiltRepair]:
    """Remove the tool's own half-built registrations (`refusal`), what was removed. Reads
    the admin files only (no git process) and takes the worktree lock only when one of the
    tool's is found."""
    found = git.half_built_worktrees(repo.repo_root)
    if not any(own_tree(repo, tree.folder) for tree in found):
        return []
    done = git.repair_half_built(repo.repo_root, refusal(repo, current_run))
    return [r for r in done if r.removed]


def check_out_again(
    repo: RepoPaths, known: Sequence[RunRecord], removed: Sequence[git.HalfBuiltRepair]
) -> list[Path]:
    """The worktree of each unfinished run among the trees just `removed`, checked out again
    on the run's branch (its kept commits are there): `resume` refuses a run whose worktree
    is gone, where it failed on the broken one before."""
    gone = {os.path.realpath(r.tree.folder) for r in removed if r.tree.folder is not None}
    return rebuild_missing(repo, known, lambda path: os.path.realpath(path) in gone)


def rebuild_missing(
    repo: RepoPaths, known: Sequence[RunRecord], wanted: Callable[[Path], bool] = lambda _: True
) -> list[Path]:
    """Check the worktree of every unfinished run that lost it (and that `wanted` names) out
    again on the run's branch, where the journal says it stood. A run still being prepared
    without a baseline yet is left to `resume`, whose prepare builds it."""
    rebuilt = []
    for run in known:
        path = Path(run.worktree_path)
        start = run.last_kept_commit or run.baseline_commit
        if run.status != RunStatus.RUNNING or start is None or path.exists() or not wanted(path):
            continue
        private_dir(path.parent)
        git.ensure_worktree(repo.repo_root, path, run.branch_name, start)
        rebuilt.append(path)
    return rebuilt


def rebuilt_note(path: Path) -> str:
    return f"checked the run's worktree {path} out again on its branch"


def repaired_note(done: git.HalfBuiltRepair) -> str:
    return (
        f"removed the half-built worktree {done.tree.folder} (a kill inside `git worktree "
        f"add` left it: {done.tree.problem})"
    )
