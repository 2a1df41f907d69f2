"""`init` and `off`: bind a session to an `autoresearch/*` branch, or close it.

Invariant: the baseline commit of a new session (or segment) contains the harness and every
file that was dirty at init (untracked caches aside), committed as `autoresearch: harness
setup`, so no user work can be lost by a later discard's reset.
"""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autoresearch import git, worktree_repair
from autoresearch.clock import today_compact, utc_now_iso
from autoresearch.errors import NotFoundError, RefusedError
from autoresearch.experiments.commits import commit_work, work_paths
from autoresearch.experiments.context import Context, open_context, session_lock
from autoresearch.experiments.ledger import abandon_pending, abandoned_text
from autoresearch.experiments.params import (
    DEFAULT_COMMAND,
    InitParams,
    is_session_branch,
    session_branch,
    validate_init,
    validate_new_session,
)
from autoresearch.experiments.reference import reference_tree
from autoresearch.experiments.rules import SETUP_COMMIT_MESSAGE
from autoresearch.experiments.sealed import seal_harness
from autoresearch.experiments.verbs import Door
from autoresearch.journal import sessions
from autoresearch.journal.sessions import SessionRecord
from autoresearch.jsonshape import json_shape
from autoresearch.paths import (
    CHECKS_FILE,
    DEFAULT_SHARED_LINKS,
    HARNESS_FILE,
    SESSION_BRANCH_PREFIX,
    RepoPaths,
    session_worktree,
    slug,
)
from autoresearch.repo_state import link_shared_paths
from autoresearch.reset import CACHE_DIRT, work_patch
from autoresearch.secret_files import likely_secrets
from autoresearch.states import SESSION_DEFAULT_DIRECTION

PHASE_1 = (
    f"{HARNESS_FILE} is missing in {{cwd}}. Phase 1 comes first: write the harness, the one "
    "benchmark entry point – it exits 0 on success, prints `METRIC <name>=<value>` lines (the "
    "primary metric at least), runs a deterministic workload (fixed seeds, no network); a "
    f"compile-only script is not a benchmark. Optionally add {CHECKS_FILE} (tests, types, "
    "lint) as a correctness gate. Then run init again"
)


@dataclass(frozen=True)
class InitResult:
    """What init did: a new session or a re-init, and every git effect."""

    session_id: int
    created: bool
    branch: str
    created_branch: bool
    directory: str
    worktree: str | None
    setup_commit: str | None
    setup_files: tuple[str, ...]  # what the setup commit took: the dirty files at init
    segment: int
    new_segment: bool
    updated: tuple[str, ...]
    abandoned_run: int | None
    session: SessionRecord
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class CloseResult:
    session_id: int
    branch: str
    directory: str
    abandoned_run: int | None
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class ReopenResult:
    """What reopen did: the session is open again on its branch."""

    session_id: int
    branch: str
    directory: str
    segment: int
    new_segment: bool  # the branch had moved: a new baseline at its head
    worktree_restored: bool
    session: SessionRecord
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def init_session(start: Path, params: InitParams, door: Door = Door.CLI) -> InitResult:
    """Start a session on this checkout, or update the active one (omitted fields kept)."""
    validate_init(params)
    with open_context(start, "create", door) as ctx:
        if not (ctx.cwd / HARNESS_FILE).is_file():
            raise RefusedError(PHASE_1.format(cwd=ctx.cwd))
        active = ctx.active()
        if active is not None:
            if params.worktree:
                raise RefusedError(
                    f"branch {active.branch} already has the active session "
                    f"#{active.session_id}; re-init it without worktree, or close it first"
                )
            return _reinit(ctx, active, params)
        validate_new_session(params)
        return _create(ctx, params)


def _seal(ctx: Context, record: SessionRecord, messages: list[str]) -> None:
    sealed = seal_harness(Path(record.directory), ctx.session_paths(record))
    messages.append(
        f"sealed {', '.join(sealed)}: {ctx.verbs.run} measures nothing while they differ "
        "(harness changed: <path>) and runs the sealed copy"
    )


