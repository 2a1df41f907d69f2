"""`autoresearch exp`: the group of the in-agent experiment session commands.

A module of its own, every command of it imported when it runs: a host runs `exp hook stop`
after every turn of its agent, which needs this group and cli/hook_cmds.py, not the session
commands of cli/exp_cmds.py and the core names their options bring (issue 36:
tests/test_import_graph.py). The summaries are each command's first paragraph, as `exp --help`
lists it (tests/test_help.py holds them to the commands).
"""

from __future__ import annotations

import click

from autoresearch.cli.lazy import LazyCommand, LazyGroup

_SESSION = "autoresearch.cli.exp_cmds"
_HOOKS = "autoresearch.cli.hook_cmds"

COMMANDS = {
    "hook": LazyCommand(
        _HOOKS,
        "hook",
        "Answer a Claude Code or Codex hook (JSON on stdin; both speak the same protocol): "
        "`stop` resumes the experiment loop after a turn that logged an experiment; "
        "`session-start` adds the session summary after a compaction.",
    ),
    "hooks": LazyCommand(
        _HOOKS, "hooks", "Install or remove the host hooks that keep an experiment session going."
    ),
    "init": LazyCommand(
        _SESSION, "init", "Start a session on an autoresearch/* branch, or update the active one."
    ),
    "list": LazyCommand(
        _SESSION, "list_cmd", "Every session of the repository, open and closed, newest first."
    ),
    "log": LazyCommand(
        _SESSION, "log", "Record keep / discard / crash / checks_failed for the pending run."
    ),
    "notes": LazyCommand(
        _SESSION, "notes", "Replace the session notes (a living playbook) and/or append an idea."
    ),
    "off": LazyCommand(
        _SESSION,
        "off",
        "Close the session (a pending run is abandoned; the branch keeps its commits).",
    ),
    "reopen": LazyCommand(
        _SESSION, "reopen", "Open closed session SESSION_ID again on its branch (see `exp list`)."
    ),
    "report": LazyCommand(
        _SESSION,
        "report",
        "Write the session's report: progress.png and a self-contained report.html.",
    ),
    "resume-message": LazyCommand(
        _SESSION,
        "resume_message",
        "The status plus what to do next: the message that resumes an agent's loop.",
    ),
    "run": LazyCommand(
        _SESSION,
        "run",
        "Run the benchmark once, or --repeats times (then the checks); the result waits for "
        "`exp log`.",
    ),
    "status": LazyCommand(
        _SESSION,
        "status",
        "The session context: goal, numbers, last runs, deviations, notes, pending run.",
    ),
}


@click.group(cls=LazyGroup, lazy=COMMANDS)
def exp() -> None:
    """Experiment sessions: tools a long-lived agent calls itself.

    Phase 1: write autoresearch.sh (exit 0, prints METRIC name=value lines, deterministic,
    no network) and optionally autoresearch.checks.sh. Phase 2: `exp init` once, then repeat
    edit → `exp run` → `exp log`. `exp status` shows the context at the start of every turn.
    """
