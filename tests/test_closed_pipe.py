"""A reader that leaves early (`autoresearch status | head -1`) is not a crash: the command stops
quietly with 141, the code a shell reports for a writer ended by SIGPIPE – no line, no
traceback, no crash log. Real subprocesses writing into a real pipe whose reader has closed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autoresearch.crash import EXIT_CLOSED_PIPE, output_closed
from helpers import Repo, cli, sandbox_text

# Far more than a pipe holds (64 KiB on Linux): the command is still writing when its reader
# leaves, whatever the scheduling.
LONG_BODY = "Only edit value.txt and mode.txt. " * 10_000


def _into_closed_pipe(
    args: list[str], cwd: Path, tmp: Path, read: int
) -> subprocess.CompletedProcess[str]:
    """Run the CLI with stdout into a pipe whose reader takes `read` bytes (0: none, the reader
    is gone before the command starts), then closes its end; stderr is captured."""
    reader, writer = os.pipe()
    if not read:
        os.close(reader)
    # Without PYTHONUNBUFFERED, as users run it: an unbuffered stdout (TextIOWrapper straight
    # over FileIO) drops the rest of a short write silently instead of raising.
    env = {**os.environ, "TMPDIR": str(tmp)}
    env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", *args],
        cwd=cwd, env=env, stdout=writer, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(writer)
    if read:
        got = os.read(reader, read)
        assert got, "the command wrote nothing"
        os.close(reader)
    _, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


def _no_crash_log(repo: Repo, tmp: Path) -> None:
    assert not (repo.root / ".autoresearch/crash").exists()
    assert not (tmp / f"autoresearch-crash-{os.getuid()}").exists()


@pytest.fixture
def long_mission(repo: Repo) -> Repo:
    repo.mission(sandbox=sandbox_text(body=LONG_BODY))
    return repo


def test_a_reader_that_leaves_mid_output_ends_the_command_quietly(
    long_mission: Repo, tmp_path: Path
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = _into_closed_pipe(["check", "missions/demo", "--json"], long_mission.root, tmp, 100)
    assert done.returncode == EXIT_CLOSED_PIPE == 141, done.stderr
    assert done.stderr == ""
    _no_crash_log(long_mission, tmp)


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],  # click's own output, before any command runs
        ["--version"],
        ["status", "--help"],
        ["status"],
        ["status", "--json"],
        ["check", "missions/demo"],
        ["exp", "--help"],
    ],
)
def test_every_command_into_a_closed_pipe_ends_quietly(
    long_mission: Repo, tmp_path: Path, args: list[str]
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = _into_closed_pipe(args, long_mission.root, tmp, 0)
    assert done.returncode == EXIT_CLOSED_PIPE, done.stderr
    assert done.stderr == ""
    _no_crash_log(long_mission, tmp)


def test_only_our_own_closed_output_is_a_closed_pipe() -> None:
    """A broken pipe to something else (a child's stdin) stays a crash; so does any other
    error while our output is closed."""
    reader, writer = os.pipe()
    try:
        assert not output_closed(BrokenPipeError(), (writer,))
        os.close(reader)
        reader = -1
        assert output_closed(BrokenPipeError(), (writer,))
        assert not output_closed(RuntimeError(), (writer,))
        # the MCP server's tasks raise a group: quiet only when all it holds are broken pipes
        nested = ExceptionGroup("inner", [BrokenPipeError()])
        assert output_closed(ExceptionGroup("tasks", [BrokenPipeError(), nested]), (writer,))
        mixed = ExceptionGroup("tasks", [BrokenPipeError(), RuntimeError("a bug")])
        assert not output_closed(mixed, (writer,))
    finally:
        os.close(writer)
        if reader >= 0:
            os.close(reader)


def test_a_run_whose_reader_leaves_stops_cleanly_and_resumes(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """`autoresearch run … 2>&1 | head -3`: rich's own answer to the closed stderr was exit 1
    from wherever the loop printed, the run left behind as if it had failed. Now the loop
    stops as a first SIGTERM stops it, quietly, with 141; the run resumes to its end."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    agent = f"cmd:{sys.executable} {Path(__file__).parent / 'agents/fakes/cmd_agent.py'}"
    reader, writer = os.pipe()
    env = {**os.environ, "TMPDIR": str(tmp), "FAKE_PLAN": "improve,improve,improve,improve"}
    env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", agent,
         "--run-tag", "T1", "--max-iterations", "4"],
        cwd=repo.root, env=env, stdout=writer, stderr=writer,
    )  # fmt: skip
    os.close(writer)
    seen = b""
    while b"    1  " not in seen:  # the first iteration's line: then the reader leaves
        chunk = os.read(reader, 4096)
        assert chunk, seen
        seen += chunk
    os.close(reader)
    assert proc.wait(timeout=120) == EXIT_CLOSED_PIPE
    _no_crash_log(repo, tmp)
    run = json.loads(cli("status", "missions-demo-t1", "--json", cwd=repo.root).stdout)
    assert run["status"] == "running" and run["driver_alive"] is False
    assert 1 <= run["iteration"] < 4
    resumed = cli(
        "resume", "missions-demo-t1", "--json", cwd=repo.root, env={"FAKE_PLAN": "improve"}
    )
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(cli("status", "missions-demo-t1", "--json", cwd=repo.root).stdout)
    assert (final["status"], final["iteration"]) == ("completed", 4)