def close_session(start: Path, door: Door = Door.CLI) -> CloseResult:
    """`off`: abandon a pending run and close the session (its branch and commits stay)."""
    with open_context(start, door=door) as ctx:
        session = ctx.bound_session()
        with session_lock(ctx, session):
            abandoned = abandon_pending(ctx.journal, session)
            with ctx.journal.tx() as conn:
                sessions.update_session(conn, session.session_id, closed_at=utc_now_iso())
            _remove_reference_checkout(ctx, session)
    messages = [abandoned_text(r) for r in abandoned]
    messages.append(
        f"closed session #{session.session_id}; branch {session.branch} keeps its commits"
    )
    if session.own_worktree:
        messages.append(
            f"the worktree stays at {session.directory} (git worktree remove it when done)"
        )
    last = abandoned[-1].number if abandoned else None
    return CloseResult(session.session_id, session.branch, session.directory, last, tuple(messages))


def _remove_reference_checkout(ctx: Context, session: SessionRecord) -> None:
    """The scratch checkout paired readings used (experiments/reference.py): no run of a
    closed session reads it, and it would stay registered as one of the repository's
    worktrees."""
    tree = reference_tree(ctx.session_paths(session))
    if tree.exists():
        git.worktree_remove(ctx.cwd, tree)


def _setup_files(ctx: Context, params: InitParams) -> list[str]:
    """What the setup commit will take; refused (before any git effect) when a file looks like
    a secret, unless the caller allows it."""
    paths = work_paths(ctx.cwd)
    hits = likely_secrets(ctx.cwd, paths)
    if hits and not params.allow_secrets:
        shown = ", ".join(str(h) for h in hits[:5]) + (
            f" (+{len(hits) - 5} more)" * (len(hits) > 5)
        )
        raise RefusedError(
            f"init: refusing to commit likely secrets as the harness setup: {shown}; nothing "
            "was changed. Keep them out of git (add them to .gitignore, or move them out of "
            f"the checkout), or commit them on purpose with {ctx.verbs.allow_secrets}"
        )
    return paths


def _setup_messages(setup: str | None, files: list[str]) -> list[str]:
    if not setup:
        return []
    shown = ", ".join(files[:10]) + (f" (+{len(files) - 10} more)" if len(files) > 10 else "")
    return [f"committed the dirty tree as '{SETUP_COMMIT_MESSAGE}' ({setup[:7]}): {shown}"]


def _builds_on(directory: Path) -> str:
    head = git.head(directory)
    subject = (git.commit_message(directory, head).splitlines() or [""])[0]
    return f"the session builds on {head[:7]} '{subject}'"


def _create(ctx: Context, params: InitParams) -> InitResult:
    assert params.name is not None and params.metric is not None
    files = _setup_files(ctx, params)
    messages: list[str] = []
    if params.worktree:
        branch = _new_branch_name(ctx, params)
        directory = _make_worktree(ctx, branch)
        created_branch = True
        messages.append(
            f"created branch {branch} in the worktree {directory}: "
            f"{ctx.verbs.into_worktree(directory)}"
        )
    elif is_session_branch(ctx.branch):
        assert ctx.branch is not None
        branch, directory, created_branch = ctx.branch, ctx.cwd, False
        messages.append(f"using the session branch {branch}")
    else:
        branch, directory, created_branch = _new_branch_name(ctx, params), ctx.cwd, True
        git.checkout_new_branch(ctx.cwd, branch)
        messages.append(f"created and checked out branch {branch}")
    messages.append(_builds_on(directory))
    setup = commit_work(directory, SETUP_COMMIT_MESSAGE)
    messages += _setup_messages(setup, files)
    head = git.head(directory)
    with ctx.journal.tx() as conn:
        session_id = sessions.insert_session(conn, **_new_fields(params, branch, directory, head))
        record = sessions.get_session(conn, session_id)
    assert record is not None
    if params.seal:
        _seal(ctx, record, messages)
    messages.append(
        f"next: run the benchmark ({ctx.verbs.run}) and log the first run as keep "
        f"({ctx.verbs.log}): the baseline"
    )
    return _result(record, True, created_branch, setup, files, False, (), None, messages)


