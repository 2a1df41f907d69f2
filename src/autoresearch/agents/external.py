"""Agents that are command-line programs: one process group per session, output to a log.

Each back-end supplies how to build its command line and a parser for what it prints; the
process handling (timeout, cancel, log, bounded memory) is `proc.run_supervised`.
"""

from __future__ import annotations

import fnmatch
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autoresearch import git
from autoresearch.agents.base import AgentResult, OnSpawn, SessionRequest, ShouldCancel, Usage
from autoresearch.proc import SupervisedSpec, run_supervised
from autoresearch.settings import kill_grace
from autoresearch.streams import LineSplitter

# A parser sees every stdout line of the session and fills in the usage record.
LineParser = Callable[[str, Usage], None]


@dataclass(frozen=True)
class ExternalAgent:
    """A back-end run as `argv` in the worktree."""

    name: str
    build_argv: Callable[[SessionRequest], list[str]]
    parse_line: LineParser | None = None
    stdin_from_instructions: bool = False
    artifact_from_git: bool = False
    model: str | None = None  # the one asked for: recorded when the output names none
    # top-level names (globs) the program leaves in the worktree for itself: removed after
    # the session while untracked, so they never reach a candidate nor block a reset
    scratch: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # added to the session's environment

    def run(
        self, request: SessionRequest, should_cancel: ShouldCancel, on_spawn: OnSpawn
    ) -> AgentResult:
        usage = Usage()
        consumers = []
        if self.parse_line is not None:
            parse = self.parse_line
            consumers.append(LineSplitter(lambda raw: parse(raw.decode("utf-8", "replace"), usage)))
        outcome = run_supervised(
            SupervisedSpec(
                argv=self.build_argv(request),
                cwd=request.worktree,
                env={**request.env(), **self.env},
                log_path=request.log_path,
                timeout=request.timeout,
                stdin_path=request.instructions_file if self.stdin_from_instructions else None,
                grace_seconds=kill_grace(),
                stdout_consumers=consumers,
                should_cancel=should_cancel,
                on_spawn=on_spawn,
                box=request.confinement(),
            )
        )
        usage.model = usage.model or self.model
        if self.scratch:
            remove_untracked(request.worktree, self.scratch)
        return AgentResult(
            agent=self.name,
            exit_code=outcome.exit_code,
            duration_ms=outcome.duration_ms,
            timed_out=outcome.timed_out,
            cancelled=outcome.cancelled,
            spawn_error=outcome.spawn_error,
            usage=usage,
            log_file=str(request.log_path),
        )


def remove_untracked(worktree: Path, patterns: Sequence[str]) -> None:
    """Delete the untracked top-level entries of `worktree` that match `patterns`."""
    tops = {entry.path.split("/")[0] for entry in git.status(worktree) if entry.untracked}
    for name in sorted(tops):
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
            target = worktree / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)


def with_extra(argv: list[str], model: str | None, extra: Sequence[str]) -> list[str]:
    """Append the model flag and the user's extra arguments."""
    if model:
        argv += ["--model", model]
    return argv + list(extra)
