"""autoresearch doctor: is the repository's state sound, and the way back when it is not.

Checks, each a finding with what is wrong and the command that fixes it: the journal (whole,
its values each one a version wrote – every enum column, every JSON value –, the one that
belongs here, from this version), its backups (whole, the same journal), stale git
locks (no git process running), half-built worktree registrations a killed `git worktree
add` left (every `git fetch` fails on one), and runs vs git (a run's worktree missing,
worktrees and `autoresearch/` branches no run knows). Read-only except for the fixes it is
asked for (`restore`, `clear_locks`, `repair_worktrees`): a replaced journal is moved aside,
and only the tool's own half-built trees, holding nothing but git's files, are removed.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import cast

from autoresearch import failpoints, git, worktree_repair
from autoresearch.contracts.json_input import load_json
from autoresearch.errors import AutoresearchError, JournalError, NotFoundError, RefusedError
from autoresearch.fsutil import private_dir
from autoresearch.journal import integrity, runs
from autoresearch.journal.db import open_journal
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.paths import LANES_DIR, RUNS_DIR, RepoPaths, RunPaths
from autoresearch.states import Phase, RunStatus
from autoresearch.supervisor import refs, sync
from autoresearch.supervisor.run_read import driver_alive

BRANCH_PREFIX = "autoresearch/"


class Severity(StrEnum):
    OK = "ok"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Finding:
    check: str  # journal | backups | locks | worktrees | branches | runs
    severity: Severity
    message: str
    fix: str | None = None

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def _healthy(findings: Iterable[Finding]) -> bool:
    return all(f.severity != Severity.ERROR for f in findings)


def _verdict_and_findings(findings: object) -> dict[str, object]:
    """`healthy` before the findings it is read from (doctor --json's order)."""
    found = cast(list[Finding], findings)
    return {"healthy": _healthy(found), "findings": found}


@dataclass
class DoctorReport:
    repo_root: Path
    findings: list[Finding] = field(
        default_factory=list, metadata=json_field(inline=True, convert=_verdict_and_findings)
    )

    @property
    def healthy(self) -> bool:
        return _healthy(self.findings)

    def add(self, check: str, severity: Severity, message: str, fix: str | None = None) -> None:
        self.findings.append(Finding(check, severity, message, fix))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def diagnose(repo_root: Path) -> DoctorReport:
    """Every check; never writes (a healthy journal is opened as any command would)."""
    repo = RepoPaths(repo_root)
    report = DoctorReport(repo_root)
    known = _check_journal(repo, report)
    _check_backups(repo, report)
    if known is not None:
        _compare_with_backup(repo, report)
    _check_locks(repo, report)
    half_built = _check_half_built(repo, report)
    if known is not None:
        _check_git_vs_runs(repo, report, known, half_built)
    return report


def _check_journal(repo: RepoPaths, report: DoctorReport) -> list[runs.RunRecord] | None:
    marker = integrity.read_marker(repo.journal)
    if not integrity.has_content(repo.journal) and marker is None:
        report.add("journal", Severity.OK, f"no journal yet at {repo.journal} (no runs)")
        return []
    try:
        with open_journal(repo.repo_root) as journal:
            # the deep check first, so that a bad JSON value is named with its table and row
            deep = journal.json_problem()
            if deep is not None:
                damaged = f"journal {repo.journal} is damaged ({deep})"
                raise JournalError(integrity.msg_refused(damaged))
            # every run decoded whole: a damaged frozen evaluator, mission or loop is an error
            found = [runs.decoded_whole(r) for r in runs.list_runs(journal)]
            ident = journal.identity
    except JournalError as exc:
        usable = [b for b in integrity.inspect_backups(repo.journal, marker) if b.usable]
        fix = (
            f"autoresearch doctor --restore (from {usable[0].path.name}, taken "
            f"{_when(usable[0].modified_at)})"
            if usable
            else "no usable backup: move the journal aside to start a new one"
        )
        report.add("journal", Severity.ERROR, exc.message, fix)
        return None
    name = ident.journal_id if ident else "?"
    report.add(
        "journal", Severity.OK, f"journal {repo.journal} is whole ({name}, {len(found)} runs)"
    )
    return found


def _check_backups(repo: RepoPaths, report: DoctorReport) -> None:
    if not integrity.has_content(repo.journal) and integrity.read_marker(repo.journal) is None:
        return
    backups = integrity.inspect_backups(repo.journal, integrity.read_marker(repo.journal))
    if not backups:
        report.add(
            "backups",
            Severity.WARNING,
            f"no backup of the journal yet in {repo.backups}",
            "one is taken when a run is prepared or ends, and after iterations (throttled)",
        )
    for b in backups:
        if b.usable:
            report.add(
                "backups", Severity.OK, f"backup {b.path} is whole (taken {_when(b.modified_at)})"
            )
        else:
            report.add(
                "backups",
                Severity.WARNING,
                f"backup {b.path} is unusable: {b.problem}",
                f"remove it: rm {b.path}",
            )


def _compare_with_backup(repo: RepoPaths, report: DoctorReport) -> None:
    """A whole journal that lost decisions its newest usable backup holds was rewritten (by
    someone who could forge its seals): an error, with the restore that brings them back."""
    marker = integrity.read_marker(repo.journal)
    usable = [b for b in integrity.inspect_backups(repo.journal, marker) if b.usable]
    if not usable or not integrity.has_content(repo.journal):
        return
    found = integrity.disagreement(repo.journal, usable[0].path)
    if found is not None:
        report.add(
            "journal",
            Severity.ERROR,
            f"journal {repo.journal} disagrees with its backup: {found}",
            f"autoresearch doctor --restore --force (from {usable[0].path.name}, taken "
            f"{_when(usable[0].modified_at)})",
        )


def _check_locks(repo: RepoPaths, report: DoctorReport) -> None:
    if not (repo.repo_root / ".git").exists():
        return
    locks = git.lock_files(repo.repo_root, whole_repository=True)
    stale = set(git.stale_locks(repo.repo_root, whole_repository=True))
    for lock in locks:
        if lock in stale:
            report.add(
                "locks",
                Severity.ERROR,
                f"stale git lock {lock}: no git process is running, every git command that "
                "needs it fails",
                "autoresearch doctor --clear-locks (resume clears the run's own by itself)",
            )
        else:
            report.add(
                "locks",
                Severity.WARNING,
                f"git lock {lock} is held by a running git process",
                "wait for it to finish",
            )


def _check_half_built(repo: RepoPaths, report: DoctorReport) -> set[str]:
    """Registrations a kill inside `git worktree add` left (git.half_built_worktrees): an
    error when HEAD names no commit (every `git fetch` of the repository fails), else a
    warning. The tool's own are repaired by `--repair-worktrees`; the user's are only named,
    with the git commands that fix them. Their folders (real paths: git records those),
    which no other check names again."""
    if not (repo.repo_root / ".git").exists():
        return set()
    found = git.settled_half_built_worktrees(repo.repo_root, check_objects=True)
    for tree in found:
        where = tree.folder or f"(no folder recorded, registration {tree.admin})"
        what = f"worktree {where} is half-built: {tree.problem}"
        if tree.breaks_fetch:
            what += "; " + git.MSG_BREAKS_FETCH.format(name=tree.name)
        else:
            what += "; git fetch still works"
        severity = Severity.ERROR if tree.breaks_fetch else Severity.WARNING
        report.add("worktrees", severity, what, _half_built_fix(repo, tree))
    return {os.path.realpath(tree.folder) for tree in found if tree.folder is not None}


def _half_built_fix(repo: RepoPaths, tree: git.HalfBuiltWorktree) -> str:
    if worktree_repair.own_tree(repo, tree.folder):
        lost = git.removable(tree)
        if lost is not None:
            return lost
        return (
            "autoresearch doctor --repair-worktrees (autoresearch's own tree: any prepare, "
            "run, resume, step or clean also repairs it)"
        )
    folder = tree.folder or tree.admin
    # the killed add's own HEAD.lock is there too (the locks check names it): cleared first
    first = (
        "autoresearch doctor --clear-locks, then " if (tree.admin / "HEAD.lock").exists() else ""
    )
    return (
        f"not autoresearch's tree, so it is left to you: if nothing in it is wanted, git "
        f"worktree remove --force --force {folder}; to keep its files, {first}git -C "
        f"{folder} update-ref --no-deref HEAD <the commit it should be on> && git -C {folder} "
        "reset -q"
    )


def _check_git_vs_runs(
    repo: RepoPaths, report: DoctorReport, known: list[runs.RunRecord], half_built: set[str]
) -> None:
    by_worktree = {Path(r.worktree_path): r for r in known}
    for run in known:
        path = Path(run.worktree_path)
        live = run.status == RunStatus.RUNNING and run.phase != Phase.PREPARING
        if live and not git.is_worktree_of(path, repo.repo_root):
            report.add(
                "worktrees",
                Severity.ERROR,
                f"run {run.run_id} is unfinished but its worktree {path} is gone",
                f"autoresearch stop {run.run_id} (its branch {run.branch_name} keeps the "
                "kept commits)",
            )
    ids = {r.run_id for r in known}
    for path, lane_of in _worktree_folders(repo):
        # a half-built one is named above, with a fix git takes (it refuses to remove a
        # tree its killed add left locked)
        stray = path not in by_worktree and lane_of not in ids
        if stray and os.path.realpath(path) not in half_built:
            report.add(
                "worktrees",
                Severity.WARNING,
                f"worktree {path} belongs to no run in the journal",
                f"git worktree remove --force {path}",
            )
    folder = repo.state_dir / RUNS_DIR
    for run_dir in sorted(folder.iterdir()) if folder.is_dir() else []:
        if run_dir.is_dir() and run_dir.name not in ids:
            report.add(
                "runs",
                Severity.ERROR,
                f"run folder {run_dir} belongs to no run in the journal: the journal may have "
                "been replaced by an older one",
                "autoresearch doctor --restore --force (a newer backup), or remove the folder "
                "if the run is not wanted",
            )
    branches = {r.branch_name for r in known}
    for branch in git.local_branches(repo.repo_root, BRANCH_PREFIX.rstrip("/")):
        if branch not in branches and branch.count("/") == 2:
            report.add(
                "branches",
                Severity.WARNING,
                f"branch {branch} belongs to no run in the journal",
                f"git branch -D {branch} (after checking nothing on it is wanted)",
            )


def _worktree_folders(repo: RepoPaths) -> list[tuple[Path, str | None]]:
    """Every run worktree, and every lane worktree (`lanes/<run>/<k>`) with the run it
    belongs to: the `lanes` folder itself is no worktree and is never named."""
    if not repo.worktrees.is_dir():
        return []
    lanes = repo.worktrees / LANES_DIR
    found: list[tuple[Path, str | None]] = [
        (p, None) for p in sorted(repo.worktrees.iterdir()) if p != lanes
    ]
    for run in sorted(lanes.iterdir()) if lanes.is_dir() else []:
        found += [(k, run.name) for k in sorted(run.iterdir())] if run.is_dir() else []
    return found


def _when(timestamp: float) -> str:
    moment = dt.datetime.fromtimestamp(timestamp, tz=dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# --- fixes --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RestoreOutcome:
    restored_from: Path
    moved_aside: Path | None
    taken_at: str
    # worktrees of unfinished runs checked out again from their branches (`rm -rf
    # .autoresearch` takes them with the journal): `resume` needs them
    worktrees: tuple[Path, ...] = ()
    # refs of iterations the restored journal never saw (discarded candidates, a frontier's
    # elites), under their new names: a resumed run numbers its iterations from there again,
    # and would take the old names over (what they kept would be lost to `git gc`)
    refs_set_aside: tuple[str, ...] = ()
    # `logs/before-restore-<stamp>/` folders (a run's, a lane's) holding the logs of the
    # iterations and lane sessions the restored journal never saw: the resumed run numbers
    # them from there again, and would write over them
    logs_set_aside: tuple[Path, ...] = ()
    # `backups/before-restore-<stamp>/` folders holding the backups taken after the restored
    # one: doctor compares the journal with its newest backup, and would take the decisions
    # rolled back for lost ones and advise a restore that undoes this one
    backups_set_aside: tuple[Path, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def msg_restore_healthy(journal: Path) -> str:
    return (
        f"journal {journal} is whole and the one that belongs here: restoring a backup would "
        "lose what was recorded since; add --force to restore anyway"
    )


def restore(repo_root: Path, source: Path | None = None, force: bool = False) -> RestoreOutcome:
    """Put the newest usable backup (or `source`) in the journal's place; the journal that
    was there is moved aside. Refused while any run is driven, and for a healthy journal
    unless `force`."""
    repo = RepoPaths(repo_root)
    _refuse_while_driven(repo)
    marker = integrity.read_marker(repo.journal)
    if not force and _journal_healthy(repo):
        raise RefusedError(msg_restore_healthy(repo.journal))
    if source is not None:
        # as the user typed it, from where they stand: the checks below open it by a file
        # URI, which a relative path has none of
        source = source.absolute()
        info = integrity.inspect_backups(repo.journal, None)
        chosen = next((b for b in info if b.path.resolve() == source.resolve()), None)
        if chosen is None:
            if not source.is_file():
                raise NotFoundError(f"no such backup: {source}")
            chosen = integrity.inspect_backup(source, 0, repo.journal, None)
    else:
        usable = [b for b in integrity.inspect_backups(repo.journal, marker) if b.usable]
        if not usable:
            raise RefusedError(
                f"no usable backup of journal {repo.journal} in {repo.backups}; move the "
                "journal aside to start a new one"
            )
        chosen = usable[0]
    if chosen.problem is not None:
        raise RefusedError(f"backup {chosen.path} is unusable: {chosen.problem}")
    stamp = dt.datetime.now(tz=dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = aside_name(repo.journal, stamp)
    existed = repo.journal.exists()
    # the refs, logs and backups first: killed in between, the journal is as it was, what
    # was set aside is kept under its new name and the next restore sets aside the rest;
    # the other way round, a resumed run would take their names over
    recorded = integrity.recorded_runs(chosen.path)
    set_aside = _set_aside_refs_of_lost_iterations(repo, recorded, stamp)
    failpoints.hit("doctor.after_refs_set_aside")
    logs = _set_aside_logs_of_lost_iterations(repo, recorded, stamp)
    # an artifact goes aside into its run's logs folder: each folder listed once
    logs = tuple(dict.fromkeys(logs + _set_aside_artifacts_of_lost_sessions(repo, recorded, stamp)))
    backups = _set_aside_newer_backups(repo, chosen, stamp)
    integrity.restore(repo.journal, chosen.path, aside)
    if chosen.identity is not None:
        integrity.write_marker(repo.journal, chosen.identity.journal_id)
    moved = aside if existed else None
    when = _when(chosen.modified_at)
    return RestoreOutcome(chosen.path, moved, when, _rebuild(repo), set_aside, logs, backups)


def aside_name(journal: Path, stamp: str) -> Path:
    """Where the journal a restore replaces goes: `<journal>.replaced-<stamp>`, numbered when
    a restore of the same second already put one there (never overwritten: it may be the
    only copy of what the restore took out)."""
    base = journal.with_name(f"{journal.name}.replaced-{stamp}")
    aside, number = base, 1
    while any(aside.with_name(aside.name + end).exists() for end in ("", "-wal", "-shm")):
        number += 1
        aside = base.with_name(f"{base.name}.{number}")
    return aside


def _set_aside_refs_of_lost_iterations(
    repo: RepoPaths, recorded: dict[str, integrity.RecordedRun], stamp: str
) -> tuple[str, ...]:
    """Rename `discarded/<n>` and `elite/<n>` to `…/<n>-before-restore-<stamp>` where the
    backup about to be restored (`recorded`) holds no iteration n of that run: the resumed run's own
    iteration n would write over them. And where a run's branch has moved on from the commit
    the backup has it stand at, point `kept-before-restore-<stamp>` at the branch's tip:
    resuming resets the branch to that commit, and the commits kept after the backup would
    be held by the reflog only. One transaction; `clean` removes them with the rest."""
    branches = [f"refs/heads/{run.branch}" for run in recorded.values()]
    tips = dict(zip(recorded, git.resolve_commits(repo.repo_root, branches), strict=True))
    renames: dict[str, tuple[str, str]] = {}
    created: dict[str, str] = {}
    for run_id, run in recorded.items():
        held = git.ref_targets(repo.repo_root, refs.prefix(run_id))
        for ref, target in held.items():
            if _names_a_lost_iteration(run_id, ref, run.iterations):
                renames[ref] = (f"{ref}-before-restore-{stamp}", target)
        tip = _tip_left_behind(repo, run, tips[run_id], held)
        if tip is not None:
            created[refs.kept_before_restore(run_id, stamp)] = tip
    git.rename_refs(repo.repo_root, renames, created)
    return (*(new for new, _ in renames.values()), *created)


def _names_a_lost_iteration(run_id: str, ref: str, iterations: frozenset[int]) -> bool:
    """`ref` is a candidate's or an elite's of an iteration the restored journal lacks."""
    for prefix in (refs.discarded_prefix(run_id), refs.elite_prefix(run_id)):
        number = ref.removeprefix(prefix)
        if ref.startswith(prefix) and number.isdigit():
            return int(number) not in iterations
    return False


def _set_aside_logs_of_lost_iterations(
    repo: RepoPaths, recorded: dict[str, integrity.RecordedRun], stamp: str
) -> tuple[Path, ...]:
    """Move the logs (and saved patches) of the iterations, and of the lane sessions, the
    backup about to be restored (`recorded`) does not hold into `before-restore-<stamp>/`
    of their logs folder: the resumed run numbers both from the backup's again and would
    write over them (or add `-evaluator-2.log` beside the old reading). A log the backup
    knows the iteration or session of stays where it is. Returns the folders made."""
    made = []
    for run in recorded.values():
        paths = repo.run(run.run_id)
        folders: list[tuple[Path, int | None]] = [(paths.logs, None)]
        lanes = paths.root / LANES_DIR
        for lane in sorted(lanes.iterdir()) if lanes.is_dir() else []:
            if lane.name.isdigit():
                number = int(lane.name)
                folders.append(
                    (RunPaths(paths.root, number).logs, run.lane_sessions.get(number, 0))
                )
        for logs, sessions in folders:
            files = sorted(logs.iterdir()) if logs.is_dir() else []
            lost = [f for f in files if f.is_file() and log_of_lost_work(f.name, run, sessions)]
            if not lost:
                continue
            aside = logs / f"before-restore-{stamp}"
            private_dir(aside)
            for path in lost:
                os.replace(path, unused_name(aside / path.name))
            made.append(aside)
    return tuple(made)


def _set_aside_artifacts_of_lost_sessions(
    repo: RepoPaths, recorded: dict[str, integrity.RecordedRun], stamp: str
) -> tuple[Path, ...]:
    """Move a run's candidate.json into `logs/before-restore-<stamp>/` when it holds what a
    session built on another commit than the one the backup has the run stand at: a session
    after a decision the backup lacks (the throttle lets a backup lag a decision behind).
    Stepped by the resumed run, it would fail it (`candidate base_commit … does not match
    last kept commit …`); its commits stay on the branch tip `kept-before-restore-<stamp>`
    names. The bases are resolved together, by one git process at most. Returns the folders
    it moved an artifact into."""
    bases: dict[str, str] = {}  # run id -> the base its session's artifact names
    for run in recorded.values():
        read = sync.read_artifact(repo.run(run.run_id).candidate)
        base = _artifact_base(read) if read.from_session else None
        if base is not None:
            bases[run.run_id] = base
    resolved = dict(
        zip(bases, git.resolve_commits(repo.repo_root, list(bases.values())), strict=True)
    )
    moved = []
    for run_id, base in resolved.items():
        if not built_past_the_backup(base, recorded[run_id].kept):
            continue
        paths = repo.run(run_id)
        aside = paths.logs / f"before-restore-{stamp}"
        private_dir(aside)
        os.replace(paths.candidate, unused_name(aside / paths.candidate.name))
        moved.append(aside)
    return tuple(moved)


def _artifact_base(read: sync.ArtifactBytes) -> str | None:
    """The base_commit an artifact names, when it is a JSON object that names one."""
    try:
        data = load_json(read.raw) if read.raw is not None else None
    except ValueError:
        return None
    base = data.get("base_commit") if isinstance(data, dict) else None
    return base if isinstance(base, str) and base.strip() else None


def built_past_the_backup(base: str | None, kept: str | None) -> bool:
    """Whether an artifact built on `base` (resolved; None: no commit) is of a session the
    backup standing at `kept` never started (pure). One whose base does not resolve is left
    to the step, which fails the run with the contract's message as it would without a
    restore."""
    return base is not None and kept is not None and base != kept


LOG_NUMBER = re.compile(r"(iteration|session)-(\d+)-")


def log_of_lost_work(name: str, run: integrity.RecordedRun, sessions: int | None) -> bool:
    """Whether the file `name` of a logs folder is an iteration's the restored journal lacks
    (`iteration-NNNN-…`), or, in a lane's folder (`sessions`: how many sessions the journal
    has that lane start), a session's after those (`session-NNNN-…`)."""
    found = LOG_NUMBER.match(name)
    if found is None:
        return False
    number = int(found[2])
    if found[1] == "iteration":
        return number not in run.iterations
    return sessions is not None and number > sessions


def unused_name(path: Path) -> Path:
    """`path`, or `path.N` when a file is there already (never overwritten: two restores of
    the same second, a resume between them, would name the same logs and backups)."""
    free, number = path, 1
    while free.exists():
        number += 1
        free = path.with_name(f"{path.name}.{number}")
    return free


def _set_aside_newer_backups(
    repo: RepoPaths, chosen: integrity.BackupInfo, stamp: str
) -> tuple[Path, ...]:
    """Move the backups that hold decisions the one about to be restored lacks (those taken
    after it, outside the repository and beside the journal) into `before-restore-<stamp>/`
    of their backups folder: doctor compares the journal with its newest backup, and would
    take them for the truth and advise a restore that undoes this one. Kept, never deleted.
    Returns the folders made."""
    journal_id = chosen.identity.journal_id if chosen.identity is not None else None
    made: list[Path] = []
    for backup in integrity.inspect_backups(repo.journal, journal_id):
        if not backup.usable or backup.path.resolve() == chosen.path.resolve():
            continue
        if integrity.disagreement(chosen.path, backup.path) is None:
            continue  # the restored journal holds all it holds: taken before, or the same
        aside = backup.path.parent / f"before-restore-{stamp}"
        private_dir(aside)
        os.replace(backup.path, unused_name(aside / backup.path.name))
        made += [] if aside in made else [aside]
    return tuple(made)


def _tip_left_behind(
    repo: RepoPaths, run: integrity.RecordedRun, tip: str | None, held: dict[str, str]
) -> str | None:
    """The run branch's tip, when resuming from the restored journal would reset commits
    away that no ref of the run keeps (`held`: the run's refs and their commits)."""
    if tip is None or run.kept is None:  # no branch, or no baseline yet: nothing was kept
        return None
    aside_prefix = refs.kept_before_restore(run.run_id, "")
    kept_aside = {target for ref, target in held.items() if ref.startswith(aside_prefix)}
    if not branch_moved_on(tip, run.kept, kept_aside):
        return None
    # a branch behind the journal's commit only moves forward on resume: nothing is lost
    return None if git.is_ancestor(repo.repo_root, tip, run.kept) else tip


def branch_moved_on(tip: str, kept: str, kept_aside: Collection[str]) -> bool:
    """Whether a run branch at `tip` may hold commits that resuming from a journal standing
    at `kept` resets away, with no earlier restore's ref (`kept_aside`: the commits they
    name) keeping them yet. The caller then asks git whether `tip` lies behind `kept`."""
    return tip != kept and tip not in kept_aside


def _rebuild(repo: RepoPaths) -> tuple[Path, ...]:
    """Check the worktree of every unfinished run that lost it out again on the run's branch
    (its kept commits are there, the journal says where it stood): `resume` finds it."""
    with open_journal(repo.repo_root) as journal:
        known = runs.list_runs(journal)
    return tuple(worktree_repair.rebuild_missing(repo, known))


def _journal_healthy(repo: RepoPaths) -> bool:
    if not integrity.has_content(repo.journal):
        return False
    try:
        open_journal(repo.repo_root).close()
    except AutoresearchError:
        return False
    return True


def _refuse_while_driven(repo: RepoPaths) -> None:
    folder = repo.state_dir / RUNS_DIR
    for run_dir in sorted(folder.iterdir()) if folder.is_dir() else []:
        if driver_alive(repo, run_dir.name):
            raise RefusedError(
                f"run {run_dir.name} is being driven right now; stop it "
                f"(autoresearch stop {run_dir.name}) before restoring the journal"
            )


def clear_locks(repo_root: Path) -> list[Path]:
    """Remove stale git locks anywhere in the repository (none while git runs)."""
    return git.clear_stale_locks(repo_root, whole_repository=True)


@dataclass(frozen=True)
class WorktreeRepair:
    """One of the tool's half-built worktrees `repair_worktrees` met: removed (and, for an
    unfinished run's own worktree, checked out again), or why it was left."""

    folder: str
    registration: str
    problem: str
    removed: bool
    refused: str | None = None

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def repair_worktrees(repo_root: Path) -> list[WorktreeRepair]:
    """Remove the tool's own half-built worktree registrations (worktree_repair.refusal: never
    the user's, nor one of a run another process drives, nor one holding more than git's own
    files), then check out again the worktree of every unfinished run that lost one."""
    repo = RepoPaths(repo_root)
    done = git.repair_half_built(repo_root, worktree_repair.refusal(repo), check_objects=True)
    ours = [r for r in done if r.refused != worktree_repair.MSG_NOT_OURS]
    removed = [r for r in ours if r.removed]
    if removed and _journal_healthy(repo):
        with open_journal(repo.repo_root) as journal:
            known = runs.list_runs(journal)
        worktree_repair.check_out_again(repo, known, removed)
    return [
        WorktreeRepair(str(r.tree.folder), str(r.tree.admin), r.tree.problem, r.removed, r.refused)
        for r in ours
    ]
