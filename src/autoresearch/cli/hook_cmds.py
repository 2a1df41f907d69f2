"""`autoresearch exp hook <event>` (what the host runs) and `exp hooks install|uninstall`.

The hook commands always exit 0 and print at most one JSON object: a hook must never break the
host's turn (the core turns every failure into "let it stop" and logs why).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from autoresearch.cli.common import AppGroup, emit_json, fail, say

JSON_HELP = "Print one JSON object on stdout."
CLAUDE_HELP = "Claude Code: .claude/settings.local.json (kept out of git)."
CODEX_HELP = "Codex: .codex/hooks.json (kept out of git; the project and its hooks trusted)."


@click.command("hook")
@click.argument("event", type=click.Choice(["stop", "session-start"]))
@click.pass_context
def hook(ctx: click.Context, event: str) -> None:
    """Answer a Claude Code or Codex hook (JSON on stdin; both speak the same protocol):
    `stop` resumes the experiment loop after a turn that logged an experiment;
    `session-start` adds the session summary after a compaction. Installed by
    `exp hooks install --claude` or `--codex`."""
    from autoresearch.api import MAX_STDIN_BYTES, HookEvent, answer_hook

    obj = ctx.find_root().obj or {}
    start = Path(obj.get("repo") or Path.cwd())
    try:
        raw = "" if sys.stdin.isatty() else sys.stdin.buffer.read(MAX_STDIN_BYTES).decode()
    except (OSError, UnicodeDecodeError, ValueError):
        raw = "\x00"  # unreadable input: answer_hook logs it and lets the agent stop
    answer = answer_hook(HookEvent(event), raw, start)
    if answer.output is not None:  # most Stops answer nothing: the redactor only for an answer
        from autoresearch.api import redact_value

        click.echo(json.dumps(redact_value(answer.output), ensure_ascii=False))


@click.group("hooks", cls=AppGroup)
def hooks() -> None:
    """Install or remove the host hooks that keep an experiment session going."""


def _start(ctx: click.Context) -> Path:
    obj = ctx.find_root().obj or {}
    return Path(obj.get("repo") or Path.cwd())


def _host(claude: bool, codex: bool) -> str:
    if claude == codex:
        fail("name one host: --claude or --codex")
    return "claude" if claude else "codex"


@hooks.command("install")
@click.option("--claude", is_flag=True, help=CLAUDE_HELP)
@click.option("--codex", is_flag=True, help=CODEX_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def install(ctx: click.Context, claude: bool, codex: bool, as_json: bool) -> None:
    """Merge the Stop and SessionStart (compact) hooks into the project's Claude Code or
    Codex hook file; the user's other hooks stay as they are."""
    from autoresearch.api import Host
    from autoresearch.api import install as do_install

    result = do_install(_start(ctx), Host(_host(claude, codex)))
    emit_json(result.to_dict()) if as_json else say(result.message)


@hooks.command("uninstall")
@click.option("--claude", is_flag=True, help=CLAUDE_HELP)
@click.option("--codex", is_flag=True, help=CODEX_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def uninstall(ctx: click.Context, claude: bool, codex: bool, as_json: bool) -> None:
    """Remove exactly the entries `install` added."""
    from autoresearch.api import Host
    from autoresearch.api import uninstall as do_uninstall

    result = do_uninstall(_start(ctx), Host(_host(claude, codex)))
    emit_json(result.to_dict()) if as_json else say(result.message)
