"""`autoresearch init`: a mission from a few answers (flags, or asked on a terminal), its
evaluator tried once; never an overwrite, never a mission `check` refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from autoresearch.contracts.sandbox import parse_sandbox
from autoresearch.scaffold import MissionAnswers, sandbox_text
from autoresearch.states import Direction, EvalFormat
from helpers import GIT_ENV, Repo, cli

FLAGS = ["--goal", "Bigger value", "--command", "python3 scripts/eval.py", "--direction",
         "higher", "--scope", "value.txt"]  # fmt: skip


@pytest.mark.parametrize(
    "command",
    ['python3 "$AUTORESEARCH_MISSION_DIR/b.py" --n 3', "sh -c 'echo a: b' # c", "make bench"],
)
def test_the_sandbox_written_is_the_contract_read_back(command: str) -> None:
    answers = MissionAnswers("g", command, "ms", Direction.LOWER, ("src/",), 30)
    evaluator = parse_sandbox(sandbox_text(answers)).evaluator
    assert (evaluator.command, evaluator.format, evaluator.metric) == (
        command,
        EvalFormat.METRIC,
        "ms",
    )
    assert (evaluator.direction, evaluator.timeout_seconds) == (Direction.LOWER, 30)


def test_init_from_flags_writes_the_mission_and_tries_it(repo: Repo) -> None:
    done = cli("init", *FLAGS, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    folder = repo.root / "missions/bigger-value"
    assert data["mission_dir"] == str(folder)
    assert data["try"]["ok"] is True and data["try"]["evaluation"]["score"] == 1
    assert "Edit only value.txt." in (folder / "sandbox.md").read_text()
    assert cli("check", "missions/bigger-value", cwd=repo.root).returncode == 0
    assert oct((folder / "mission.md").stat().st_mode & 0o777) != oct(0o600)  # the user's file


def test_init_names_the_missing_flags_without_a_terminal(repo: Repo) -> None:
    done = cli("init", "--goal", "x", cwd=repo.root)
    assert (done.returncode, done.stderr) == (
        2,
        "autoresearch: init needs --command, --direction (or a terminal to ask on)\n",
    )
    assert not (repo.root / "missions").exists()


def test_init_never_overwrites_a_mission(repo: Repo) -> None:
    repo.mission("missions/bigger-value", mission="mine\n")
    done = cli("init", *FLAGS, cwd=repo.root)
    assert done.returncode == 2
    assert "already exist: init never overwrites a mission" in done.stderr
    assert (repo.root / "missions/bigger-value/mission.md").read_text() == "mine\n"


def test_a_broken_evaluator_is_named_and_the_files_stay(repo: Repo) -> None:
    flags = ["--goal", "g", "--command", "python3 nope.py", "--metric", "ms", "--direction",
             "lower", "missions/g"]  # fmt: skip
    done = cli("init", *flags, cwd=repo.root)
    assert done.returncode == 2
    assert "problem:      the evaluator exited 2: " in done.stdout
    assert "fix what is named above, then: autoresearch check missions/g --try" in done.stdout
    assert (repo.root / "missions/g/sandbox.md").is_file()


def test_init_asks_on_a_terminal(repo: Repo) -> None:
    """The questions answered on a real pseudo-terminal, as a person types them."""
    main, side = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "init", "--no-try"],
        cwd=repo.root, env={**os.environ, **GIT_ENV}, stdin=side, stdout=side, stderr=side,
    )  # fmt: skip
    os.close(side)
    answers = iter(["Bigger value", "python3 scripts/eval.py", "", "higher"])
    seen, deadline = b"", time.monotonic() + 60
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                seen += os.read(main, 4096)
            except OSError:
                break
            if seen.endswith(b": "):  # click's prompt suffix: a question waits
                os.write(main, (next(answers, "") + "\n").encode())
                seen += b"\n"
    finally:
        os.close(main)
    assert proc.wait(timeout=30) == 0, seen.decode(errors="replace")
    sandbox = (repo.root / "missions/bigger-value/sandbox.md").read_text()
    assert '  command: "python3 scripts/eval.py"\n  format: json\n  direction: higher\n' in sandbox
