"""init: the harness gate, branch binding, the harness-setup commit, re-init, segments, worktrees."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from exp_helpers import init, log, run

from autoresearch import git as g
from autoresearch.clock import today_compact
from autoresearch.errors import NotFoundError, RefusedError
from autoresearch.experiments import InitParams, init_session, session_status
from helpers import Repo, cli


def branch_name(slug: str = "speed-up") -> str:
    return f"autoresearch/{slug}-{today_compact()}"


def test_init_without_harness_explains_phase_1(repo: Repo) -> None:
    (repo.root / "autoresearch.sh").unlink()
    with pytest.raises(RefusedError) as err:
        init(repo.root)
    message = err.value.message
    assert "autoresearch.sh is missing" in message and "Phase 1" in message
    for words in ("exits 0", "METRIC <name>=<value>", "deterministic", "no network"):
        assert words in message
    assert "\n" not in message
    assert repo.git("branch", "--show-current") == "main"


def test_init_in_a_repository_without_commits_says_so_in_one_line(tmp_path: Path) -> None:
    # git's own 'Needed a single revision' after a raw rev-parse was all a user got
    root = tmp_path / "fresh"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "autoresearch.sh").write_text("#!/bin/sh\necho METRIC m=1\n")
    done = cli("exp", "init", "--name", "x", "--metric", "m", cwd=root)
    assert done.returncode == 2
    assert done.stderr == (
        f"autoresearch: the repository has no commits yet: commit your project in {root} "
        "first (git add -A && git commit -m 'initial')\n"
    )


def test_init_creates_the_branch_and_commits_the_harness(repo: Repo) -> None:
    repo.write("value.txt", "99\n")  # a tracked file dirty at init
    result = init(repo.root, goal="faster", scope=("value.txt",), max_iterations=5)
    assert result.created and result.created_branch
    assert result.branch == branch_name()
    assert repo.git("branch", "--show-current") == branch_name()
    assert repo.git("log", "-1", "--format=%s") == "autoresearch: harness setup"
    assert repo.git("log", "-1", "--format=%an") == "autoresearch"
    assert set(repo.git("show", "--name-only", "--format=", "HEAD").split()) == {
        "autoresearch.sh",
        "value.txt",
    }
    assert repo.git("status", "--porcelain") == ""  # the journal is never part of the work
    assert result.setup_commit == repo.git("rev-parse", "HEAD")
    s = result.to_dict()["session"]
    assert (s["goal"], s["direction"], s["command"], s["max_iterations"]) == (
        "faster",
        "lower",
        "bash autoresearch.sh",
        5,
    )
    assert s["baseline_commit"] == s["kept_commit"] == result.setup_commit
    assert result.to_dict()["session"]["scope"] == ["value.txt"]


def test_branch_name_clashes_get_a_suffix(repo: Repo) -> None:
    repo.git("branch", branch_name())
    repo.git("branch", branch_name() + "-2")
    assert init(repo.root).branch == branch_name() + "-3"


def test_slug_falls_back_to_the_goal(repo: Repo) -> None:
    assert init(repo.root, name="!!!", goal="Reduce p99 latency").branch == branch_name(
        "reduce-p99-latency"
    )


def test_an_autoresearch_branch_is_used_as_it_is(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "autoresearch/mine")
    result = init(repo.root)
    assert (result.branch, result.created_branch) == ("autoresearch/mine", False)
    assert repo.git("log", "-1", "--format=%s") == "autoresearch: harness setup"


def test_clean_tree_means_no_setup_commit(repo: Repo) -> None:
    repo.commit("harness")
    head = repo.git("rev-parse", "HEAD")
    result = init(repo.root)
    assert result.setup_commit is None
    assert result.session.baseline_commit == head


def test_reinit_keeps_omitted_fields_and_abandons_the_pending_run(repo: Repo) -> None:
    init(repo.root, goal="g1", secondary=("mem",), scope=("src",), max_iterations=9, unit="ms")
    run(repo.root)
    again = init_session(repo.root, InitParams(goal="g2", max_iterations=0))
    assert not again.created
    assert again.updated == ("goal", "max_iterations")
    assert again.abandoned_run == 1
    assert "abandoned run #1 (completed, never logged)" in again.messages
    s = again.to_dict()["session"]
    assert (s["name"], s["metric"], s["unit"], s["goal"]) == ("speed up", "score", "ms", "g2")
    assert (s["secondary"], s["scope"], s["max_iterations"]) == (["mem"], ["src"], None)
    assert session_status(repo.root).pending is None
    nothing = init_session(repo.root, InitParams())
    assert nothing.updated == () and nothing.abandoned_run is None


def test_new_segment_starts_a_new_baseline_and_new_counts(session: Repo) -> None:
    run(session.root)
    log(session.root, "keep", "baseline")
    session.write("value.txt", "90\n")
    run(session.root)
    log(session.root, "keep", "better")
    session.write("autoresearch.sh", (session.root / "autoresearch.sh").read_text() + "# v2\n")
    result = init_session(session.root, InitParams(new_segment=True))
    assert result.segment == 2 and result.new_segment
    assert result.setup_commit == session.git("rev-parse", "HEAD")
    assert result.session.baseline_commit == result.setup_commit
    status = session_status(session.root)
    assert status.segment == 2
    assert status.progress.logged == 0
    assert status.baseline is None and status.best is None
    assert [h.segment for h in status.history] == [1, 1]  # history still shows segment 1
    run(session.root)
    report = log(session.root, "keep", "segment 2 baseline")
    assert report.baseline is not None and report.baseline.metric == 90.0


def test_worktree_session_leaves_the_main_checkout_alone(repo: Repo, tmp_path: Path) -> None:
    (repo.root / ".venv").mkdir()
    result = init(repo.root, worktree=True)
    wt = Path(result.directory)
    assert result.worktree == str(wt)
    assert wt.parent == repo.root / ".autoresearch" / "worktrees"
    assert any(f"cd {wt}" in m for m in result.messages)
    # the main checkout: same branch, the harness still dirty there, nothing committed
    assert repo.git("branch", "--show-current") == "main"
    assert "autoresearch.sh" in repo.git("status", "--porcelain")
    # the worktree: the session branch with the harness committed, the venv linked
    assert g.current_branch(wt) == result.branch
    assert g.commit_message(wt, "HEAD") == "autoresearch: harness setup"
    assert (wt / ".venv").is_symlink()
    assert g.status(wt) == []
    # the session is seen from the worktree only; the main checkout is told where it lives
    report = run(wt)
    assert report.metric == 100.0
    with pytest.raises(
        NotFoundError, match=f"lives on branch {result.branch} in the worktree {wt}"
    ):
        session_status(repo.root)
    log(wt, "keep", "baseline")
    assert session_status(wt).baseline is not None


def test_worktree_option_cannot_move_an_active_session(session: Repo) -> None:
    with pytest.raises(RefusedError, match="already has the active session"):
        init(session.root, worktree=True)
