"""The verbs of each front door: a message names what the caller can type or call.

A CLI user is told `autoresearch exp run`, an MCP client `run_experiment`: the core builds
every message that names a next step from the `Verbs` of the door that called it, so no
message is written twice and none names the other door's verbs. The MCP texts keep the spec's
wording (`no pending run available. Run run_experiment first.`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class Door(StrEnum):
    """The front door a session call came through."""

    CLI = "cli"
    MCP = "mcp"


@dataclass(frozen=True)
class Verbs:
    """How a caller of one door says each session action."""

    init: str
    init_new: str  # a new session: its required fields
    new_segment: str
    allow_secrets: str
    seal: str  # seal the harness as it is now
    run: str
    log: str
    justify: str  # justify a kept run N (`{n}` is its number)
    flag: str
    notes: str
    status: str
    off: str
    list: str
    reopen: str  # reopen closed session N (`{n}` is its number)
    enter_worktree: str  # how to work in a new session worktree (`{path}` is its path)

    def into_worktree(self, path: Path) -> str:
        return self.enter_worktree.format(path=shlex.quote(str(path)))

    def justify_run(self, number: int) -> str:
        return self.justify.format(n=number)

    def flag_run(self, number: int) -> str:
        return self.flag.format(n=number)

    def reopen_session(self, number: int) -> str:
        return self.reopen.format(n=number)


_CLI = Verbs(
    init="`autoresearch exp init`",
    init_new="`autoresearch exp init --name <name> --metric <metric>`",
    new_segment="`autoresearch exp init --new-segment`",
    allow_secrets="`autoresearch exp init --allow-secrets`",
    seal="`autoresearch exp init --seal`",
    run="`autoresearch exp run`",
    log="`autoresearch exp log`",
    justify="`autoresearch exp log --justify {n}:REASON`",
    flag="`autoresearch exp log --flag {n}:REASON`",
    notes="`autoresearch exp notes`",
    status="`autoresearch exp status`",
    off="`autoresearch exp off`",
    list="`autoresearch exp list`",
    reopen="`autoresearch exp reopen {n}`",
    enter_worktree="cd {path}",
)
_MCP = Verbs(
    init="init_experiment",
    init_new="init_experiment with name and metric",
    new_segment="init_experiment with new_segment",
    allow_secrets="init_experiment with allow_secrets",
    seal="init_experiment with seal",
    run="run_experiment",
    log="log_experiment",
    justify="log_experiment with justify_runs [{{run_id: {n}, reason}}]",
    flag="log_experiment with flag_runs [{{run_id: {n}, reason}}]",
    notes="update_notes",
    status="experiment_status",
    off="`autoresearch exp off` (CLI; no tool closes a session)",
    list="`autoresearch exp list` (CLI)",
    reopen="`autoresearch exp reopen {n}` (CLI; no tool reopens a session)",
    # the server follows the worktree (mcp/session_tools.py, Tools._follow): there is nothing to cd
    enter_worktree="this server's tools act there from now on (edit the files there)",
)


def verbs(door: Door) -> Verbs:
    return _MCP if door == Door.MCP else _CLI
