"""`exp init` says what the setup commit takes and refuses files that look like secrets."""

from __future__ import annotations

import json

import pytest

from autoresearch.secret_files import by_content, by_name
from helpers import Repo, cli

KEY = "sk-proj" + "a1B2c3D4e5F6g7H8i9J0"  # split: no secret-shaped literal in the source


@pytest.mark.parametrize(
    ("path", "secret"),
    [(".env", True), ("conf/.env.local", True), ("prod.env", True), (".env.example", False),
     ("deploy.pem", True), ("id_ed25519", True), ("id_ed25519.pub", False), (".netrc", True),
     ("credentials.json", True), ("keys.py", False), ("notes.md", False)],
)  # fmt: skip
def test_secret_file_names(path: str, secret: bool) -> None:
    assert (by_name(path) is not None) == secret


@pytest.mark.parametrize(
    ("text", "secret"),
    [(f"OPENAI_API_KEY={KEY}\n", True), (f"client = make({KEY!r})\n", True),
     ("export DB_PASSWORD=hunter2hunter\n", True), ('{"api_token": "abc123def456"}', True),
     ("-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n", True),
     ('api_key = os.environ["API_KEY"]\n', False), ("TOKEN=$CI_TOKEN_1234\n", False),
     ("DEBUG_TOKEN=1\n", False), ("password: changeme\n", False), ("lr = 0.01\n", False)],
)  # fmt: skip
def test_secret_contents(text: str, secret: bool) -> None:
    assert (by_content(text) is not None) == secret


def test_init_lists_what_it_commits_and_what_it_builds_on(repo: Repo) -> None:
    repo.write("data/config.ini", "seed = 3\n")
    done = cli("exp", "init", "--name", "n", "--metric", "score", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    head = repo.git("rev-parse", "--short=7", "HEAD~1")
    assert f"the session builds on {head} 'initial'" in done.stdout
    assert "autoresearch: harness setup' (" in done.stdout
    assert "): autoresearch.sh, data/config.ini" in done.stdout


@pytest.mark.parametrize("worktree", [False, True])
def test_init_refuses_likely_secrets_and_changes_nothing(repo: Repo, worktree: bool) -> None:
    repo.write(".env", f"OPENAI_API_KEY={KEY}\n")
    repo.write("conf/settings.yaml", "api_token: abc123def456\n")
    before = (repo.git("rev-parse", "HEAD"), repo.git("branch", "--list"))
    args = ["exp", "init", "--name", "n", "--metric", "score", *(["--worktree"] * worktree)]
    done = cli(*args, cwd=repo.root)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: init: refusing to commit likely secrets")
    assert ".env (a secrets file by its name)" in done.stderr
    assert "conf/settings.yaml (a value for api_token)" in done.stderr
    assert "`autoresearch exp init --allow-secrets`" in done.stderr and ".gitignore" in done.stderr
    assert (repo.git("rev-parse", "HEAD"), repo.git("branch", "--list")) == before
    assert "?? .env" in repo.git("status", "--porcelain")
    assert not (repo.root / ".autoresearch/worktrees").exists()

    allowed = cli(*args, "--allow-secrets", "--json", cwd=repo.root)
    assert allowed.returncode == 0, allowed.stderr
    assert {".env", "conf/settings.yaml"} <= set(json.loads(allowed.stdout)["setup_files"])


def test_an_ignored_secret_is_not_committed_and_not_refused(repo: Repo) -> None:
    repo.write(".gitignore", "__pycache__/\n.env\n")
    repo.write(".env", f"OPENAI_API_KEY={KEY}\n")
    done = cli("exp", "init", "--name", "n", "--metric", "score", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert ".env" not in json.loads(done.stdout)["setup_files"]
