"""Where a session tool call acts: the checkout around `start`, its branch, the journal at the
main repository root, and the session bound to that branch.

Sessions are bound to branches: a session is seen only from the checkout that has its branch
checked out; from anywhere else the tools say which branch (and worktree) it lives on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from autoresearch.errors import NotFoundError
from autoresearch.experiments.checkout import locate
from autoresearch.experiments.verbs import Door, Verbs, verbs
from autoresearch.journal import sessions
from autoresearch.journal.db import Journal, journal_present, open_journal
from autoresearch.journal.sessions import SessionRecord
from autoresearch.locks import take_or_refuse
from autoresearch.paths import HARNESS_FILE, RepoPaths, SessionPaths, session_paths
from autoresearch.repo_state import ensure_state_dir

# create: init (makes the journal); write: run, log, notes, off; read: status, resume.
Mode = Literal["create", "write", "read"]


@dataclass
class Context:
    """An open journal plus the checkout a call acts on."""

    root: Path
    cwd: Path
    branch: str | None
    journal: Journal
    door: Door = Door.CLI

    @property
    def verbs(self) -> Verbs:
        return verbs(self.door)

    def session_paths(self, session: SessionRecord) -> SessionPaths:
        return session_paths(self.root, session.session_id)

    def active(self) -> SessionRecord | None:
        return None if self.branch is None else sessions.active_session(self.journal, self.branch)

    def bound_session(self) -> SessionRecord:
        """The active session of the current branch, or NotFoundError saying where one lives."""
        found = self.active()
        if found is None:
            others = sessions.open_sessions(self.journal)
            closed = self.closed_here()
            raise NotFoundError(no_session_message(self.branch, others, self.verbs, closed))
        return found

    def closed_here(self) -> SessionRecord | None:
        """The newest closed session of the current branch: the one a user most likely means."""
        if self.branch is None:
            return None
        mine = [s for s in sessions.all_sessions(self.journal) if s.branch == self.branch]
        return mine[0] if mine and mine[0].closed_at else None


def no_session_message(
    branch: str | None,
    others: list[SessionRecord],
    say: Verbs | None = None,
    closed: SessionRecord | None = None,
) -> str:
    say = say or verbs(Door.CLI)
    here = f"branch {branch}" if branch else "a detached HEAD"
    if closed is not None:  # its harness is there: writing it again is not the way on
        return (
            f"no active experiment session on {here}: session #{closed.session_id} "
            f"'{closed.name}' was closed; {say.reopen_session(closed.session_id)} goes on "
            f"with it, {say.init_new} starts a new one"
        )
    if not others:
        return f"no active experiment session on {here}: write {HARNESS_FILE}, then {say.init_new}"

    where = "; ".join(_where(s) for s in others[:3])
    return f"no active experiment session on {here}; {where}"


def _where(session: SessionRecord) -> str:
    text = f"session #{session.session_id} '{session.name}' lives on branch {session.branch}"
    if session.own_worktree:
        return f"{text} in the worktree {session.directory} (cd there)"
    return f"{text} (git checkout {session.branch})"


@contextmanager
def open_context(start: Path, mode: Mode = "write", door: Door = Door.CLI) -> Iterator[Context]:
    """Resolve `start` (any path inside the repository or a session worktree).

    Only `create` (init) makes `.autoresearch/` and the journal. Without a journal there is no
    session, so the other modes say so before anything is written; `read` (status) never
    writes to the repository, `write` re-asserts the exclude of `.autoresearch/` first.
    """
    cwd, root, branch = locate(start if start.is_dir() else start.parent)
    repo = RepoPaths(root)
    if mode != "create" and not journal_present(repo.journal):
        raise NotFoundError(no_session_message(branch, [], verbs(door)))
    if mode != "read":
        ensure_state_dir(repo)
    journal = open_journal(root, to_read=mode == "read")  # a read takes no write lock
    try:
        yield Context(root, cwd, branch, journal, door)
    finally:
        journal.close()


@contextmanager
def session_lock(ctx: Context, session: SessionRecord) -> Iterator[None]:
    """One mutating call (run, log, re-init, off) per session at a time."""
    lock = take_or_refuse(
        ctx.session_paths(session).lock,
        f"session #{session.session_id} is busy: another {ctx.verbs.run} or {ctx.verbs.log} "
        "is in progress; wait for it to finish",
    )
    try:
        yield
    finally:
        lock.release()
