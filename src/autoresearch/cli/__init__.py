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

from autoresearch import __version__
from autoresearch.cli.common import AppGroup
from autoresearch.cli.doctor_cmd import doctor
from autoresearch.cli.exp_cmds import exp
from autoresearch.cli.hook_cmds import register as register_hook_commands
from autoresearch.cli.init_cmd import init
from autoresearch.cli.job_cmds import job
from autoresearch.cli.mcp_cmd import mcp_command
from autoresearch.cli.report_cmds import register as register_report_commands
from autoresearch.cli.run_cmds import register as register_run_commands
from autoresearch.cli.worker_cmds import worker


@click.group(cls=AppGroup, context_settings={"help_option_names": ["-h", "--help"]})
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


register_run_commands(app)
register_report_commands(app)
register_hook_commands(exp)
app.add_command(exp)
app.add_command(mcp_command)
app.add_command(job)
app.add_command(worker)
app.add_command(doctor)
app.add_command(init)


def main() -> None:
    app.main(prog_name="autoresearch")


if __name__ == "__main__":
    main()
    sys.exit(0)
