"""`autoresearch init`: a new mission's two files, from a few answers.

Pure text: the answers in, mission.md and sandbox.md out. The sandbox.md written is parsed
back with the contract's own parser before anything is written, so `init` can never leave a
mission that `check` refuses. A mission folder that already has either file is refused: init
never overwrites a user's words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from autoresearch.contracts.sandbox import parse_sandbox
from autoresearch.errors import ContractError, RefusedError
from autoresearch.fsutil import atomic_write_text
from autoresearch.paths import MISSION_FILE, SANDBOX_FILE, slug
from autoresearch.states import Direction


@dataclass(frozen=True)
class MissionAnswers:
    """What `init` asks (or takes as flags)."""

    goal: str
    command: str
    metric: str | None  # a METRIC line's name (format metric); None: the evaluator prints JSON
    direction: Direction
    scope: tuple[str, ...] = field(default_factory=tuple)  # what the agent may edit
    timeout_seconds: float = 600.0

    def default_dir(self) -> str:
        """missions/<slug of the goal>, the layout docs/writing-a-mission.md shows."""
        return f"missions/{slug(self.goal, 'mission', limit=40)}"


def mission_text(answers: MissionAnswers) -> str:
    scope = ", ".join(answers.scope) if answers.scope else "the code the evaluator measures"
    what = (
        f"the `{answers.metric}` value it prints as a METRIC line"
        if answers.metric
        else "the score it prints as JSON"
    )
    return (
        f"# {answers.goal}\n\n"
        f"Goal: {answers.goal}.\n\n"
        f"The evaluator (`{answers.command}`) measures {what}; {answers.direction} is better.\n"
        f"Scope: change {scope}. One coherent change per session.\n"
    )


def sandbox_text(answers: MissionAnswers) -> str:
    # JSON strings are valid YAML scalars: a command with quotes or colons stays one string
    lines = ["---", "evaluator:", f"  command: {json.dumps(answers.command)}"]
    if answers.metric:
        lines += ["  format: metric", f"  metric: {json.dumps(answers.metric)}"]
    else:
        lines += ["  format: json"]
    lines += [
        f"  direction: {answers.direction}",
        f"  timeout_seconds: {answers.timeout_seconds:g}",
    ]
    body = (
        f"Edit only {', '.join(answers.scope)}."
        if answers.scope
        else "Edit the code under test only."
    )
    body += " Never change the evaluator, its inputs or its checks."
    return "\n".join([*lines, "---", body, ""])


def write_mission(mission_dir: Path, answers: MissionAnswers) -> tuple[Path, Path]:
    """Write mission.md and sandbox.md into `mission_dir`; refused when either exists."""
    files = {
        mission_dir / MISSION_FILE: mission_text(answers),
        mission_dir / SANDBOX_FILE: sandbox_text(answers),
    }
    taken = [str(path) for path in files if path.exists()]
    if taken:
        raise RefusedError(
            f"{' and '.join(taken)} already exist{'s' if len(taken) == 1 else ''}: init never "
            "overwrites a mission; choose another folder or edit the files"
        )
    try:
        parse_sandbox(files[mission_dir / SANDBOX_FILE])
    except ContractError as exc:  # an answer the contract cannot hold (a NUL in the command)
        raise ContractError(f"init cannot write this mission: {exc}") from exc
    mission_dir.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        # the user's files, not private state: made with the user's umask, then filled
        # atomically keeping that mode
        path.touch(exist_ok=False)
        atomic_write_text(path, text, keep_mode=True)
    return mission_dir / MISSION_FILE, mission_dir / SANDBOX_FILE