def _new_fields(params: InitParams, branch: str, directory: Path, head: str) -> dict[str, object]:
    return {
        "name": params.name,
        "goal": params.goal or "",
        "metric": params.metric,
        "unit": params.unit or "",
        "direction": params.direction or SESSION_DEFAULT_DIRECTION,
        "command": params.command or DEFAULT_COMMAND,
        "branch": branch,
        "directory": str(directory),
        "own_worktree": params.worktree,
        "baseline_commit": head,
        "kept_commit": head,
        "max_iterations": params.max_iterations or None,
        "secondary": params.secondary or (),
        "scope": params.scope or (),
        "off_limits": params.off_limits or (),
        "constraints": params.constraints or (),
    }


def _new_branch_name(ctx: Context, params: InitParams) -> str:
    source = params.name or ""
    if not slug(source, "") and params.goal:  # a name with nothing to slug: the goal
        source = params.goal
    existing = git.local_branches(ctx.root, SESSION_BRANCH_PREFIX.rstrip("/"))
    return session_branch(source, today_compact(), existing)


def _make_worktree(ctx: Context, branch: str) -> Path:
    """A new worktree for `branch` at this checkout's HEAD, carrying its dirty files over."""
    path = session_worktree(ctx.root, branch)
    patch = work_patch(ctx.cwd, "HEAD", CACHE_DIRT)
    worktree_repair.heal(RepoPaths(ctx.root))  # what a killed add left breaks every fetch
    git.worktree_add(ctx.root, path, branch, git.head(ctx.cwd))
    if patch:
        with tempfile.TemporaryDirectory(prefix="autoresearch-init-") as tmp:
            patch_file = Path(tmp) / "dirty.patch"
            patch_file.write_bytes(patch)
            git.apply_patch(path, patch_file)
    link_shared_paths(ctx.root, path, DEFAULT_SHARED_LINKS)
    return path


def _reinit(ctx: Context, active: SessionRecord, params: InitParams) -> InitResult:
    messages: list[str] = []
    with session_lock(ctx, active):
        changes = params.given()
        setup, files = None, []
        if params.new_segment:
            files = _setup_files(ctx, params)
            setup = commit_work(ctx.cwd, SETUP_COMMIT_MESSAGE)
            head = git.head(ctx.cwd)
            changes.update(segment=active.segment + 1, baseline_commit=head, kept_commit=head)
        abandoned = abandon_pending(ctx.journal, active)
        with ctx.journal.tx() as conn:
            sessions.update_session(conn, active.session_id, **changes)
            record = sessions.get_session(conn, active.session_id)
    assert record is not None
    messages.extend(abandoned_text(r) for r in abandoned)
    if params.seal:
        _seal(ctx, record, messages)
    updated = tuple(params.given())
    if updated:
        messages.append(f"updated {', '.join(updated)}")
    elif not (params.seal or params.new_segment):  # sealing and a new segment are changes too
        messages.append("no field given: the session is unchanged")
    messages += _setup_messages(setup, files)
    if params.new_segment:
        messages.append(
            f"started segment {record.segment}: new baseline, new counts; "
            "run and log the first run as keep"
        )
    last = abandoned[-1].number if abandoned else None
    return _result(record, False, False, setup, files, params.new_segment, updated, last, messages)


