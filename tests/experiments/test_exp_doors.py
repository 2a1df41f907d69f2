"""Each front door names its own verbs; flag and justify need no pending run."""

from __future__ import annotations

import json

import pytest
from exp_helpers import cycle, init, run

from autoresearch.experiments import RunNote, annotate_runs, session_status
from autoresearch.experiments.report import render_resume, render_status
from autoresearch.experiments.verbs import Door
from helpers import Repo, cli

MCP_TOOLS = ("init_experiment", "run_experiment", "log_experiment", "experiment_status",
             "update_notes", "justify_runs", "flag_runs", "new_segment")  # fmt: skip


def kept_with_deviations(repo: Repo) -> None:
    """Run #1 the baseline, run #2 kept with a change outside the scope."""
    init(repo.root, scope=("value.txt",), max_iterations=3)
    cycle(repo, "100", "keep", "baseline")
    repo.write("value.txt", "90\n")
    repo.write("README.md", "outside the scope\n")
    run(repo.root)


def test_the_cli_names_cli_commands_and_the_mcp_names_tools(repo: Repo) -> None:
    kept_with_deviations(repo)
    keep = cli("exp", "log", "--status", "keep", "-d", "sneaky", cwd=repo.root)
    assert keep.returncode == 0, keep.stderr
    assert "justify it (`autoresearch exp log --justify 2:REASON`)" in keep.stdout
    cycle(repo, "95", "discard", "meh")  # the third and last run
    texts = {
        "keep": keep.stdout,
        "no pending": cli("exp", "log", "--status", "keep", "-d", "x", cwd=repo.root).stderr,
        "max reached": cli("exp", "run", cwd=repo.root).stderr,
        "status": cli("exp", "status", cwd=repo.root).stdout,
        "resume": cli("exp", "resume-message", cwd=repo.root).stdout,
    }
    assert texts["no pending"] == (
        "autoresearch: no pending run available. Run `autoresearch exp run` first.\n"
    )
    assert "start a new segment (`autoresearch exp init --new-segment`)" in texts["max reached"]
    assert "`autoresearch exp log --justify 2:REASON`" in texts["status"]
    for name, text in texts.items():
        assert not [tool for tool in MCP_TOOLS if tool in text], (name, text)

    report = session_status(repo.root, door=Door.MCP)
    for text in (render_status(report, Door.MCP), render_resume(report, Door.MCP)):
        assert "log_experiment with justify_runs" in text
        assert "autoresearch exp" not in text
    cli_text = render_resume(session_status(repo.root), Door.CLI)
    assert "`autoresearch exp run`" in cli_text and "run_experiment" not in cli_text


def test_justify_and_flag_need_no_pending_run(repo: Repo) -> None:
    kept_with_deviations(repo)
    cli("exp", "log", "--status", "keep", "-d", "sneaky", cwd=repo.root)
    assert [u.run for u in session_status(repo.root).unjustified] == [2]
    done = cli("exp", "log", "--justify", "2:the README documents it", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["justified"], out["unjustified"], out["flagged"]) == ([2], [], [])
    status = session_status(repo.root)
    assert status.unjustified == () and status.pending is None
    assert status.history[1].justification == "the README documents it"

    flagged = cli("exp", "log", "--flag", "2:warm cache", cwd=repo.root)
    assert flagged.returncode == 0 and "flagged run #2" in flagged.stdout
    assert session_status(repo.root).history[1].flagged


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--justify", "7:x"), "log: run #7 is not a logged run of this session"),
        (("--justify", "1: "), "log: run 1 needs a reason"),
        ((), "log: give a status and a description"),
        (("--status", "keep"), "--status and --description go together"),
    ],
)
def test_notes_without_a_run_are_checked(
    session: Repo, args: tuple[str, ...], message: str
) -> None:
    cycle(session, "100", "keep", "baseline")
    done = cli("exp", "log", *args, cwd=session.root)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_annotate_runs_refuses_a_pending_run_as_target(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    run(session.root)  # run #2 pending: not logged, so nothing to justify yet
    with pytest.raises(Exception, match="run #2 is not a logged run"):
        annotate_runs(session.root, justify_runs=(RunNote(2, "x"),))
