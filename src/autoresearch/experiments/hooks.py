"""Host hooks that keep an experiment session going: auto-resume and compaction context.

Claude Code runs `autoresearch exp hook stop` when the agent ends a turn and `autoresearch exp
hook session-start` when a session starts (matcher `compact`: after a context compaction); Codex
0.171.0 runs the same two hooks with the same protocol (its hook schemas are Claude Code's:
`decision` / `reason` / `systemMessage`, `additionalContext`; a block re-prompts the agent with
the reason). The Stop hook answers "continue" – `{"decision": "block", "reason": <resume
message>}` – when the session is on and the agent logged an experiment (or left a completed run
unlogged) since the last resume; otherwise it lets the agent stop, with a notice when a limit
fired: `max_iterations` logged, 200 resumed turns, or more than 20 latest results of the segment
all discard / crash / checks_failed. The counters live in the journal (`session_hooks`), so a
restarted host continues the count.

A hook never breaks the host's turn: any error, bad input or a journal that does not answer
within the budget answers "let it stop", and the reason goes to `.autoresearch/hooks.log`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoresearch.clock import utc_now_iso
from autoresearch.errors import NotFoundError
from autoresearch.experiments.checkout import located_by_files
from autoresearch.experiments.rules import (
    FAILURE_STREAK,
    MAX_RESUMED_TURNS,
    failure_streak,
    max_reached_message,
)
from autoresearch.journal.peek import Glance, open_session_on
from autoresearch.paths import STATE_DIR, RepoPaths
from autoresearch.repo_state import main_root
from autoresearch.states import Verdict

if TYPE_CHECKING:  # a session's ledger and status: imported once a session is found (below);
    # the journal's open and its records too, once a glance did not settle "no session"
    from autoresearch.experiments.context import Context
    from autoresearch.experiments.status import StatusReport
    from autoresearch.journal.hooks import HookCounters

HOOK_BUDGET_SECONDS = 20.0  # well inside the timeout the installed entries give the host
HOOK_TIMEOUT_SECONDS = 30
HOOK_LOG = "hooks.log"
MAX_STDIN_BYTES = 1 << 20
SOURCE_COMPACT = "compact"


class HookEvent(StrEnum):
    STOP = "stop"
    SESSION_START = "session-start"


class StopAction(StrEnum):
    CONTINUE = "continue"
    STOP = "stop"


class StopReason(StrEnum):
    """Why the Stop hook decided as it did (logged; limits also produce a notice)."""

    LOGGED = "an experiment was logged since the last resume"
    PENDING = "a completed run waits for its log"
    NO_SESSION = "no active experiment session"
    NOTHING_LOGGED = "nothing logged since the last resume"
    MAX_ITERATIONS = "max_iterations reached"
    MAX_RESUMES = "resumed-turn limit reached"
    FAILURE_STREAK = "failure streak"
    ERROR = "hook error"


@dataclass(frozen=True)
class StopFacts:
    """What the decision needs, read from the journal."""

    resumed_turns: int
    newest_logged: int
    last_logged: int
    latest_statuses: tuple[Verdict, ...] = ()  # newest first
    pending_completed: int | None = None
    last_pending: int | None = None
    max_iterations: int | None = None
    max_reached: bool = False


@dataclass(frozen=True)
class StopDecision:
    action: StopAction
    reason: StopReason
    notice: str | None = None


def decide_stop(facts: StopFacts) -> StopDecision:
    """Pure: continue the loop, or let the agent stop (with a notice when a limit fired)."""
    if facts.max_reached:
        notice = f"{max_reached_message(facts.max_iterations or 0)} Auto-resume stopped."
        return StopDecision(StopAction.STOP, StopReason.MAX_ITERATIONS, notice)
    if facts.resumed_turns >= MAX_RESUMED_TURNS:
        notice = (
            f"Auto-resume stopped after {MAX_RESUMED_TURNS} resumed turns; "
            "prompt the agent to go on."
        )
        return StopDecision(StopAction.STOP, StopReason.MAX_RESUMES, notice)
    # status's rule (rules.failure_streak), counted no further than the limit it stops above
    streak = failure_streak(facts.latest_statuses[: FAILURE_STREAK + 1])
    if streak > FAILURE_STREAK:
        notice = (
            f"Auto-resume stopped: the latest {streak} results of the segment are all "
            "discard/crash/checks_failed; rethink the approach before going on."
        )
        return StopDecision(StopAction.STOP, StopReason.FAILURE_STREAK, notice)
    if facts.newest_logged > facts.last_logged:
        return StopDecision(StopAction.CONTINUE, StopReason.LOGGED)
    if facts.pending_completed is not None and facts.pending_completed != facts.last_pending:
        return StopDecision(StopAction.CONTINUE, StopReason.PENDING)
    return StopDecision(StopAction.STOP, StopReason.NOTHING_LOGGED)


def after(decision: StopDecision, facts: StopFacts, before: HookCounters) -> HookCounters:
    """Pure: the counters once `decision` is acted on."""
    from autoresearch.journal.hooks import HookCounters  # a session's: see stop_hook

    if decision.action == StopAction.CONTINUE:
        return HookCounters(
            resumed_turns=before.resumed_turns + 1,
            last_logged_run=facts.newest_logged,
            last_pending_run=facts.pending_completed,
            notice=None,
        )
    return replace(before, notice=decision.notice or before.notice)


@dataclass(frozen=True)
class HookAnswer:
    """What the host gets on stdout (`output`, JSON; None: nothing) and what is logged."""

    output: dict[str, Any] | None
    log: str

    def stdout(self) -> str:
        return "" if self.output is None else json.dumps(self.output, ensure_ascii=False)


# --- Claude Code's protocol ----------------------------------------------------------------


def claude_stop_output(decision: StopDecision, message: str | None) -> dict[str, Any] | None:
    if decision.action == StopAction.CONTINUE:
        return {"decision": "block", "reason": message or ""}
    if decision.notice:
        return {"systemMessage": f"autoresearch: {decision.notice}"}
    return None


def claude_context_output(summary: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": summary}}


# --- the hooks -------------------------------------------------------------------------------


def stop_hook(start: Path) -> HookAnswer:
    """Decide on a Stop, record the counters, and answer in Claude Code's protocol."""
    if no_session_at_a_glance(start):
        return HookAnswer(None, f"stop: {StopReason.NO_SESSION}")
    from autoresearch.experiments.context import open_context  # a session may be there

    try:
        with open_context(start, "write") as ctx:
            return _stop(ctx)
    except NotFoundError:  # no journal: no session, nothing to keep going
        return HookAnswer(None, f"stop: {StopReason.NO_SESSION}")


