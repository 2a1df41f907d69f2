"""What the real-agent hook tests share: an experiment session with the host's hooks installed,
and what it logged."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import Repo, cli, make_repo

RESUME = "Continue the autoresearch loop now."
HARNESS = 'echo "METRIC score=$(cat value.txt)"\n'


def session_repo(root: Path, host: str, **init: str) -> Repo:
    """A session with a kept baseline and `exp hooks install --<host>`."""
    repo = make_repo(root / "repo", value="100")
    repo.write("autoresearch.sh", HARNESS)
    args = [f"--{k.replace('_', '-')}={v}" for k, v in init.items()]
    for argv in (
        ["exp", "init", "--name", "hooked", "--metric", "score", *args],
        ["exp", "run"],
        ["exp", "log", "--status", "keep", "-d", "baseline"],
        ["exp", "hooks", "install", f"--{host}"],
    ):
        done = cli(*argv, cwd=repo.root)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return repo


def logged(repo: Repo) -> list[dict]:
    status = json.loads(cli("exp", "status", "--json", "--last", "100", cwd=repo.root).stdout)
    return status["history"]


def hooks_log(repo: Repo) -> str:
    return (repo.root / ".autoresearch" / "hooks.log").read_text()


def assert_resumed_each_turn(repo: Repo, last_prompt: str, turns: int) -> None:
    """`turns` logged experiments, each followed by a resume; then one idle turn let stop;
    the hooks file in no kept commit."""
    from helpers import git

    assert [r["description"] for r in logged(repo)] == [
        "baseline",
        *(f"turn {k}" for k in range(turns)),
    ]
    log = hooks_log(repo)
    assert log.count("stop: continue") == turns, log
    assert log.count("stop: stop (nothing logged since the last resume)") == 1, log
    assert last_prompt.count(RESUME) == turns and f"(auto-resume {turns}/200" in last_prompt
    assert git(repo.root, "show", "--name-only", "--format=", "HEAD").split() == ["value.txt"]
