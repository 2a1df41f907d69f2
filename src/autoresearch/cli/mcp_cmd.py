"""`autoresearch mcp`: serve the tools over MCP (stdio, or streamable HTTP on loopback).

The SDK is imported inside the command, so `autoresearch --help` stays fast and works without
the `mcp` extra. In stdio mode stdout belongs to the protocol: nothing else may print there.
"""

from __future__ import annotations

from pathlib import Path

import click

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
@click.pass_context
def mcp_command(ctx: click.Context, transport: str, host: str | None, port: int | None) -> None:
    """Serve the experiment tools and supervised-run control over MCP.

    Tools: init_experiment, run_experiment, log_experiment, update_notes, experiment_status,
    run_list, run_status, run_stop. They act on --repo (or the current directory).
    """
    obj = ctx.find_root().obj or {}
    start = Path(obj.get("repo") or Path.cwd()).absolute()
    if not start.is_dir():
        fail(f"--repo is not a directory: {start}")
    if transport == "stdio" and (host is not None or port is not None):
        fail("--host and --port apply to --transport http only")
    try:
        from autoresearch.mcp.server import build_server
    except ImportError as exc:
        fail(
            f"the MCP server needs the mcp extra ({exc}): "
            "pip install '.[mcp]' in a clone of autoresearch"
        )
    server = build_server(start)
    if transport == "stdio":
        server.run("stdio")
        return
    host, port = host or LOOPBACK_HOSTS[0], port or DEFAULT_PORT
    click.echo(f"autoresearch MCP server: http://{host}:{port}/mcp (Ctrl-C stops it)", err=True)
    server.run("streamable-http", host=host, port=port)