def no_session_at_a_glance(start: Path) -> bool:
    """Whether git's files and the sessions table plainly say no session is open at `start`
    (journal/peek.py): most turns of most agents end so, and their Stop needs neither the
    journal's open (its integrity scan and seal check) nor its records. False when unsure."""
    found = located_by_files(start if start.is_dir() else start.parent)
    if found is None:
        return False
    _, root, branch = found
    return open_session_on(RepoPaths(root).journal, branch) is Glance.NONE_OPEN


def _stop(ctx: Context) -> HookAnswer:
    # the session store and the counters: a Stop answered at a glance imports neither
    from autoresearch.journal import hooks as journal_hooks
    from autoresearch.journal import sessions

    session = ctx.active()
    if session is None:
        return HookAnswer(None, f"stop: {StopReason.NO_SESSION}")
    # the segment's progress: its ledger's statistics are the status's, built only to resume
    from autoresearch.experiments.ledger import progress

    sid, segment = session.session_id, session.segment
    with ctx.journal.tx() as conn:
        before = journal_hooks.counters(conn, sid, segment)
        prog = progress(conn, session)
        facts = StopFacts(
            resumed_turns=before.resumed_turns,
            newest_logged=journal_hooks.newest_logged_number(conn, sid),
            last_logged=before.last_logged_run,
            latest_statuses=sessions.latest_statuses(conn, sid, segment, FAILURE_STREAK + 1),
            pending_completed=_pending_completed(conn, sid),
            last_pending=before.last_pending_run,
            max_iterations=prog.max,
            max_reached=prog.reached,
        )
        decision = decide_stop(facts)
        now = after(decision, facts, before)
        if now != before:
            journal_hooks.save_counters(conn, sid, segment, now)
    message = None
    if decision.action == StopAction.CONTINUE:
        from autoresearch.experiments.report import render_resume
        from autoresearch.experiments.status import DEFAULT_HISTORY, build_status

        message = (
            render_resume(build_status(ctx, session, DEFAULT_HISTORY))
            + f"\n\n(auto-resume {now.resumed_turns}/{MAX_RESUMED_TURNS} by the autoresearch "
            "Stop hook; `autoresearch exp off` ends the session)"
        )
    log = (
        f"stop: {decision.action} ({decision.reason}), session #{sid}, "
        f"resumed {now.resumed_turns}/{MAX_RESUMED_TURNS}"
    )
    if decision.notice:
        log += f"; notice: {decision.notice}"
    return HookAnswer(claude_stop_output(decision, message), log)


def _pending_completed(conn: sqlite3.Connection, session_id: int) -> int | None:
    from autoresearch.journal import sessions

    run = sessions.pending_run(conn, session_id)
    return run.number if run is not None and run.completed else None


