"""`cmd:<shell command>`: any program. It reads the AUTORESEARCH_* variables (instructions,
candidate file, worktree, base commit, run id, iteration) and writes the artifact itself."""

from __future__ import annotations

from collections.abc import Sequence

from autoresearch.agents.base import SessionRequest
from autoresearch.agents.external import ExternalAgent


def command_agent(command: str, extra: Sequence[str] = ()) -> ExternalAgent:
    def argv(req: SessionRequest) -> list[str]:
        return ["sh", "-c", command, "autoresearch-agent", *extra]

    return ExternalAgent(
        name=f"cmd:{command}",
        build_argv=argv,
    )