def _result(
    record: SessionRecord,
    created: bool,
    created_branch: bool,
    setup: str | None,
    files: list[str],
    new_segment: bool,
    updated: tuple[str, ...],
    abandoned: int | None,
    messages: list[str],
) -> InitResult:
    return InitResult(
        session_id=record.session_id,
        created=created,
        branch=record.branch,
        created_branch=created_branch,
        directory=record.directory,
        worktree=record.directory if record.own_worktree else None,
        setup_commit=setup,
        setup_files=tuple(files) if setup else (),
        segment=record.segment,
        new_segment=new_segment,
        updated=updated,
        abandoned_run=abandoned,
        session=record,
        messages=tuple(messages),
    )


def reopen_session(start: Path, session_id: int, door: Door = Door.CLI) -> ReopenResult:
    """Open a closed session again on its branch (its runs, notes and numbers stay).

    Commits made on the branch after the close are never reset away: the session then starts
    a new segment at the branch's head (a new baseline; the old numbers were not measured on
    that code). A session worktree that was removed is added again.
    """
    with open_context(start, door=door) as ctx:
        session = _closed(ctx, session_id)
        with session_lock(ctx, session):
            head = git.resolve_commits(ctx.root, [f"refs/heads/{session.branch}"])[0]
            if head is None:
                raise RefusedError(
                    f"session #{session_id}'s branch {session.branch} no longer exists: "
                    f"start a new session ({ctx.verbs.init_new})"
                )
            messages: list[str] = []
            restored = _restore_worktree(ctx, session)
            changes: dict[str, object] = {"closed_at": None}
            moved = head != session.kept_commit
            if moved:
                changes.update(segment=session.segment + 1, baseline_commit=head, kept_commit=head)
                messages.append(
                    f"branch {session.branch} moved since the session closed (now at "
                    f"{head[:7]}, last kept {session.kept_commit[:7]}): started segment "
                    f"{session.segment + 1} there, so nothing on it is reset; run and log the "
                    "first run as keep: the new baseline"
                )
            with ctx.journal.tx() as conn:
                sessions.update_session(conn, session.session_id, **changes)
                record = sessions.get_session(conn, session.session_id)
    assert record is not None
    messages.insert(0, f"reopened session #{session_id} '{session.name}' on {session.branch}")
    if restored:
        messages.append(f"added its worktree again: cd {shlex.quote(session.directory)}")
    elif ctx.branch != session.branch:
        where = shlex.quote(session.directory)
        hint = (
            f"cd {where}" if session.own_worktree else f"git -C {where} checkout {session.branch}"
        )
        messages.append(f"the session acts on branch {session.branch}: {hint}")
    return ReopenResult(
        session_id, record.branch, record.directory, record.segment, moved, restored,
        record, tuple(messages),
    )  # fmt: skip


def _closed(ctx: Context, session_id: int) -> SessionRecord:
    session = sessions.get_session(ctx.journal, session_id)
    if session is None:
        raise NotFoundError(
            f"no session #{session_id} in this repository (list them: {ctx.verbs.list})"
        )
    if session.closed_at is None:
        raise RefusedError(f"session #{session_id} is not closed: nothing to reopen")
    active = sessions.active_session(ctx.journal, session.branch)
    if active is not None:
        raise RefusedError(
            f"branch {session.branch} has the open session #{active.session_id}: close it "
            f"first ({ctx.verbs.off}), then reopen #{session_id}"
        )
    return session


def _restore_worktree(ctx: Context, session: SessionRecord) -> bool:
    """Add a session's own worktree again when it was removed; True when it was."""
    path = Path(session.directory)
    if not session.own_worktree:
        return False
    # one a killed `git worktree add` left half-built (nothing in it but `.git`) goes first,
    # with any other of the tool's: each breaks every fetch of the repository
    worktree_repair.heal(RepoPaths(ctx.root))
    if path.exists():
        return False
    git.worktree_remove(ctx.root, path)  # a registration left by a deleted folder blocks add
    git.worktree_add_existing(ctx.root, path, session.branch)
    link_shared_paths(ctx.root, path, DEFAULT_SHARED_LINKS)
    return True
