"""Loading a mission directory (supervisor.md §1): the checks that need the filesystem and git.

Messages are contract and are checked in order: the directory exists, it is inside a git
repository, mission.md and sandbox.md exist, then sandbox.md parses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from autoresearch import git
from autoresearch.contracts.sandbox import (
    MAX_SANDBOX_BYTES,
    Sandbox,
    mission_slug,
    parse_sandbox,
    unknown_keys,
)
from autoresearch.contracts.tune import read_value
from autoresearch.errors import ContractError
from autoresearch.fsutil import FileRefused, read_regular
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.paths import MISSION_FILE, SANDBOX_FILE


def _contract(sandbox: object) -> dict[str, object]:
    """What `check --json` prints of the parsed sandbox.md, after the mission's files."""
    sb = cast(Sandbox, sandbox)
    worktree = {"link": list(sb.links), "runtime": list(sb.runtime)}
    return {"evaluator": sb.evaluator, "worktree": worktree, "tune": sb.tune, "body": sb.body}


_HIDDEN = json_field(hidden=True)


@dataclass(frozen=True)
class Mission:
    """A validated mission directory; `to_dict` is the parsed contract `check --json` prints."""

    mission_dir: Path
    repo_root: Path
    worktree_root: Path = field(metadata=_HIDDEN)
    relative_dir: str = field(metadata=json_field(key="mission_relative_dir"))
    slug: str = field(metadata=json_field(key="mission_slug"))
    # the two files inside mission_dir, set by __post_init__: fields, not properties, so that
    # the JSON has them in their place
    mission_file: Path = field(init=False)
    sandbox_file: Path = field(init=False)
    mission_text: str = field(metadata=_HIDDEN)
    sandbox_text: str = field(metadata=_HIDDEN)
    sandbox: Sandbox = field(metadata=json_field(inline=True, convert=_contract))

    def __post_init__(self) -> None:
        object.__setattr__(self, "mission_file", self.mission_dir / MISSION_FILE)
        object.__setattr__(self, "sandbox_file", self.mission_dir / SANDBOX_FILE)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def load_mission(path: Path) -> Mission:
    """Validate a mission directory and parse its contract."""
    mission_dir = Path(os.path.realpath(path.expanduser()))
    if not mission_dir.exists():
        raise ContractError(f"mission-dir does not exist: {mission_dir}")
    if not mission_dir.is_dir():
        raise ContractError(f"mission-dir is not a directory: {mission_dir}")
    tree_root = git.toplevel(mission_dir)
    repo_root = git.main_root(mission_dir) if tree_root else None
    if tree_root is None or repo_root is None:
        raise ContractError("mission-dir must be inside a git repository.")
    mission_file = mission_dir / MISSION_FILE
    sandbox_file = mission_dir / SANDBOX_FILE
    if not mission_file.is_file():
        raise ContractError(f"mission.md is required inside mission-dir: {mission_file}")
    if not sandbox_file.is_file():
        raise ContractError(f"sandbox.md is required inside mission-dir: {sandbox_file}")
    sandbox_text = _read(sandbox_file)
    sandbox = parse_sandbox(sandbox_text)
    relative = os.path.relpath(mission_dir, tree_root)
    relative = "." if relative == "." else Path(relative).as_posix()
    return Mission(
        mission_dir=mission_dir,
        repo_root=repo_root,
        worktree_root=tree_root,
        relative_dir=relative,
        slug=mission_slug(relative, tree_root.name),
        mission_text=_read(mission_file),
        sandbox_text=sandbox_text,
        sandbox=sandbox,
    )


def _read(path: Path) -> str:
    """A mission file: a regular file (a symlink to one is fine) of at most 1 MiB, UTF-8."""
    try:
        data = read_regular(Path(os.path.realpath(path)), MAX_SANDBOX_BYTES)
        return data.decode("utf-8")
    except FileRefused as exc:
        raise ContractError(f"{path.name} {exc}: {path}") from exc
    except UnicodeDecodeError as exc:
        raise ContractError(f"{path.name} must be UTF-8 text: {path}") from exc


def mission_problems(mission: Mission) -> list[str]:
    """What `check` reports beyond parsing: what a run would trip on later. Unknown keys (a
    typo such as `timeout:` is ignored by the parser, so the run would use the default), and
    a `tune:` file or parameter the offline agent would not find."""
    problems = unknown_keys(mission.sandbox.frontmatter)
    tune = mission.sandbox.tune
    for p in tune.parameters if tune else ():
        path = mission.worktree_root / p.file
        if not path.is_file():
            problems.append(f"tune parameter {p.name}: file {p.file} does not exist")
        elif read_value(path.read_text(encoding="utf-8", errors="replace"), p.name) is None:
            problems.append(
                f"tune parameter {p.name} not found as `{p.name} = <number>` in {p.file}"
            )
    return problems
