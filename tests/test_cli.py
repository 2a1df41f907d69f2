"""The command line as users see it: --json objects, one-line errors, exit codes 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoresearch.paths import session_paths
from helpers import Repo, artifact, cli, git, write_artifact

RUN_ID = "missions-demo-t1"


def test_check_json_and_human(repo: Repo, mission_dir: Path) -> None:
    done = cli("check", "missions/demo", "--json", cwd=repo.root)
    assert done.returncode == 0 and done.stderr == ""
    data = json.loads(done.stdout)
    assert data["mission_dir"] == str(mission_dir)
    assert data["repo_root"] == str(repo.root)
    assert data["mission_relative_dir"] == "missions/demo"
    assert data["mission_slug"] == "missions-demo"
    assert data["evaluator"]["command"] == "python3 scripts/eval.py"
    assert data["evaluator"]["keep_policy"] == "score_improvement"
    assert data["body"] == "Only edit value.txt and mode.txt."
    human = cli("check", "missions/demo", cwd=repo.root)
    assert "ok: the mission is valid" in human.stdout


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "mission-dir does not exist: {path}"),
        ("no-git", "mission-dir must be inside a git repository."),
        ("no-mission", "mission.md is required inside mission-dir: {path}/mission.md"),
        ("no-sandbox", "sandbox.md is required inside mission-dir: {path}/sandbox.md"),
        ("bad-sandbox", "sandbox.md frontmatter evaluator.command is required."),
    ],
)
def test_check_errors_are_one_line_exit_2(
    tmp_path: Path, repo: Repo, setup: str, message: str
) -> None:
    path = repo.root / "missions/x"
    if setup == "no-git":
        path = tmp_path / "outside"
    if setup != "missing":
        path.mkdir(parents=True)
    if setup in ("no-sandbox", "bad-sandbox", "no-git"):
        (path / "mission.md").write_text("m")
    if setup == "bad-sandbox":
        (path / "sandbox.md").write_text("---\nevaluator:\n  format: json\n---\n")
    done = cli("check", str(path), cwd=repo.root)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"autoresearch: {message.format(path=path)}\n"
    assert "Traceback" not in done.stderr


def test_realpath_comparison_through_a_symlink(
    tmp_path: Path, repo: Repo, mission_dir: Path
) -> None:
    link = tmp_path / "link-to-repo"
    link.symlink_to(repo.root)
    done = cli("check", str(link / "missions/demo"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["mission_dir"] == str(mission_dir)
    assert data["mission_relative_dir"] == "missions/demo"


def test_repo_that_does_not_exist_is_named_not_blamed_on_git(tmp_path: Path) -> None:
    # A missing --repo folder used to read "command not found: git": git was there, the
    # working directory was not (subprocess raises the same FileNotFoundError for both).
    missing = tmp_path / "no-such-repo"
    done = cli("--repo", str(missing), "status", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "command not found" not in done.stderr
    assert f"working directory does not exist: {missing}" in done.stderr


def test_prepare_step_status_stop_cycle(repo: Repo, mission_dir: Path) -> None:
    done = cli("prepare", "missions/demo", "--run-tag", "T1", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout)
    assert manifest["run_id"] == RUN_ID and manifest["last_kept_score"] == 1.0
    worktree = Path(manifest["worktree_path"])

    (worktree / "value.txt").write_text("4\n")
    git(worktree, "commit", "-qam", "four")
    write_artifact(
        Path(manifest["candidate_file"]),
        artifact(
            candidate_commit=git(worktree, "rev-parse", "HEAD"),
            base_commit=manifest["last_kept_commit"],
            description="four",
        ),
    )
    done = cli("step", RUN_ID, "--json", cwd=worktree)  # works from inside the worktree too
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    keys = {
        "run_id", "iteration", "decision", "decision_reason", "keep", "notes", "evaluator",
        "run_status", "stop_reason", "last_kept_commit", "last_kept_score",
    }  # fmt: skip
    assert set(result) >= keys
    assert (result["decision"], result["keep"], result["last_kept_score"]) == ("keep", True, 4)

    listing = json.loads(cli("status", "--json", cwd=repo.root).stdout)
    assert [r["run_id"] for r in listing["runs"]] == [RUN_ID]
    assert listing["runs"][0]["counts"] == {"keep": 1}
    human = cli("status", RUN_ID, cwd=repo.root)
    assert "keep" in human.stdout and "four" in human.stdout

    done = cli("stop", cwd=repo.root)
    assert done.returncode == 0 and "stopped (operator stop)" in done.stdout
    refused = cli("step", RUN_ID, cwd=repo.root)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"autoresearch: autoresearch_run_terminal:{RUN_ID}:stopped – the run is stopped and is "
        f"not processed again; to give it more iterations: autoresearch continue {RUN_ID} "
        "--max-iterations +N\n"
    )


def test_step_by_hand_on_the_placeholder_says_no_session_wrote_it(
    repo: Repo, mission_dir: Path
) -> None:
    # before, each such `step` recorded a noop, as if a session had had no idea
    assert cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root).returncode == 0
    candidate = repo.root / f".autoresearch/runs/{RUN_ID}/candidate.json"
    for _ in range(2):
        done = cli("step", RUN_ID, cwd=repo.root)
        assert (done.returncode, done.stderr) == (
            2,
            f"autoresearch: no session has written {candidate} since the last step (it is "
            "still the placeholder): run the agent session first, or write the artifact "
            'yourself (`"status": "noop"` records a noop)\n',
        )
    assert [
        it["decision"]
        for it in json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)["iterations"]
    ] == ["baseline"]


def test_step_that_fails_the_run_exits_1(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root).returncode == 0
    candidate = repo.root / f".autoresearch/runs/{RUN_ID}/candidate.json"
    write_artifact(candidate, "{broken")
    done = cli("step", RUN_ID, "--json", cwd=repo.root)
    assert done.returncode == 1
    assert json.loads(done.stdout)["decision"] == "error"
    assert done.stderr.strip() == (
        "autoresearch: run failed: autoresearch candidate artifact must be valid JSON"
    )


def test_prepare_warns_loudly_without_a_comparable_baseline(repo: Repo) -> None:
    repo.write("mode.txt", "noscore\n")
    repo.mission()
    done = cli("prepare", "missions/demo", "--run-tag", "T1", "--json", cwd=repo.root)
    assert done.returncode == 0
    assert json.loads(done.stdout)["last_kept_score"] is None
    assert "WARNING: the baseline has no comparable score" in done.stderr
    assert f"autoresearch rebaseline {RUN_ID}" in done.stderr


def test_unknown_run_and_outside_repo(tmp_path: Path, repo: Repo) -> None:
    done = cli("status", "nope", cwd=repo.root)
    assert (done.returncode, done.stderr) == (2, "autoresearch: unknown run: nope\n")
    done = cli("status", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("autoresearch: not inside a git")
    done = cli("--repo", str(repo.root), "status", "--json", cwd=tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout)["runs"] == []


def test_help_lists_the_commands() -> None:
    done = cli("--help", cwd=Path.cwd())
    for command in ("check", "prepare", "step", "run", "resume", "stop", "status", "exp", "demo"):
        assert f"  {command} " in done.stdout


def test_corrupt_journal_is_a_clear_error_and_untouched(repo: Repo, mission_dir: Path) -> None:
    journal = repo.root / ".autoresearch/journal.sqlite3"
    journal.parent.mkdir()
    journal.write_bytes(b"this is not a database" * 100)
    before = journal.read_bytes()
    done = cli("prepare", "missions/demo", cwd=repo.root)
    assert done.returncode == 2
    assert "is not a valid SQLite database" in done.stderr and "Traceback" not in done.stderr
    assert cli("status", cwd=repo.root).returncode == 2
    assert journal.read_bytes() == before
    assert not (repo.root / ".autoresearch/worktrees").exists()


def test_an_unexpected_error_exits_3_with_one_line_and_a_crash_log(repo: Repo) -> None:
    repo.write("autoresearch.sh", "#!/bin/bash\necho METRIC score=1\n")
    assert cli("exp", "init", "--name", "n", "--metric", "score", cwd=repo.root).returncode == 0
    # The run's log taken by a folder: writing it fails with an OSError the engine does not
    # name, as a broken disk would.
    session_paths(repo.root, 1).run_log(1).mkdir(parents=True)
    done = cli("exp", "run", cwd=repo.root)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("autoresearch: internal error (IsADirectoryError: "), lines
    log = Path(lines[0].rsplit("(details in ", 1)[1].rstrip(")"))
    assert log.parent == repo.root / ".autoresearch" / "crash"
    text = log.read_text()
    from autoresearch import __version__

    assert __version__ in text and "command: autoresearch exp run" in text
    assert "Traceback" in text and "run-0001.log" in text


def test_expected_errors_keep_their_exit_codes(tmp_path: Path) -> None:
    done = cli("status", "--bogus", cwd=tmp_path)
    assert done.returncode == 2 and "No such option" in done.stderr
