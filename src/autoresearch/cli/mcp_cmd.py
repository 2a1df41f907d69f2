"""`autoresearch mcp`: serve the tools over MCP (stdio, or streamable HTTP on loopback).

The SDK is imported inside the command, so `autoresearch --help` stays fast and works without
the `mcp` extra. In stdio mode stdout belongs to the protocol: nothing else may print there.
Over HTTP a bearer token is required (autoresearch.mcp.auth), unless --insecure-no-auth.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from autoresearch.cli import startup
from autoresearch.cli.common import fail

# The tools run the session's command in this repository: never listen beyond this machine.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
DEFAULT_PORT = 8000


@click.command("mcp")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that starts the server; http serves http://HOST:PORT/mcp.",
)
@click.option(
    "--host",
    type=click.Choice(LOOPBACK_HOSTS),
    default=None,
    help="HTTP only: loopback address to listen on (default 127.0.0.1).",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help=f"HTTP only: port to listen on (default {DEFAULT_PORT}).",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="HTTP only: where the bearer token is kept "
    "(default $XDG_CONFIG_HOME/autoresearch/mcp-token, i.e. ~/.config/…).",
)
@click.option(
    "--new-token",
    is_flag=True,
    help="HTTP only: replace the stored bearer token with a new one (hosts need the new one).",
)
@click.option(
    "--insecure-no-auth",
    is_flag=True,
    help="HTTP only: accept requests without a bearer token. Any local process or web page "
    "that reaches the port can then run commands through the tools.",
)
@click.option(
    "--idle-exit",
    type=click.FloatRange(min=1),
    default=None,
    metavar="SECONDS",
    help="stdio only: exit (status 0) after SECONDS with no request and no job of this "
    "server running. Default: run until the host closes stdin.",
)
@click.option(
    "--max-running-jobs",
    type=click.IntRange(1, 100),
    default=None,
    metavar="N",
    help="Live delegation jobs this server may have started at once; job_start past it "
    "gets the retryable worker_busy error (default AUTORESEARCH_WORKER_MAX_RUNNING_JOBS, "
    "else 4).",
)
@click.pass_context
def mcp_command(
    ctx: click.Context,
    transport: str,
    host: str | None,
    port: int | None,
    token_file: str | None,
    new_token: bool,
    insecure_no_auth: bool,
    idle_exit: float | None,
    max_running_jobs: int | None,
) -> None:
    """Serve the experiment tools and supervised-run control over MCP.

    Tools: init_experiment, run_experiment, log_experiment, update_notes, experiment_status,
    run_list, run_status, run_stop; delegation jobs: job_start, job_get, job_wait, job_tail,
    job_cancel, job_list, job_apply, job_discard; the worker's tools: search, read_pack,
    diff_digest, shell, apply_edits, history, get_artifact, analyze, review, draft. They act
    on --repo (or the current directory).

    Over HTTP every request must carry `Authorization: Bearer <token>`: the token is made on
    the first start, kept in a file only you can read (AUTORESEARCH_MCP_TOKEN overrides it),
    printed that once, and the lines that configure Claude Code and Codex are printed at every
    start. Host and Origin must name this loopback server.
    """
    obj = ctx.find_root().obj or {}
    start = Path(obj.get("repo") or Path.cwd()).absolute()
    if not start.is_dir():
        fail(f"--repo is not a directory: {start}")
    http_only = host is not None or port is not None or token_file or new_token or insecure_no_auth
    if transport == "stdio" and http_only:
        fail(
            "--host, --port, --token-file, --new-token and --insecure-no-auth apply to "
            "--transport http only"
        )
    if insecure_no_auth and (token_file or new_token):
        fail("--insecure-no-auth takes no token: drop --token-file and --new-token")
    # the tools stop process groups (run_experiment's command, jobs) with the kill grace: a bad
    # value is refused here, where the host's log shows it, not at a tool's first stop
    from autoresearch.api import kill_grace

    kill_grace()
    try:
        with startup.starting():  # the SDK's import is start-up too (~0.5 s)
            from autoresearch.mcp.server import build_server
    except ImportError as exc:
        fail(
            f"the MCP server needs the mcp extra ({exc}): "
            "pip install '.[mcp]' in a clone of autoresearch"
        )
    if transport == "stdio" and idle_exit is not None:
        from autoresearch.mcp.idle import serve_idle_stdio

        serve_idle_stdio(start, idle_exit, max_running_jobs)
        return
    if idle_exit is not None:
        fail("--idle-exit applies to --transport stdio only")
    # over stdio the tools are built after the handshake (mcp/first_use.py: issue 36)
    server = build_server(start, running_max=max_running_jobs, at_first_use=transport == "stdio")
    if transport == "stdio":
        server.run("stdio")
        return
    from autoresearch.mcp.auth import banner, load_token, token_file_from
    from autoresearch.mcp.http_transport import serve

    host, port = host or LOOPBACK_HOSTS[0], port or DEFAULT_PORT
    token = None
    if not insecure_no_auth:
        token = load_token(os.environ, token_file_from(token_file), renew=new_token)
    for line in banner(f"http://{host}:{port}/mcp", token):
        click.echo(line, err=True)
    serve(server, host, port, None if token is None else token.value)
