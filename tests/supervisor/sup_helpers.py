"""Helpers for supervisor tests: act as a session that commits and writes the artifact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import StepResult, step
from helpers import (
    GIT_ENV,
    Repo,
    artifact,
    edit_and_commit,
    resume_detached,
    sandbox_text,
    write_artifact,
)

FRONTIER_AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/frontier_agent.py'}"


def frontier_env(tmp: Path, rule: dict[str, list[float]]) -> dict[str, str]:
    """The environment of the scripted frontier agent (fakes/frontier_agent.py)."""
    return {**os.environ, **GIT_ENV, "FRONTIER_RULE": json.dumps(rule),
            "FRONTIER_STATE": str(tmp / "visits.json"), "FRONTIER_LOG": str(tmp / "log")}  # fmt: skip


def run_killed_and_resumed(
    repo: Path, argv: list[str], env: dict[str, str], run_id: str, failpoint: str | None
) -> subprocess.CompletedProcess[str]:
    """`autoresearch ARGV` in `repo`, in a session of its own; with `failpoint`, killed there
    (SIGKILL of its group) and resumed: the resume's outcome, else the run's."""
    fault = {"AUTORESEARCH_FAILPOINTS": failpoint} if failpoint else {}
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", *argv], cwd=repo, env={**env, **fault},
        capture_output=True, text=True, timeout=240, start_new_session=True,
    )  # fmt: skip
    if not failpoint:
        assert done.returncode == 0, done.stderr
        return done
    assert done.returncode == -9, done.stderr
    resumed = resume_detached(repo, run_id, env)
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    return resumed


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


def one_keep(repo: Repo, evaluator: str, tag: str) -> str:
    """A run (its id) whose evaluator is the script `evaluator`, run unboxed, that kept
    value.txt going from 0 to 10: certify's subjects."""
    repo.write("scripts/evaluate.py", evaluator)
    repo.write("value.txt", "0\n")
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/evaluate.py", unboxed=True))
    with prepare(mission, run_tag=tag) as h:
        assert submit_and_step(h, {"value.txt": "10\n"}).decision == "keep"
        return h.run_id
