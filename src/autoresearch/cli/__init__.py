"""The command line: thin wiring from arguments to core functions, and output formatting.

Exit codes: 0 success; 1 a step was recorded but failed the run; 2 nothing was done (invalid
input or a refused action), printed as one line `autoresearch: <message>` on stderr; 3 an
internal error, one line too, with a crash log (autoresearch.crash); 141 the output's reader
left (`status | head -1`), quietly.
Heavy modules are imported inside commands so that `--help` and `status` start fast.
"""

from __future__ import annotations

import sys

import click

from autoresearch.api import __version__
from autoresearch.cli import startup
from autoresearch.cli.lazy import LazyCommand, LazyGroup

_RUN = "autoresearch.cli.run_cmds"
_LOOP = "autoresearch.cli.loop_cmds"
_REPORT = "autoresearch.cli.report_cmds"

# Each command's module is imported only when it runs; the summaries are the first paragraph
# of each command's help, as `--help` lists it (tests/test_help.py holds them to the commands).
COMMANDS = {
    "certify": LazyCommand(
        _RUN,
        "certify",
        "Re-measure RUN_ID's baseline and final kept commit, interleaved, in scratch "
        "checkouts, and report the improvement with a 95 % interval (--ablate: and each kept "
        "change's worth).",
    ),
    "check": LazyCommand(
        _RUN,
        "check",
        "Validate MISSION_DIR and print the parsed contract (--try: and run its evaluator once).",
    ),
    "clean": LazyCommand(
        _RUN,
        "clean",
        "Remove the worktrees and branches of finished runs: each RUN_ID, or all of them.",
    ),
    "continue": LazyCommand(
        _RUN, "continue_", "Continue a stopped or completed run with new limits."
    ),
    "demo": LazyCommand(
        _LOOP,
        "demo",
        "Create an example repository and run the loop on it with the offline agent.",
    ),
    "doctor": LazyCommand(
        "autoresearch.cli.doctor_cmd",
        "doctor",
        "Check the journal, its backups, git locks, worktrees and runs against git.",
    ),
    "exp": LazyCommand(
        "autoresearch.cli.exp_group",
        "exp",
        "Experiment sessions: tools a long-lived agent calls itself.",
    ),
    "finalize": LazyCommand(
        _REPORT,
        "finalize",
        "Turn RUN_ID's kept commits into review branches cut from the run's start point.",
    ),
    "init": LazyCommand(
        "autoresearch.cli.init_cmd",
        "init",
        "Write a new mission (mission.md, sandbox.md) from a few answers, then run its "
        "evaluator once as `check --try` does.",
    ),
    "job": LazyCommand(
        "autoresearch.cli.job_cmds",
        "job",
        "Delegation jobs: hand a coding task to a background agent, get a verdict back.",
    ),
    "mcp": LazyCommand(
        "autoresearch.cli.mcp_cmd",
        "mcp_command",
        "Serve the experiment tools and supervised-run control over MCP.",
    ),
    "prepare": LazyCommand(
        _RUN,
        "prepare",
        "Create the run's branch and worktree, run the baseline, write the run files.",
    ),
    "rebaseline": LazyCommand(
        _RUN,
        "rebaseline",
        "Re-run the baseline on the worktree HEAD (only before the first iteration).",
    ),
    "report": LazyCommand(
        _REPORT,
        "report",
        "Write RUN_ID's report: progress.png and a self-contained report.html.",
    ),
    "resume": LazyCommand(
        _RUN,
        "resume",
        "Re-check and re-arm a running run; continue its loop with the given or recorded agent.",
    ),
    "run": LazyCommand(
        _LOOP,
        "run",
        "Prepare a run, then loop: agent session → artifact → evaluation → decision.",
    ),
    "serve": LazyCommand(
        "autoresearch.cli.serve_cmd",
        "serve",
        "Serve RUN_ID's report on 127.0.0.1, updated in place as the run goes, until Ctrl-C.",
    ),
    "status": LazyCommand(
        "autoresearch.cli.status_cmd",
        "status",
        "All runs (without RUN_ID), or run RUN_ID with its iterations.",
    ),
    "step": LazyCommand(_RUN, "step", "Process the run's candidate.json once (one decision)."),
    "stop": LazyCommand(
        _RUN,
        "stop",
        "Finalize a run as stopped (`operator stop`); a live driver is asked to stop.",
    ),
    "worker": LazyCommand(
        "autoresearch.cli.worker_cmds",
        "worker",
        "The delegation worker's zero-model tools: metrics and their gate.",
    ),
}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="autoresearch")
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Repository to act on (default: the one around the current directory).",
)
@click.pass_context
def app(ctx: click.Context, repo: str | None) -> None:
    """Keep only what measurably improves.

    autoresearch runs evaluator-driven experiment loops over a git repository: an agent
    proposes one change per iteration in an isolated worktree, a fixed evaluator measures it,
    and the change is kept when it improves the score and reset otherwise. Everything is
    recorded in .autoresearch/journal.sqlite3.
    """
    ctx.obj = {"repo": repo}


def main() -> None:
    """The process's entry point: the collector is off while the command starts."""
    startup.pause()
    app.main(prog_name="autoresearch")


if __name__ == "__main__":
    main()
    sys.exit(0)
