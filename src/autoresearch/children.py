"""Child processes: the one environment tag every child carries, and the one reaper.

A driver runs agents, evaluators, harnesses and checks in their own process groups. Each child
gets its owner's tag in its environment (`child_env`, from a typed `ChildEnv`, is the only
place that assembles the AUTORESEARCH_* child environment) and is registered in the journal
while it runs (journal/children.py). The owners are a supervised run, one harness run of an
experiment session, and a delegation job. A later driver of the same owner stops what a
crashed one left (`reap`): the registered groups whose processes still carry the tag – a
recycled process id is never killed – then any group carrying every entry of the tag that
nobody registered (a
child spawned just before its driver died).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autoresearch.journal import children as registry
from autoresearch.journal.db import Journal
from autoresearch.proc import kill_marked, kill_stale_group, stop_grace
from autoresearch.settings import (
    ENV_BASE_COMMIT,
    ENV_CANDIDATE_FILE,
    ENV_EXP_DIR,
    ENV_EXP_RUN_MARKER,
    ENV_INSTRUCTIONS_FILE,
    ENV_ITERATION,
    ENV_JOB_ID,
    ENV_LANE,
    ENV_LANES,
    ENV_MISSION_DIR,
    ENV_RUN_ID,
    ENV_SEALED_DIR,
    ENV_WORKTREE,
)
from autoresearch.states import ChildRole


@dataclass(frozen=True)
class ChildTag:
    """Who owns a child: the registry owner and the environment entries that name it.

    The first entry identifies the owner (checked on a registered group's leader); together
    the entries identify an unregistered child (the owner in the tree it works in).
    """

    owner: str
    entries: tuple[tuple[str, str], ...]

    @property
    def marker(self) -> str:
        name, value = self.entries[0]
        return f"{name}={value}"

    def markers(self) -> list[str]:
        return [f"{name}={value}" for name, value in self.entries]

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The caller's environment, the tag and `extra`: a child told nothing else."""
        return spawn_env(ChildEnv(self, extra=extra or {}))


@dataclass(frozen=True)
class ChildEnv:
    """What one child is told through its environment: its owner's tag, then what its kind
    of child needs (None / 0: not set), then `extra`, variables of other programs (a job's
    model bridge)."""

    tag: ChildTag
    iteration: int | None = None  # agent sessions and evaluators of a run
    mission_dir: Path | None = None  # evaluators and checks: the mission folder in the tree
    sealed_dir: Path | None = None  # the verified sealed harness copy
    instructions_file: Path | None = None  # agent sessions
    candidate_file: Path | None = None
    base_commit: str | None = None
    lane: int = 0  # the lane of `run --lanes K`; 0 without lanes
    lanes: int = 0  # K of `run --lanes K` (set with `lane`)
    extra: Mapping[str, str] = field(default_factory=dict)


def child_env(spec: ChildEnv) -> dict[str, str]:
    """The variables a child gets on top of its parent's environment (pure)."""
    named: list[tuple[str, object | None]] = [
        (ENV_INSTRUCTIONS_FILE, spec.instructions_file),
        (ENV_CANDIDATE_FILE, spec.candidate_file),
        (ENV_BASE_COMMIT, spec.base_commit),
        (ENV_ITERATION, spec.iteration),
        (ENV_MISSION_DIR, spec.mission_dir),
        (ENV_SEALED_DIR, spec.sealed_dir),
        (ENV_LANE, spec.lane or None),
        (ENV_LANES, (spec.lanes or None) if spec.lane else None),
    ]
    out = dict(spec.tag.entries)
    out.update((name, str(value)) for name, value in named if value is not None)
    out.update(spec.extra)
    return out


def spawn_env(spec: ChildEnv) -> dict[str, str]:
    """What the child is started with: this process's environment plus `child_env(spec)`."""
    return {**os.environ, **child_env(spec)}


def run_tag(run_id: str, worktree: Path) -> ChildTag:
    """Children of a supervised run (agent sessions, evaluators)."""
    return ChildTag(run_id, ((ENV_RUN_ID, run_id), (ENV_WORKTREE, str(worktree))))


def harness_tag(session_id: int, number: int, directory: str) -> ChildTag:
    """Children of one harness run of an experiment session (benchmark, checks)."""
    return ChildTag(
        f"session:{session_id}:{number}",
        ((ENV_EXP_RUN_MARKER, f"{session_id}-{number}"), (ENV_EXP_DIR, directory)),
    )


def job_tag(job_id: str) -> ChildTag:
    """A delegation job's runner and everything it starts (agent session, checks)."""
    return ChildTag(f"job:{job_id}", ((ENV_JOB_ID, job_id),))


@dataclass(frozen=True)
class Reaped:
    """A process group `reap` stopped; `role` is None for one nobody had registered."""

    pgid: int
    role: ChildRole | None


def register(journal: Journal, tag: ChildTag, pgid: int, role: ChildRole) -> None:
    with journal.tx() as conn:
        registry.add_child(conn, tag.owner, pgid, role, tag.marker)


def forget(conn: sqlite3.Connection, tag: ChildTag) -> None:
    """The owner's children have ended: drop them (inside the caller's transaction)."""
    registry.clear_children(conn, tag.owner)


def reap(journal: Journal, tag: ChildTag, grace: float | None = None) -> list[Reaped]:
    """Stop every process group a crashed driver of `tag.owner` left running, each given
    `grace` seconds between SIGTERM and SIGKILL (None: the user's kill grace, as every other
    stop gives: resume's strays, a job's, an abandoned experiment run's)."""
    grace = stop_grace(grace)  # read once: a bad setting is refused before any group is stopped
    stale = registry.children(journal, tag.owner)
    stopped = [Reaped(c.pgid, c.role) for c in stale if kill_stale_group(c.pgid, c.marker, grace)]
    if stale:
        with journal.tx() as conn:
            registry.clear_children(conn, tag.owner)
    return stopped + [Reaped(pgid, None) for pgid in kill_marked(tag.markers(), grace)]