def session_start_hook(start: Path, source: str) -> HookAnswer:
    """After a compaction: the deterministic session summary as additional context."""
    if source != SOURCE_COMPACT:
        return HookAnswer(None, f"session-start ({source or 'unknown'}): nothing to add")
    summary = compaction_summary(start)
    if summary is None:
        return HookAnswer(None, f"session-start: {StopReason.NO_SESSION}")
    return HookAnswer(claude_context_output(summary), "session-start: summary added")


def compaction_summary(start: Path) -> str | None:
    """The summary of the bound session, or None without one."""
    from autoresearch.experiments.context import open_context

    try:
        with open_context(start, "read") as ctx:
            session = ctx.active()
            if session is None:
                return None
            from autoresearch.experiments.status import DEFAULT_HISTORY, build_status

            return render_summary(build_status(ctx, session, DEFAULT_HISTORY))
    except NotFoundError:
        return None


def render_summary(report: StatusReport) -> str:
    """Pure and deterministic: the same journal gives the same bytes. Whether a pending run's
    process is alive is not in the journal, so an unfinished run reads as not completed."""
    from autoresearch.experiments.report import render_resume

    s = report.session
    head = (
        f"Context compacted: this is the autoresearch experiment session #{s.session_id} "
        f"'{s.name}', rebuilt from the journal with no model call. The journal "
        "(.autoresearch/journal.sqlite3) is the source of truth: `autoresearch exp status` "
        "shows the live state; trust it over anything remembered from before the compaction."
    )
    return head + "\n\n" + render_resume(report, live=False)


# --- the safe entry point --------------------------------------------------------------------


def parse_payload(raw: str) -> dict[str, Any]:
    """The host's hook JSON on stdin (an object); ValueError otherwise."""
    value = json.loads(raw) if raw.strip() else {}
    if not isinstance(value, dict):
        raise ValueError("the hook input is not a JSON object")
    return value


def hook_start(payload: Mapping[str, Any], fallback: Path) -> Path:
    """Where the host runs: the payload's cwd, else CLAUDE_PROJECT_DIR, else our cwd."""
    for candidate in (payload.get("cwd"), os.environ.get("CLAUDE_PROJECT_DIR")):
        if isinstance(candidate, str) and candidate and Path(candidate).is_dir():
            return Path(candidate)
    return fallback


def answer_hook(
    event: HookEvent,
    raw: str,
    fallback: Path,
    budget: float = HOOK_BUDGET_SECONDS,
    stop: Callable[[Path], HookAnswer] = stop_hook,
) -> HookAnswer:
    """Never raises and returns within `budget` seconds: on any failure, "let it stop".

    `stop` answers a Stop from the checkout it starts at (the session's rules, `stop_hook`)."""
    start = fallback
    try:
        payload = parse_payload(raw)
        start = hook_start(payload, fallback)
    except ValueError as exc:
        answer = HookAnswer(None, f"{event}: {StopReason.ERROR}: bad input: {exc}; let it stop")
        write_log(start, answer.log)
        return answer
    source = payload.get("source")
    work: Callable[[], HookAnswer] = (
        (lambda: stop(start))
        if event == HookEvent.STOP
        else (lambda: session_start_hook(start, source if isinstance(source, str) else ""))
    )
    answer = _within(work, budget, event)
    write_log(start, answer.log)
    return answer


def _within(work: Callable[[], HookAnswer], budget: float, event: HookEvent) -> HookAnswer:
    box: list[HookAnswer] = []

    def target() -> None:
        try:
            box.append(work())
        except Exception as exc:  # noqa: BLE001 - a hook must never break the host's turn
            box.append(HookAnswer(None, f"{event}: {StopReason.ERROR}: {exc!r}; let it stop"))

    # a daemon thread: a journal that never answers cannot hold the host past its timeout
    thread = threading.Thread(target=target, daemon=True, name=f"hook-{event}")
    thread.start()
    thread.join(budget)
    if box:
        return box[0]
    return HookAnswer(
        None, f"{event}: {StopReason.ERROR}: no answer within {budget:g}s; let it stop"
    )


def write_log(start: Path, line: str) -> None:
    """Append to `.autoresearch/hooks.log` of the repository when it has one; never raises."""
    try:
        root = main_root(start if start.is_dir() else start.parent)
        if root is None or not (root / STATE_DIR).is_dir():
            return
        with open(root / STATE_DIR / HOOK_LOG, "a", encoding="utf-8") as handle:
            handle.write(f"{utc_now_iso()} {line}\n")
    except Exception:  # noqa: BLE001 - logging must not break the hook either
        pass
