"""The session commands of `autoresearch exp` (experiments.md); the group is cli/exp_group.py.

Thin wiring: parse options into the core's parameter dataclasses, call one core function,
print its text (or one JSON object with --json). `exp run` exits 1 when the benchmark or the
checks did not pass (the run is recorded either way), 130 when Ctrl-C (or SIGTERM) cancelled
it; refusals exit 2.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from autoresearch.api import ContractError, Direction, ProcessState, Verdict, first_signal_stops
from autoresearch.cli.common import EXIT_RECORDED_FAILURE, emit_json, enum_choice, say

JSON_HELP = "Print one JSON object on stdout."
HEARTBEAT_SECONDS = 30.0
EXIT_CANCELLED = 130


def _start(ctx: click.Context) -> Path:
    """Where the call acts: --repo, else the current directory (a session worktree works)."""
    obj = ctx.find_root().obj or {}
    return Path(obj.get("repo") or Path.cwd())


def _out(as_json: bool, result: Any, text: str) -> None:
    if as_json:
        emit_json(result.to_dict())
    else:
        say(text)


def _tuple(values: tuple[str, ...]) -> tuple[str, ...] | None:
    return values or None


@click.command("init")
@click.option("--name", help="Session name (required for a new session; names the branch).")
@click.option("--goal", help="What the session tries to achieve.")
@click.option("--metric", help="The primary METRIC name (required for a new session).")
@click.option("--unit", help="Unit of the primary metric, for display.")
@click.option(
    "--direction",
    type=enum_choice(Direction),
    help="Which way the metric improves (default: lower).",
)
@click.option("--secondary", multiple=True, help="A secondary metric name (repeatable).")
@click.option("--scope", multiple=True, help="A path the experiments may change (repeatable).")
@click.option("--off-limits", multiple=True, help="A path never to change (repeatable).")
@click.option("--constraint", "constraints", multiple=True, help="A rule to keep (repeatable).")
@click.option(
    "--max-iterations",
    type=click.IntRange(min=0),
    help="Logged runs per segment (0: no limit).",
)
@click.option("--command", help="Benchmark command (default: bash autoresearch.sh).")
@click.option("--new-segment", is_flag=True, help="Start a new segment: new baseline and counts.")
@click.option("--worktree", is_flag=True, help="Run the session in its own git worktree.")
@click.option(
    "--seal", is_flag=True, help="Seal the harness files: exp run refuses a changed harness."
)
@click.option(
    "--allow-secrets",
    is_flag=True,
    help="Commit dirty files that look like secrets (.env, keys, tokens) in the setup commit.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def init(ctx: click.Context, /, **opts: Any) -> None:
    """Start a session on an autoresearch/* branch, or update the active one.

    A new session (or --new-segment) commits the dirty files as the harness setup and lists
    them; files that look like secrets (.env, keys, tokens) are refused unless --allow-secrets.
    """
    from autoresearch.api import InitParams, init_session, render_init

    as_json = opts.pop("as_json")
    for key in ("secondary", "scope", "off_limits", "constraints"):
        opts[key] = _tuple(opts[key])
    if opts["direction"] is not None:
        opts["direction"] = Direction(opts["direction"])  # a value the option's choice admitted
    result = init_session(_start(ctx), InitParams(**opts))
    _out(as_json, result, render_init(result))


@click.command("run")
@click.option(
    "--timeout-seconds",
    type=float,
    default=600.0,
    show_default=True,
    help="Kill the benchmark after this many seconds (≤0: no limit).",
)
@click.option(
    "--checks-timeout-seconds",
    type=float,
    default=300.0,
    show_default=True,
    help="Kill autoresearch.checks.sh after this many seconds (≤0: no limit).",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Run the benchmark N times: the metric is the mean, every reading kept; from 2 on, "
    "after a baseline, each reading is paired with one of the kept commit.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def run(
    ctx: click.Context,
    timeout_seconds: float,
    checks_timeout_seconds: float,
    repeats: int,
    as_json: bool,
) -> None:
    """Run the benchmark once, or --repeats times (then the checks); the result waits for
    `exp log`."""
    from autoresearch.api import RunParams, render_run, run_experiment

    params = RunParams(timeout_seconds, checks_timeout_seconds, repeats)
    cancel = threading.Event()
    with first_signal_stops(lambda _name: cancel.set()):
        report = run_experiment(
            _start(ctx), params, on_progress=_progress_printer(), should_cancel=cancel.is_set
        )
    if sys.stderr.isatty():
        click.echo("\r\033[K", err=True, nl=False)
    _out(as_json, report, render_run(report))
    if report.status == ProcessState.CANCELLED:
        sys.exit(EXIT_CANCELLED)
    if report.status != ProcessState.PASS or (
        report.checks is not None and not report.checks.passed
    ):
        sys.exit(EXIT_RECORDED_FAILURE)


def _progress_printer() -> Any:
    """A live line on a terminal; otherwise a heartbeat every 30 s (agents read the output)."""
    tty = sys.stderr.isatty()
    last = [time.monotonic()]

    def show(elapsed: float, line: str) -> None:
        if tty:
            click.echo(f"\r\033[K[{elapsed:5.0f}s] {line[:100]}", err=True, nl=False)
        elif time.monotonic() - last[0] >= HEARTBEAT_SECONDS:
            last[0] = time.monotonic()
            click.echo(f"[{elapsed:.0f}s] still running: {line[:100]}", err=True)

    return show


@click.command("log")
@click.option(
    "--status",
    type=enum_choice(Verdict),
    help="The verdict on the pending run (with --description).",
)
@click.option("--description", "-d", help="One line: what this run tried (with --status).")
@click.option("--metric", type=float, help="Primary value (default: the parsed one).")
@click.option("--metrics", help="Secondary metrics as a JSON object, e.g. '{\"mem_mb\": 12}'.")
@click.option("--asi", help='Free JSON object, e.g. \'{"hypothesis": "…"}\'.')
@click.option("--justification", help="Why the scope deviations of this run are fine.")
@click.option(
    "--flag",
    "flags",
    multiple=True,
    metavar="RUN:REASON",
    help="Exclude logged run RUN from baseline, best and confidence (repeatable).",
)
@click.option(
    "--justify",
    multiple=True,
    metavar="RUN:REASON",
    help="Justify the scope deviations of kept run RUN (repeatable).",
)
@click.option("--force", is_flag=True, help="Accept a changed set of secondary metrics.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def log(ctx: click.Context, /, **opts: Any) -> None:
    """Record keep / discard / crash / checks_failed for the pending run.

    With only --flag / --justify (no --status, no --description) it flags or justifies logged
    runs and needs no pending run.
    """
    from autoresearch.api import (
        LogParams,
        annotate_runs,
        log_experiment,
        render_log,
        render_run_notes,
    )

    flags = tuple(_run_note("--flag", v) for v in opts["flags"])
    justify = tuple(_run_note("--justify", v) for v in opts["justify"])
    if opts["status"] is None and opts["description"] is None:
        result = annotate_runs(_start(ctx), flags, justify)
        _out(opts["as_json"], result, render_run_notes(result))
        return
    if opts["status"] is None or opts["description"] is None:
        raise click.UsageError("--status and --description go together (the pending run's log)")
    params = LogParams(
        status=Verdict(opts["status"]),  # a value the option's choice admitted
        description=opts["description"],
        metric=opts["metric"],
        metrics=_json_object("--metrics", opts["metrics"]),
        asi=_json_object("--asi", opts["asi"]),
        justification=opts["justification"],
        flag_runs=flags,
        justify_runs=justify,
        force=opts["force"],
    )
    report = log_experiment(_start(ctx), params)
    _out(opts["as_json"], report, render_log(report))


def _json_object(option: str, raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ContractError(f"{option} must be a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise ContractError(f"{option} must be a JSON object")
    return value


def _run_note(option: str, raw: str) -> Any:
    from autoresearch.api import RunNote

    number, sep, reason = raw.partition(":")
    if not sep or not number.strip().lstrip("#").isdigit():
        raise ContractError(f"{option} takes RUN:REASON (e.g. 3:noisy machine), not {raw!r}")
    return RunNote(int(number.strip().lstrip("#")), reason.strip())


@click.command("notes")
@click.option("--body", help="Replace the notes with this text.")
@click.option("--body-file", type=click.File("r"), help="Replace the notes with a file (- stdin).")
@click.option("--append-idea", help="Add `- <idea>` under ## Ideas.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def notes(
    ctx: click.Context, body: str | None, body_file: Any, append_idea: str | None, as_json: bool
) -> None:
    """Replace the session notes (a living playbook) and/or append an idea."""
    from autoresearch.api import render_notes, update_notes

    if body_file is not None:
        body = body_file.read()
    result = update_notes(_start(ctx), body=body, append_idea=append_idea)
    _out(as_json, result, render_notes(result))


@click.command("status")
@click.option(
    "--last",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="How many of the latest runs to list.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def status(ctx: click.Context, last: int, as_json: bool) -> None:
    """The session context: goal, numbers, last runs, deviations, notes, pending run."""
    from autoresearch.api import render_status, session_status

    report = session_status(_start(ctx), last=last)
    _out(as_json, report, render_status(report))


@click.command("resume-message")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def resume_message(ctx: click.Context, as_json: bool) -> None:
    """The status plus what to do next: the message that resumes an agent's loop."""
    from autoresearch.api import resume_message as build

    text = build(_start(ctx))
    if as_json:
        emit_json({"message": text})
    else:
        say(text)


@click.command("off")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def off(ctx: click.Context, as_json: bool) -> None:
    """Close the session (a pending run is abandoned; the branch keeps its commits)."""
    from autoresearch.api import close_session, render_close

    result = close_session(_start(ctx))
    _out(as_json, result, render_close(result))


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """Every session of the repository, open and closed, newest first."""
    from autoresearch.api import list_sessions, render_sessions

    found = list_sessions(_start(ctx))
    _out(as_json, found, render_sessions(found))


@click.command("reopen")
@click.argument("session_id", type=click.IntRange(min=1), metavar="SESSION_ID")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def reopen(ctx: click.Context, session_id: int, as_json: bool) -> None:
    """Open closed session SESSION_ID again on its branch (see `exp list`).

    Its runs, notes and numbers stay. If commits were made on the branch since it was closed,
    a new segment starts at the branch's head (nothing is reset away); a removed session
    worktree is added again.
    """
    from autoresearch.api import render_reopen, reopen_session

    result = reopen_session(_start(ctx), session_id)
    _out(as_json, result, render_reopen(result))


@click.command("report")
@click.option("--session", "session_id", type=int, help="Session id (default: this branch's).")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for report.html and progress.png (default: the session's report/).",
)
@click.option("--open", "open_it", is_flag=True, help="Open the report in a browser.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def report(
    ctx: click.Context, session_id: int | None, out: Path | None, open_it: bool, as_json: bool
) -> None:
    """Write the session's report: progress.png and a self-contained report.html."""
    from autoresearch.api import build_session_report
    from autoresearch.cli.report_cmds import show

    show(build_session_report(_start(ctx), session_id, out), as_json, open_it)
