"""`init` and `off`: bind a session to an `autoresearch/*` branch, or close it.

Invariant: the baseline commit of a new session (or segment) contains the harness and every
file that was dirty at init (untracked caches aside), committed as `autoresearch: harness
setup`, so no user work can be lost by a later discard's reset.
"""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from autoresearch import git
from autoresearch.clock import today_compact, utc_now_iso
from autoresearch.errors import RefusedError
from autoresearch.experiments.commits import commit_work
from autoresearch.experiments.context import Context, open_context, session_lock
from autoresearch.experiments.ledger import abandon_pending, abandoned_text, session_dict
from autoresearch.experiments.params import (
    DEFAULT_COMMAND,
    InitParams,
    is_session_branch,
    session_branch,
    slugify,
    validate_init,
    validate_new_session,
)
from autoresearch.experiments.rules import SETUP_COMMIT_MESSAGE
from autoresearch.experiments.sealed import seal_harness
from autoresearch.journal import sessions
from autoresearch.journal.sessions import SessionRecord
from autoresearch.paths import (
    CHECKS_FILE,
    DEFAULT_SHARED_LINKS,
    HARNESS_FILE,
    SESSION_BRANCH_PREFIX,
    session_worktree,
)
from autoresearch.repo_state import link_shared_paths
from autoresearch.reset import is_cache
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
    segment: int
    new_segment: bool
    updated: tuple[str, ...]
    abandoned_run: int | None
    session: dict[str, Any]
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["updated"], data["messages"] = list(self.updated), list(self.messages)
        return data


@dataclass(frozen=True)
class CloseResult:
    session_id: int
    branch: str
    directory: str
    abandoned_run: int | None
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "messages": list(self.messages)}


def init_session(start: Path, params: InitParams) -> InitResult:
    """Start a session on this checkout, or update the active one (omitted fields kept)."""
    validate_init(params)
    with open_context(start, "create") as ctx:
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
        f"sealed {', '.join(sealed)}: exp run measures nothing while they differ "
        "(harness changed: <path>) and runs the sealed copy"
    )


def close_session(start: Path) -> CloseResult:
    """`off`: abandon a pending run and close the session (its branch and commits stay)."""
    with open_context(start) as ctx:
        session = ctx.bound_session()
        with session_lock(ctx, session):
            abandoned = abandon_pending(ctx.journal, session)
            with ctx.journal.tx() as conn:
                sessions.update_session(conn, session.session_id, closed_at=utc_now_iso())
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


def _create(ctx: Context, params: InitParams) -> InitResult:
    assert params.name is not None and params.metric is not None
    messages: list[str] = []
    if params.worktree:
        branch = _new_branch_name(ctx, params)
        directory = _make_worktree(ctx, branch)
        created_branch = True
        messages.append(
            f"created branch {branch} in the worktree {directory}: cd {shlex.quote(str(directory))}"
        )
    elif is_session_branch(ctx.branch):
        assert ctx.branch is not None
        branch, directory, created_branch = ctx.branch, ctx.cwd, False
        messages.append(f"using the session branch {branch}")
    else:
        branch, directory, created_branch = _new_branch_name(ctx, params), ctx.cwd, True
        git.checkout_new_branch(ctx.cwd, branch)
        messages.append(f"created and checked out branch {branch}")
    setup = commit_work(directory, SETUP_COMMIT_MESSAGE)
    if setup:
        messages.append(f"committed the dirty tree as '{SETUP_COMMIT_MESSAGE}' ({setup[:7]})")
    head = git.head(directory)
    with ctx.journal.tx() as conn:
        session_id = sessions.insert_session(conn, **_new_fields(params, branch, directory, head))
        record = sessions.get_session(conn, session_id)
    assert record is not None
    if params.seal:
        _seal(ctx, record, messages)
    messages.append("next: run the benchmark (exp run) and log the first run as keep: the baseline")
    return _result(record, True, created_branch, setup, False, (), None, messages)


def _new_fields(params: InitParams, branch: str, directory: Path, head: str) -> dict[str, Any]:
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
    if slugify(source) == "session" and params.goal:
        source = params.goal
    existing = git.local_branches(ctx.root, SESSION_BRANCH_PREFIX.rstrip("/"))
    return session_branch(source, today_compact(), existing)


def _make_worktree(ctx: Context, branch: str) -> Path:
    """A new worktree for `branch` at this checkout's HEAD, carrying its dirty files over."""
    path = session_worktree(ctx.root, branch)
    patch = git.diff_patch(ctx.cwd, "HEAD", keep_untracked=lambda p: not is_cache(p))
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
        setup = None
        if params.new_segment:
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
    messages.append(
        f"updated {', '.join(updated)}" if updated else "no field given: the session is unchanged"
    )
    if setup:
        messages.append(f"committed the dirty tree as '{SETUP_COMMIT_MESSAGE}' ({setup[:7]})")
    if params.new_segment:
        messages.append(
            f"started segment {record.segment}: new baseline, new counts; "
            "run and log the first run as keep"
        )
    last = abandoned[-1].number if abandoned else None
    return _result(record, False, False, setup, params.new_segment, updated, last, messages)


def _result(
    record: SessionRecord,
    created: bool,
    created_branch: bool,
    setup: str | None,
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
        segment=record.segment,
        new_segment=new_segment,
        updated=updated,
        abandoned_run=abandoned,
        session=session_dict(record),
        messages=tuple(messages),
    )
