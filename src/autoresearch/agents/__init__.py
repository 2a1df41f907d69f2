"""Agent back-ends behind one interface (`agents.base.Agent`), chosen by an `--agent` spec."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autoresearch.agents.base import Agent
from autoresearch.errors import ContractError

AGENT_NAMES = ("codex", "claude", "aider", "offline")
MSG_UNKNOWN = "unknown agent {spec!r}: use codex, claude, aider, offline or cmd:<shell command>"


@dataclass(frozen=True)
class AgentConfig:
    """An agent spec and its options, as recorded in the journal for `resume`."""

    spec: str
    model: str | None = None
    args: tuple[str, ...] = ()
    max_turns: int | None = None
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.spec,
            "model": self.model,
            "agent_args": list(self.args),
            "max_turns": self.max_turns,
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentConfig:
        return cls(
            spec=str(data["agent"]),
            model=data.get("model"),
            args=tuple(data.get("agent_args") or ()),
            max_turns=data.get("max_turns"),
            seed=data.get("seed"),
        )


def validate_spec(spec: str) -> str:
    spec = spec.strip()
    if spec.startswith("cmd:") and spec[4:].strip():
        return spec
    if spec in AGENT_NAMES:
        return spec
    raise ContractError(MSG_UNKNOWN.format(spec=spec))


# the program each CLI back-end starts (cmd: runs through the shell, offline in-process)
EXECUTABLES = {"codex": "codex", "claude": "claude", "aider": "aider"}


def require_installed(spec: str) -> None:
    """Refuse, before anything is prepared, an agent whose program is not on PATH: a session
    that cannot start would only record failures."""
    program = EXECUTABLES.get(spec)
    if program is None:
        return
    path = os.environ.get("PATH", "")
    if shutil.which(program, path=path) is None:
        raise ContractError(
            f"agent {spec} is not installed: no {program!r} executable on PATH ({path})"
        )


def make_agent(config: AgentConfig) -> Agent:
    """Build the back-end for a validated config."""
    spec = validate_spec(config.spec)
    args: Sequence[str] = config.args
    if spec.startswith("cmd:"):
        from autoresearch.agents.command import command_agent

        return command_agent(spec[4:].strip(), args)
    if spec == "codex":
        from autoresearch.agents.codex import codex_agent

        return codex_agent(config.model, args)
    if spec == "claude":
        from autoresearch.agents.claude import claude_agent

        return claude_agent(config.model, args, config.max_turns)
    if spec == "aider":
        from autoresearch.agents.aider import aider_agent

        return aider_agent(config.model, args)
    from autoresearch.agents.offline import OfflineAgent

    return OfflineAgent(seed=config.seed)
