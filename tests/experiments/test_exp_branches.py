"""Sessions are bound to branches: one branch never sees another branch's session."""

from __future__ import annotations

import pytest
from exp_helpers import HARNESS, cycle, init, run

from autoresearch.errors import NotFoundError
from autoresearch.experiments import session_status, update_notes
from helpers import Repo


def test_two_branches_two_sessions(repo: Repo) -> None:
    a = init(repo.root, name="alpha", direction="lower")
    cycle(repo, "100", "keep", "alpha baseline")
    cycle(repo, "90", "keep", "alpha better")
    repo.git("checkout", "-q", "main")
    repo.write("autoresearch.sh", HARNESS)  # the first harness was committed on alpha's branch
    b = init(repo.root, name="beta", metric="score", direction="higher")
    assert (a.session_id, b.session_id) == (1, 2)
    assert b.branch.startswith("autoresearch/beta-")
    cycle(repo, "100", "keep", "beta baseline")
    update_notes(repo.root, append_idea="beta idea")

    beta = session_status(repo.root)
    assert beta.session.name == "beta" and beta.session.direction == "higher"
    assert [h.description for h in beta.history] == ["beta baseline"]
    assert beta.ideas == ("beta idea",)

    repo.git("checkout", "-q", a.branch)
    alpha = session_status(repo.root)
    assert alpha.session.name == "alpha"
    assert [h.description for h in alpha.history] == ["alpha baseline", "alpha better"]
    assert alpha.best is not None and alpha.best.metric == 90.0
    assert alpha.ideas == ()

    repo.git("checkout", "-q", "main")
    with pytest.raises(NotFoundError) as err:
        run(repo.root)
    message = err.value.message
    assert message.startswith("no active experiment session on branch main; ")
    assert f"session #2 'beta' lives on branch {b.branch} (git checkout {b.branch})" in message
    assert f"session #1 'alpha' lives on branch {a.branch}" in message


def test_a_detached_head_has_no_session(session: Repo) -> None:
    session.git("checkout", "-q", "--detach")
    with pytest.raises(NotFoundError, match="no active experiment session on a detached HEAD; "):
        session_status(session.root)


def test_a_closed_session_is_gone_from_its_branch(session: Repo) -> None:
    from autoresearch.experiments import close_session

    run(session.root)
    closed = close_session(session.root)
    assert closed.abandoned_run == 1
    assert "abandoned run #1 (completed, never logged)" in closed.messages
    with pytest.raises(NotFoundError, match="no active experiment session on branch autoresearch/"):
        session_status(session.root)
    again = init(session.root, name="second")
    assert again.session_id == 2 and again.created and not again.created_branch
