"""prepare and run say which sandbox.md keys they ignore (a typo silently means the default)."""

from __future__ import annotations

import pytest

from helpers import Repo, cli, sandbox_text


@pytest.mark.parametrize(
    "args",
    [
        ["prepare", "missions/typo", "--run-tag", "u1"],
        ["run", "missions/typo", "--agent", "cmd:true", "--max-iterations", "1", "--run-tag", "u2"],
    ],
)
def test_unknown_keys_are_warned_about(repo: Repo, args: list[str]) -> None:
    repo.mission("missions/typo", sandbox=sandbox_text(extra="  timeout: 5\nnoize: {}\n"))
    done = cli(*args, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "is not a known key" in line]
    assert len(lines) == 2, done.stderr
    assert "evaluator.timeout is not a known key (did you mean timeout_seconds?)" in lines[0]
    assert "noize is not a known key (did you mean noise?)" in lines[1]
    assert all(line.startswith("autoresearch: warning:") for line in lines)


@pytest.mark.parametrize(
    "extra",
    [
        "sealed: [scripts/eval.py]\nchecks: 'true'\n",
        "sealed: []\nchecks: {command: 'true', timeout_seconds: 30}\n",
    ],
)
def test_every_documented_key_is_known_to_check_and_run(repo: Repo, extra: str) -> None:
    # `sealed` and `checks` once worked while `check` refused them as unknown and `run` said
    # they were ignored: the warning must come from the same table the parser reads.
    repo.mission("missions/full", sandbox=sandbox_text(extra=extra))
    done = cli("check", "missions/full", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not a known key" not in done.stdout + done.stderr
    done = cli("prepare", "missions/full", "--run-tag", "k1", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert "not a known key" not in done.stderr
