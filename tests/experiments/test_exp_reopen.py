"""Closed sessions: `exp list` shows them, `exp reopen` opens one again without losing work."""

from __future__ import annotations

import json
from pathlib import Path

from exp_helpers import cycle, init

from autoresearch import git
from helpers import NULL_OID, Repo, cli, killed_add


def exp(repo: Repo, *args: str, cwd: Path | None = None) -> dict:
    done = cli("exp", *args, "--json", cwd=cwd or repo.root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_list_and_reopen_a_closed_session(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    cycle(session, "90", "keep", "faster")
    exp(session, "off")
    listed = exp(session, "list")["sessions"]
    assert [(s["session_id"], s["state"], s["logged"], s["best"]) for s in listed] == [
        (1, "closed", 2, 90.0)
    ]
    text = cli("exp", "list", cwd=session.root).stdout
    assert "#1   closed" in text and "reopen a closed session: autoresearch exp reopen 1" in text
    closed = cli("exp", "status", cwd=session.root)  # closed: no active session
    assert closed.returncode == 2
    # the harness is there: the way on is reopen (or a new session), not 'write autoresearch.sh'
    branch = session.git("branch", "--show-current")
    assert closed.stderr == (
        f"autoresearch: no active experiment session on branch {branch}: session #1 'speed up' "
        "was closed; `autoresearch exp reopen 1` goes on with it, `autoresearch exp init --name "
        "<name> --metric <metric>` starts a new one\n"
    )

    reopened = exp(session, "reopen", "1")
    assert (reopened["segment"], reopened["new_segment"]) == (1, False)
    status = exp(session, "status")
    assert status["best"]["metric"] == 90.0 and status["progress"]["logged"] == 2
    assert exp(session, "list")["sessions"][0]["state"] == "active"
    cycle(session, "80", "keep", "even faster")  # the loop goes on where it stopped
    assert exp(session, "status")["progress"]["logged"] == 3


def test_reopen_after_commits_on_the_branch_starts_a_new_segment_and_resets_nothing(
    session: Repo,
) -> None:
    cycle(session, "100", "keep", "baseline")
    exp(session, "off")
    session.write("value.txt", "70\n")
    mine = session.commit("my own change after the session")
    reopened = exp(session, "reopen", "1")
    assert (reopened["segment"], reopened["new_segment"]) == (2, True)
    assert "started segment 2" in " ".join(reopened["messages"])
    session.write("value.txt", "75\n")
    cycle(session, "75", "keep", "new baseline")
    cycle(session, "99", "discard", "worse")  # the discard resets to the new baseline only
    assert session.git("merge-base", "--is-ancestor", mine, "HEAD") == ""


def test_reopen_refusals(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    for args, message in (
        (("reopen", "1"), "session #1 is not closed: nothing to reopen"),
        (("reopen", "9"), "no session #9 in this repository (list them: `autoresearch exp list`)"),
    ):
        done = cli("exp", *args, cwd=session.root)
        assert done.returncode == 2 and message in done.stderr, done.stderr
    exp(session, "off")
    init(session.root, name="second")  # same branch: a new session is active there
    done = cli("exp", "reopen", "1", cwd=session.root)
    assert done.returncode == 2 and "has the open session #2" in done.stderr


def test_reopen_adds_a_removed_session_worktree_again(repo: Repo) -> None:
    made = exp(repo, "init", "--name", "wt", "--metric", "score", "--worktree")
    wt = Path(made["worktree"])
    exp(repo, "off", cwd=wt)
    repo.git("worktree", "remove", "--force", str(wt))
    reopened = exp(repo, "reopen", "1")
    assert reopened["worktree_restored"] and wt.is_dir()
    assert exp(repo, "status", cwd=wt)["session"]["session_id"] == 1


def test_reopen_heals_a_session_worktree_a_killed_add_left(repo: Repo) -> None:
    # the add of reopen killed half-way: the folder was there (only `.git` in it) and taken
    # for the session's worktree, and every `git fetch` of the repository failed
    made = exp(repo, "init", "--name", "wt", "--metric", "score", "--worktree")
    wt = Path(made["worktree"])
    exp(repo, "off", cwd=wt)
    repo.git("worktree", "remove", "--force", str(wt))
    admin = killed_add(repo.root, wt)
    reopened = exp(repo, "reopen", "1")
    assert reopened["worktree_restored"] and git.half_built_worktrees(repo.root) == []
    assert (admin / "HEAD").read_text().strip() != NULL_OID  # added again, whole
    assert exp(repo, "status", cwd=wt)["session"]["session_id"] == 1
