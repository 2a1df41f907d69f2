"""status / resume-message: read-only, and the history in run order."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from exp_helpers import cycle, init, run

from autoresearch.decide import DEFAULT_PLATEAU
from autoresearch.errors import NotFoundError
from autoresearch.experiments import resume_message, session_status
from autoresearch.experiments.rules import MSG_PLATEAU, plateau_notice
from autoresearch.journal import sessions
from autoresearch.journal.db import Journal
from autoresearch.states import Verdict
from helpers import Repo, make_repo


def test_status_of_a_repository_without_a_session_writes_nothing(tmp_path: Path) -> None:
    fresh = make_repo(tmp_path / "fresh")
    for call in (session_status, resume_message):
        with pytest.raises(NotFoundError, match="^no active experiment session on branch main"):
            call(fresh.root)
    assert not (fresh.root / ".autoresearch").exists()
    assert fresh.git("status", "--porcelain", "--ignored") == ""


def test_history_is_in_run_order_whatever_the_timestamps_say(session: Repo) -> None:
    for value, status in (("100", "keep"), ("90", "keep"), ("95", "discard")):
        cycle(session, value, status)
    with Journal.open(session.root / ".autoresearch" / "journal.sqlite3") as journal:
        runs = sessions.logged_runs(journal, 1, 1)
        with journal.tx() as conn:
            # Equal and reversed stamps, as a coarse or stepped-back clock would write them.
            for run in runs:
                stamp = "2024-01-01T00:00:00Z" if run.number < 3 else "2023-01-01T00:00:00Z"
                sessions.update_run(conn, run.run_id, started_at=stamp, logged_at=stamp)
    status = session_status(session.root, last=2)
    assert [h.run for h in status.history] == [2, 3]
    assert [h.run for h in session_status(session.root).history] == [1, 2, 3]


HISTORY_KEYS = [
    "run", "segment", "status", "metric", "measured", "delta_pct", "metrics", "description",
    "hypothesis", "next_action_hint", "rollback_reason", "deviations", "justification",
    "flagged", "flag_reason", "commit", "patch_path", "log_path", "paired", "reference_commit",
]  # fmt: skip
PENDING_KEYS = [
    "run", "state", "started_at", "benchmark", "metric", "metrics", "asi", "checks", "log_path",
    "tail",
]  # fmt: skip
HOOK_KEYS = [
    "resumed_turns",
    "max_resumed_turns",
    "failure_streak",
    "failure_streak_limit",
    "notice",
]


@pytest.mark.parametrize(
    ("part", "keys"),
    [
        (lambda d: d, [
            "session", "segment", "counts", "baseline", "best", "confidence", "history",
            "unjustified", "notes", "ideas", "pending", "progress", "hooks", "plateau",
        ]),
        (lambda d: d["session"], [
            "session_id", "name", "metric", "direction", "command", "branch", "directory",
            "baseline_commit", "kept_commit", "created_at", "updated_at", "goal", "unit",
            "own_worktree", "segment", "max_iterations", "secondary", "scope", "off_limits",
            "constraints", "notes", "closed_at",
        ]),
        (lambda d: d["confidence"], [
            "value", "label", "mad", "runs", "reason", "significance", "drift",
        ]),
        (lambda d: d["history"][0], HISTORY_KEYS),
        (lambda d: d["history"][-1], HISTORY_KEYS),
        (lambda d: d["unjustified"][0], ["run", "description", "deviations"]),
        (lambda d: d["pending"], PENDING_KEYS),
        (lambda d: d["hooks"], HOOK_KEYS),
    ],
)  # fmt: skip
def test_status_json_keeps_every_key_in_its_order(
    repo: Repo, part: Callable[[dict[str, Any]], dict[str, Any]], keys: list[str]
) -> None:
    """`exp status --json` and MCP's StatusOutput are the typed report's to_dict: no part of
    it may lose, rename or reorder a key on its way from a record."""
    init(repo.root, scope=("value.txt",))
    cycle(repo, "100", "keep", "baseline", asi={"hypothesis": "measure first"})
    repo.write("README.md", "outside the scope\n")
    cycle(repo, "90", "keep", "sneaky")
    run(repo.root)
    data = json.loads(json.dumps(session_status(repo.root).to_dict()))
    assert list(part(data)) == keys
    assert data["history"][0]["hypothesis"] == "measure first"
    assert data["pending"]["state"] == "completed" and data["pending"]["benchmark"] == "pass"
    assert data["unjustified"][0]["deviations"] == ["README.md"]


def test_status_says_when_no_run_was_kept_in_the_last_20(session: Repo) -> None:
    """An experiment session's plateau (issue 33): the agent decides what is kept, so 20
    logged runs in a row without a keep are its plateau; status and the resume message say so,
    and a keep ends it."""
    cycle(session, "100", "keep", "baseline")
    for n in range(DEFAULT_PLATEAU):
        assert session_status(session.root).plateau is None
        cycle(session, str(101 + n), "discard")
    status = session_status(session.root)
    assert status.plateau == MSG_PLATEAU.format(n=20)
    assert status.to_dict()["plateau"] == status.plateau
    assert status.plateau in resume_message(session.root)
    cycle(session, "99", "keep")
    assert session_status(session.root).plateau is None


@pytest.mark.parametrize(
    ("latest", "n", "plateau"),
    [
        (("discard", "crash", "checks_failed"), 3, True),  # every non-keep counts
        (("discard", "discard"), 3, False),  # fewer than n logged
        (("discard", "keep", "discard"), 3, False),
        (("discard", "discard", "discard", "keep"), 3, True),  # the keep is older
    ],
)
def test_a_session_plateau_is_n_logged_runs_without_a_keep(
    latest: tuple[str, ...], n: int, plateau: bool
) -> None:
    found = plateau_notice(tuple(Verdict(s) for s in latest), n)
    assert (found == MSG_PLATEAU.format(n=n)) if plateau else found is None
