"""The MCP server over one repository: its name, its instructions and its tools.

The tools are mcp/session_tools.py's (experiment sessions, supervised runs), mcp/job_tools.py's
and mcp/worker_tools.py's. None of them is imported until the tools are built: at start, or for
a stdio server at the first request past the handshake (mcp/first_use.py), so that a host's
`initialize` is answered after the SDK's own import (issue 36: tests/test_import_graph.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.context import ServerMiddleware
from mcp.server.mcpserver import MCPServer

from autoresearch.api import __version__
from autoresearch.mcp.first_use import ToolsAtFirstUse

if TYPE_CHECKING:
    from autoresearch.mcp.job_tools import JobTools

INSTRUCTIONS = """\
autoresearch keeps an agent's optimisation loop honest: a fixed benchmark measures every \
change, every result is logged, only improvements are committed, the rest is reverted.

Phase 1 (once): write autoresearch.sh – the benchmark: exit 0 on success, print \
`METRIC <name>=<value>` lines, deterministic workload, fixed seeds, no network – and \
optionally autoresearch.checks.sh (tests, types, lint) as a correctness gate.
Phase 2 (the loop):
1. experiment_status at the start of every turn (goal, numbers, last runs, notes, pending run).
2. init_experiment once (name, metric, direction); later only to change fields or start a \
new segment.
3. Repeat: make one coherent change -> run_experiment -> log_experiment (keep only a real \
improvement whose checks passed; otherwise discard, crash or checks_failed, which reverts \
the change and saves it as a patch). Put the hypothesis in asi.
4. update_notes with what worked, dead ends and ideas.
Never game the benchmark: leave the harness, the checks and the workload alone.
Supervised runs started with `autoresearch run` (CLI) can be watched with run_list and \
run_status and stopped with run_stop.
Delegation jobs: job_start hands a coding task to a background agent and returns a job_id at \
once; job_wait / job_get return its outcome.v1 verdict with compact evidence.
"""


def build_server(
    start: Path,
    run_slack: float | None = None,
    running_max: int | None = None,
    at_first_use: bool = False,
) -> MCPServer:
    """The autoresearch MCP server acting on the repository around `start` (`at_first_use`:
    its tools built at the first request past the handshake, mcp/first_use.py)."""
    return assemble(start, run_slack, running_max, at_first_use=at_first_use)[0]


def assemble(
    start: Path,
    run_slack: float | None = None,
    running_max: int | None = None,
    middleware: Sequence[ServerMiddleware[Any]] = (),
    at_first_use: bool = False,
) -> tuple[MCPServer, ToolsAtFirstUse]:
    """The server and what builds its tools (its `live_jobs` keep an idle server up);
    `running_max` is `--max-running-jobs` (None: the environment's cap)."""
    home = start.absolute()
    # the closure reads `server` when it runs: after the server below exists
    tools = ToolsAtFirstUse(lambda: register_tools(server, home, run_slack, running_max))
    server = MCPServer(
        "autoresearch",
        title="autoresearch",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        middleware=[*middleware, tools] if at_first_use else middleware,
    )
    if not at_first_use:
        tools.ensure()
    return server, tools


def register_tools(
    server: MCPServer, start: Path, run_slack: float | None, running_max: int | None
) -> JobTools:
    """Every tool on `server` (`run_slack` None: session_tools.RUN_SLACK_SECONDS); the job
    tools returned (their live jobs)."""
    from autoresearch.mcp.session_tools import RUN_SLACK_SECONDS, Tools  # the core's records

    session = Tools(start, RUN_SLACK_SECONDS if run_slack is None else run_slack)
    session.register(server)
    from autoresearch.mcp.job_tools import JobTools  # heavy: imported when the tools are built

    job_tools = JobTools(lambda: session.start, running_max)
    job_tools.register(server)
    from autoresearch.mcp.worker_tools import WorkerTools  # issue 16: zero-model tools

    WorkerTools(lambda: session.start).register(server)
    return job_tools
