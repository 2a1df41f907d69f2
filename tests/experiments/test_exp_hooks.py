"""Host hooks: the Stop decision (table), the counters in the journal, the hook commands through
the real CLI, the compaction summary, and install / uninstall of .claude/settings.local.json."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from exp_helpers import cycle, init, run

from autoresearch.experiments.hook_install import merged, removed
from autoresearch.experiments.hooks import (
    FAILURE_STREAK,
    MAX_RESUMED_TURNS,
    HookAnswer,
    HookEvent,
    StopAction,
    StopFacts,
    StopReason,
    answer_hook,
    compaction_summary,
    decide_stop,
)
from autoresearch.journal.hooks import HookCounters, save_counters
from helpers import Repo, cli, git

FAILS = ("discard", "crash", "checks_failed")


@pytest.mark.parametrize(
    ("facts", "action", "reason"),
    [
        (StopFacts(0, 1, 0), StopAction.CONTINUE, StopReason.LOGGED),
        (StopFacts(5, 7, 7), StopAction.STOP, StopReason.NOTHING_LOGGED),
        (StopFacts(0, 3, 3, pending_completed=4), StopAction.CONTINUE, StopReason.PENDING),
        (
            StopFacts(1, 3, 3, pending_completed=4, last_pending=4),
            StopAction.STOP,
            StopReason.NOTHING_LOGGED,
        ),
        (
            StopFacts(0, 9, 0, max_iterations=9, max_reached=True),
            StopAction.STOP,
            StopReason.MAX_ITERATIONS,
        ),
        (StopFacts(MAX_RESUMED_TURNS - 1, 2, 1), StopAction.CONTINUE, StopReason.LOGGED),
        (StopFacts(MAX_RESUMED_TURNS, 2, 1), StopAction.STOP, StopReason.MAX_RESUMES),
        (
            StopFacts(3, 30, 29, latest_statuses=FAILS * 7),
            StopAction.STOP,
            StopReason.FAILURE_STREAK,
        ),
        # exactly 20 failures is not "more than 20"
        (
            StopFacts(3, 30, 29, ("discard",) * FAILURE_STREAK),
            StopAction.CONTINUE,
            StopReason.LOGGED,
        ),
        # one keep among the latest 21 breaks the streak
        (
            StopFacts(3, 30, 29, ("discard",) * 20 + ("keep",) + ("crash",) * 5),
            StopAction.CONTINUE,
            StopReason.LOGGED,
        ),
    ],
)
def test_stop_decision(facts: StopFacts, action: StopAction, reason: StopReason) -> None:
    decision = decide_stop(facts)
    assert (decision.action, decision.reason) == (action, reason)
    limit = reason in (StopReason.MAX_ITERATIONS, StopReason.MAX_RESUMES, StopReason.FAILURE_STREAK)
    assert (decision.notice is not None) == limit


def stop(repo: Repo, payload: dict | str | None = None) -> dict | None:
    """The real `exp hook stop` as Claude Code runs it: JSON on stdin, JSON (or nothing) out."""
    return hook(repo, "stop", payload)


def hook(repo: Repo, event: str, payload: dict | str | None = None) -> dict | None:
    import subprocess
    import sys

    body = (
        payload
        if isinstance(payload, str)
        else json.dumps(
            payload or {"hook_event_name": "Stop", "stop_hook_active": False, "cwd": str(repo.root)}
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", "exp", "hook", event],
        input=body, capture_output=True, text=True, cwd=repo.root, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def hooks_log(repo: Repo) -> str:
    path = repo.root / ".autoresearch" / "hooks.log"
    return path.read_text() if path.exists() else ""


def test_stop_resumes_after_a_logged_run_and_lets_an_idle_turn_stop(session: Repo) -> None:
    assert stop(session) is None  # nothing logged yet
    cycle(session, "100", "keep", "baseline", asi={"hypothesis": "start"})
    answer = stop(session)
    assert answer is not None and answer["decision"] == "block"
    assert answer["reason"].startswith("session #1 'speed up'")
    assert "Continue the autoresearch loop now." in answer["reason"]
    assert "(auto-resume 1/200" in answer["reason"]
    assert stop(session) is None  # the resumed turn logged nothing: let it stop
    cycle(session, "90", "keep")
    assert "(auto-resume 2/200" in stop(session)["reason"]  # the count survived the process
    assert "stop: continue (an experiment was logged since the last resume)" in hooks_log(session)


def test_a_completed_unlogged_run_is_resumed_once_to_log_it(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    stop(session)
    run(session.root)
    answer = stop(session)
    assert answer is not None and "Run #2 completed but was never logged" in answer["reason"]
    assert stop(session) is None


def test_off_and_max_iterations_let_it_stop(session: Repo) -> None:
    init(session.root, max_iterations=2)
    cycle(session, "100", "keep", "baseline")
    assert stop(session) is not None
    cycle(session, "90", "keep")
    answer = stop(session)
    assert answer == {
        "systemMessage": "autoresearch: Maximum experiments reached (2). Auto-resume stopped."
    }
    assert cli("exp", "off", cwd=session.root).returncode == 0
    assert stop(session) is None
    assert "no active experiment session" in hooks_log(session)


def test_the_turn_limit_is_read_from_the_journal(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    with sqlite3.connect(session.root / ".autoresearch/journal.sqlite3") as conn:
        save_counters(conn, 1, 1, HookCounters(resumed_turns=MAX_RESUMED_TURNS))
    answer = stop(session)
    assert answer is not None and "after 200 resumed turns" in answer["systemMessage"]


def test_the_failure_streak_stops_the_loop(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    for i in range(FAILURE_STREAK):
        cycle(session, "200", "discard", f"worse {i}")
    assert answer_hook(HookEvent.STOP, "{}", session.root).output["decision"] == "block"
    cycle(session, "200", "crash", "broken")
    answer = answer_hook(HookEvent.STOP, "{}", session.root)
    assert answer.output is not None and "latest 21 results" in answer.output["systemMessage"]
    assert "stop: stop (failure streak)" in hooks_log(session)


@pytest.mark.parametrize("raw", ["not json", "[1, 2]", "\x00"])
def test_bad_input_lets_it_stop_and_is_logged(session: Repo, raw: str) -> None:
    cycle(session, "100", "keep", "baseline")
    assert stop(session, raw) is None
    assert "hook error: bad input" in hooks_log(session)


def test_an_internal_error_or_a_hung_journal_lets_it_stop(session: Repo) -> None:
    def boom(start: Path) -> HookAnswer:
        assert start == session.root
        raise RuntimeError("disk on fire")

    answer = answer_hook(HookEvent.STOP, "{}", session.root, stop=boom)
    assert answer.output is None and "disk on fire" in answer.log
    assert "stop: hook error: RuntimeError('disk on fire'); let it stop" in hooks_log(session)
    release = threading.Event()

    def hung(start: Path) -> HookAnswer:
        release.wait(10)
        return HookAnswer({"decision": "block", "reason": "too late"}, "stop: too late")

    started = time.monotonic()
    answer = answer_hook(HookEvent.STOP, "{}", session.root, budget=0.2, stop=hung)
    release.set()
    assert time.monotonic() - started < 5
    assert answer.output is None and "no answer within 0.2s" in answer.log


def test_no_repository_or_no_journal_lets_it_stop(tmp_path: Path, repo: Repo) -> None:
    assert answer_hook(HookEvent.STOP, "{}", tmp_path).output is None
    assert stop(repo) is None
    assert not (repo.root / ".autoresearch").exists()


def test_compaction_summary_is_deterministic_and_complete(session: Repo) -> None:
    init(session.root, goal="make it fast", scope=("value.txt",), max_iterations=50)
    cycle(session, "100", "keep", "baseline", asi={"hypothesis": "measure first"})
    cycle(session, "120", "discard", "bigger", asi={"rollback_reason": "slower by 20%"})
    cli("exp", "notes", "--append-idea", "try caching", cwd=session.root)
    run(session.root)
    payload = {"hook_event_name": "SessionStart", "source": "compact", "cwd": str(session.root)}
    first = hook(session, "session-start", payload)
    assert first is not None
    summary = first["hookSpecificOutput"]["additionalContext"]
    assert first["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert hook(session, "session-start", payload) == first  # byte-identical
    assert summary == compaction_summary(session.root)
    for part in (
        "source of truth", "make it fast", "metric:      score, lower is better",
        "scope:       value.txt", "baseline:    #1 100", "best kept:   #1 100",
        "hypothesis: measure first", "rollback: slower by 20%", "try caching",
        "pending run: #3 completed", "Run #3 completed but was never logged",
    ):  # fmt: skip
        assert part in summary, part
    # other sources add nothing
    assert hook(session, "session-start", {**payload, "source": "startup"}) is None


USER_SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}],
    },
}


def test_merge_keeps_the_users_hooks_and_removal_restores_them() -> None:
    ours = merged(USER_SETTINGS, python="/py")
    assert ours["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert ours["hooks"]["Stop"][1] == {
        "hooks": [
            {"type": "command", "command": "/py -m autoresearch exp hook stop", "timeout": 30}
        ]
    }
    assert ours["hooks"]["SessionStart"][0]["matcher"] == "compact"
    assert merged(ours, python="/other") == merged(USER_SETTINGS, python="/other")  # no copies
    assert removed(ours) == USER_SETTINGS
    assert removed(merged({}, python="/py")) == {}
    assert removed(USER_SETTINGS) == USER_SETTINGS


def test_install_and_uninstall_through_the_cli(repo: Repo) -> None:
    settings = repo.root / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=4) + "\n"
    settings.write_text(original)
    done = cli("exp", "hooks", "install", "--claude", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["changed"] is True
    data = json.loads(settings.read_text())
    assert data["permissions"] == USER_SETTINGS["permissions"]
    assert len(data["hooks"]["Stop"]) == 2
    assert git(repo.root, "status", "--porcelain", "--", ".claude") == ""  # out of git
    again = cli("exp", "hooks", "install", "--claude", "--json", cwd=repo.root)
    assert json.loads(again.stdout)["changed"] is False
    assert cli("exp", "hooks", "uninstall", "--claude", cwd=repo.root).returncode == 0
    assert json.loads(settings.read_text()) == USER_SETTINGS
    # a fresh project: uninstall leaves nothing behind
    settings.unlink()
    settings.parent.rmdir()
    cli("exp", "hooks", "install", "--claude", cwd=repo.root)
    assert settings.is_file()
    cli("exp", "hooks", "uninstall", "--claude", cwd=repo.root)
    assert not settings.parent.exists()


def test_install_refuses_a_broken_settings_file(repo: Repo) -> None:
    settings = repo.root / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    done = cli("exp", "hooks", "install", "--claude", cwd=repo.root)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: ") and "not valid JSON" in done.stderr
    assert settings.read_text() == "{not json"


CODEX_USER_HOOKS = {
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "ruff check --fix", "timeout": 30}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}],
    }
}


def test_codex_install_merges_into_the_projects_hooks_json_and_uninstall_restores_it(
    repo: Repo,
) -> None:
    path = repo.root / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps(CODEX_USER_HOOKS))
    done = cli("exp", "hooks", "install", "--codex", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["changed"] is True and out["events"] == ["Stop", "SessionStart"]
    assert "--dangerously-bypass-hook-trust" in out["message"]  # says how codex will trust it
    data = json.loads(path.read_text())
    assert data["hooks"]["PreToolUse"] == CODEX_USER_HOOKS["hooks"]["PreToolUse"]
    [user, ours] = data["hooks"]["Stop"]
    assert user == CODEX_USER_HOOKS["hooks"]["Stop"][0]
    assert ours["hooks"][0]["command"].endswith(" -m autoresearch exp hook stop")
    assert data["hooks"]["SessionStart"][0]["matcher"] == "compact"
    assert git(repo.root, "status", "--porcelain", "--", ".codex") == ""  # out of git
    again = cli("exp", "hooks", "install", "--codex", "--json", cwd=repo.root)
    assert json.loads(again.stdout)["changed"] is False
    assert cli("exp", "hooks", "uninstall", "--codex", cwd=repo.root).returncode == 0
    assert json.loads(path.read_text()) == CODEX_USER_HOOKS
    path.unlink()
    path.parent.rmdir()
    cli("exp", "hooks", "install", "--codex", cwd=repo.root)
    cli("exp", "hooks", "uninstall", "--codex", cwd=repo.root)
    assert not path.parent.exists()


def test_codex_install_refuses_a_hooks_file_git_tracks(repo: Repo) -> None:
    path = repo.root / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(json.dumps(CODEX_USER_HOOKS))
    git(repo.root, "add", ".codex/hooks.json")
    git(repo.root, "commit", "-qm", "shared codex hooks")
    done = cli("exp", "hooks", "install", "--codex", cwd=repo.root)
    assert done.returncode == 2 and "is tracked by git" in done.stderr
    assert json.loads(path.read_text()) == CODEX_USER_HOOKS


def test_install_names_exactly_one_host(repo: Repo) -> None:
    for argv in ([], ["--claude", "--codex"]):
        done = cli("exp", "hooks", "install", *argv, cwd=repo.root)
        assert done.returncode == 2 and "--claude or --codex" in done.stderr


def test_status_shows_the_hook_counters(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    assert "auto-resume:" not in cli("exp", "status", cwd=session.root).stdout
    cycle(session, "120", "discard", "worse")
    assert stop(session) is not None  # resumed once
    status = json.loads(cli("exp", "status", "--json", cwd=session.root).stdout)
    assert status["hooks"] == {
        "resumed_turns": 1,
        "max_resumed_turns": MAX_RESUMED_TURNS,
        "failure_streak": 1,
        "failure_streak_limit": FAILURE_STREAK,
        "notice": None,
    }
    text = cli("exp", "status", cwd=session.root).stdout
    assert "auto-resume: 1/200 resumed turns, failure streak 1 (stops above 20)" in text


def test_the_compaction_summary_cannot_tell_running_from_interrupted(session: Repo) -> None:
    """Only the journal is read: an unfinished pending run is neither running nor interrupted
    there, while `status` (which looks at the run's lock) says interrupted."""
    from autoresearch.experiments import session_status
    from autoresearch.experiments.report import render_status
    from autoresearch.journal import sessions
    from autoresearch.journal.db import Journal

    cycle(session, "100", "keep", "baseline")
    run(session.root)
    with Journal.open(session.root / ".autoresearch" / "journal.sqlite3") as journal:
        pending = sessions.pending_run(journal, 1)
        assert pending is not None
        with journal.tx() as conn:  # as if its `exp run` had been killed mid-benchmark
            sessions.update_run(conn, pending.run_id, completed_at=None)
    summary = compaction_summary(session.root)
    assert summary is not None
    assert "pending run: #2 not completed (running or interrupted)\n" in summary
    assert "never logged" not in summary
    assert "pending run: #2 interrupted\n" in render_status(session_status(session.root))
