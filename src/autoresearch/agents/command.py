"""`cmd:<shell command>`: any program. It reads the AUTORESEARCH_* variables (instructions,
candidate file, worktree, base commit, run id, iteration; the model when `--model` is given)
and writes the artifact itself."""

from __future__ import annotations

from collections.abc import Sequence

from autoresearch.agents.base import SessionRequest
from autoresearch.agents.external import ExternalAgent


def command_agent(
    command: str, extra: Sequence[str] = (), model: str | None = None
) -> ExternalAgent:
    def argv(req: SessionRequest) -> list[str]:
        return ["sh", "-c", command, "autoresearch-agent", *extra]

    return ExternalAgent(
        name=f"cmd:{command}",
        build_argv=argv,
        model=model,
        # in the environment, not the argv: a program written before --model reached it sees
        # the arguments it always saw (a portfolio can give the same program two models)
        env={"AUTORESEARCH_MODEL": model} if model else {},
    )
