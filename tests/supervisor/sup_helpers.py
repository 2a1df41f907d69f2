"""Helpers for supervisor tests: act as a session that commits and writes the artifact."""

from __future__ import annotations

from typing import Any

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.step import StepResult, step
from helpers import artifact, edit_and_commit, write_artifact


def submit(
    h: RunHandle,
    files: dict[str, str] | None = None,
    status: str = "candidate",
    description: str = "a change",
    **overrides: Any,
) -> dict[str, Any]:
    """Act as a session: commit `files` in the worktree and write the artifact."""
    commit = edit_and_commit(h.worktree, files, description) if files else None
    data = artifact(
        status=status,
        candidate_commit=commit,
        base_commit=h.run.last_kept_commit or "",
        description=description,
        notes=["from the test session"],
    )
    data.update(overrides)
    write_artifact(h.paths.candidate, data)
    return data


def submit_and_step(h: RunHandle, files: dict[str, str] | None = None, **kw: Any) -> StepResult:
    submit(h, files, **kw)
    return step(h)
