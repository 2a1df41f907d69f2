"""A delegation job's agent and checks run in the OS sandbox, as a run's do (README: Security):
by default where Bubblewrap runs, `--sandbox none` turns it off, `auto` without bwrap warns
once and runs unconfined, an explicit `bwrap` there is refused before the job is queued."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from worker_helpers import job_repo

from autoresearch.confine import machine_support
from helpers import Repo, cli

BWRAP = machine_support()
needs_bwrap = pytest.mark.skipif(BWRAP.bwrap is None, reason=f"no Bubblewrap: {BWRAP.reason}")
KEY = "planted-private-key"
# What the job's agent (`agent`) and its check (`check`) can read of the user's key and of the
# journal, noted in the job's folder; the agent also makes the job's change.
HOSTILE = """\
echo "$1 key:$(cat "$HOME/.ssh/id_rsa" 2>/dev/null)" >> seen.txt
echo "$1 journal:$(head -c 15 .autoresearch/journal.sqlite3 2>/dev/null)" >> seen.txt
[ "$1" = agent ] && echo "VALUE = 2" > src/app.py
true
"""


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = job_repo(tmp_path / "repo")
    repo.write("scripts/hostile.sh", HOSTILE)
    repo.commit("hostile scripts")
    key = Path(os.environ["HOME"], ".ssh", "id_rsa")
    key.parent.mkdir(parents=True)
    key.write_text(KEY)
    return repo


def _job(repo: Repo, *options: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """Run a hostile job to its end: (what its agent and check saw, the start's stderr)."""
    done = cli("job", "start", "Set VALUE to 2.", "--json", "--agent",
               "cmd:sh scripts/hostile.sh agent", "--check", "sh scripts/hostile.sh check",
               *options, cwd=repo.root, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    job_id = json.loads(done.stdout)["job_id"]
    waited = cli("job", "wait", job_id, "--json", cwd=repo.root)
    assert json.loads(waited.stdout)["state"] != "failed", waited.stdout
    return (repo.root / "seen.txt").read_text(), done.stderr


@needs_bwrap
@pytest.mark.parametrize("options", [(), ("--sandbox", "bwrap"), ("--sandbox", "auto")])
def test_a_jobs_agent_and_checks_reach_no_key_and_no_journal_in_the_sandbox(
    repo: Repo, options: tuple[str, ...]
) -> None:
    seen, _ = _job(repo, *options)
    assert seen.split("\n") == ["agent key:", "agent journal:", "check key:", "check journal:", ""]
    assert (repo.root / "src/app.py").read_text() == "VALUE = 2\n"  # the job's work is done


def test_without_the_sandbox_a_job_reaches_them(repo: Repo) -> None:
    seen, _ = _job(repo, "--sandbox", "none")
    assert f"agent key:{KEY}" in seen and f"check key:{KEY}" in seen
    assert "agent journal:SQLite format" in seen


def _no_bwrap_path(tmp_path: Path) -> str:
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir()
    for name in ("sh", "git", "cat", "head", "true"):
        (folder / name).symlink_to(shutil.which(name) or name)
    (folder / "python3").symlink_to(sys.executable)
    return str(folder)


def test_auto_without_bwrap_warns_once_and_an_explicit_bwrap_is_refused(
    repo: Repo, tmp_path: Path
) -> None:
    env = {"PATH": _no_bwrap_path(tmp_path)}
    seen, stderr = _job(repo, env=env)
    assert f"agent key:{KEY}" in seen
    assert stderr.count("no OS sandbox: bwrap is not installed") == 1
    done = cli("job", "start", "Set VALUE to 2.", "--agent", "cmd:true", "--sandbox", "bwrap",
               cwd=repo.root, env=env)  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "autoresearch: --sandbox bwrap is not possible here: bwrap is not installed "
        "(Debian: apt-get install bubblewrap) (use --sandbox auto or none)"
    ]
    listed = cli("job", "list", "--json", cwd=repo.root)
    assert len(json.loads(listed.stdout)["jobs"]) == 1  # the refused one was never queued
