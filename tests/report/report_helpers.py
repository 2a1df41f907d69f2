"""Helpers for report and finalize tests: drive a real run through the core's `step`."""

from __future__ import annotations

import sys
from pathlib import Path

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.step import StepResult, step
from helpers import Repo, artifact, cli, edit_and_commit, sandbox_text, write_artifact

LANE_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_agent.py'}"

# (files to commit, description) per iteration of the standard run: keep, discard, crash,
# keep, discard, keep (the evaluator's score is value.txt; mode.txt=crash makes it error).
STANDARD_PLAN: list[tuple[dict[str, str], str]] = [
    ({"value.txt": "5\n"}, "five: a real improvement"),
    ({"value.txt": "3\n"}, "three: worse"),
    ({"value.txt": "9\n", "mode.txt": "crash\n"}, "nine but the evaluator crashes"),
    ({"value.txt": "8\n"}, "eight: better again"),
    ({"value.txt": "2\n"}, "two: much worse"),
    ({"value.txt": "12\n"}, "twelve: the best"),
]


def submit_and_step(h: RunHandle, files: dict[str, str], description: str) -> StepResult:
    """Act as one agent session: commit `files`, write the artifact, let the core decide."""
    commit = edit_and_commit(h.worktree, files, description)
    data = artifact(
        candidate_commit=commit,
        base_commit=h.run.last_kept_commit or "",
        description=description,
        notes=["note from the session"],
    )
    write_artifact(h.paths.candidate, data)
    return step(h)


def drive(h: RunHandle, plan: list[tuple[dict[str, str], str]]) -> list[StepResult]:
    return [submit_and_step(h, files, description) for files, description in plan]


def artifacts_dir() -> Path:
    """Where tests leave files for people to look at (CI keeps the folder)."""
    root = Path(__file__).resolve().parents[2] / "artifacts"
    root.mkdir(exist_ok=True)
    return root


def lanes_run(repo: Repo, tag: str) -> str:
    """A finished `run --lanes 2` of two iterations (its score counts the lane agents' bonus
    files); its run id."""
    repo.write("scripts/score.py", 'import glob, json\nprint(json.dumps({"pass": True, '
               '"score": 1 + len(glob.glob("bonus-*.txt"))}))\n')  # fmt: skip
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))
    done = cli("run", "missions/demo", "--agent", LANE_AGENT, "--run-tag", tag, "--lanes", "2",
               "--max-iterations", "2", cwd=repo.root, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return f"missions-demo-{tag.lower()}"
