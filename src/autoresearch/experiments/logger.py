"""`log`: the verdict on the pending run and its git effect.

Order matters for crash safety: every refusal is decided first (rules.plan_log), then git acts
(commit, or save the discarded diff and reset), then one transaction records the verdict. The
supervisor journals its decision before acting (supervisor/record.py); a session need not,
because its one irreversible act, the reset, is preceded by a durable record of its own: the
saved patch. A crash between git and the journal leaves the run pending, and logging it again
finishes it honestly: a repeated keep finds its commit at HEAD, a repeated discard never
overwrites the saved patch with an empty one, and a run whose patch exists was reset, so it
can no longer be kept (tests/experiments/test_exp_log.py, killed at `log.after_git`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from autoresearch import failpoints, git
from autoresearch.clock import utc_now_iso
from autoresearch.errors import ContractError, RefusedError
from autoresearch.experiments.commits import commit_work, untracked_caches
from autoresearch.experiments.confidence import BestRef, Confidence, Ref
from autoresearch.experiments.context import Context, open_context, session_lock
from autoresearch.experiments.ledger import Progress, progress, stats
from autoresearch.experiments.pairing import run_change
from autoresearch.experiments.params import (
    LogParams,
    RunNote,
    validate_log,
    validate_notes,
)
from autoresearch.experiments.rules import (
    LogPlan,
    deviations,
    expected_secondary,
    keep_message,
    max_reached_message,
    no_pending_run,
    plan_log,
)
from autoresearch.experiments.verbs import Door
from autoresearch.journal import sessions
from autoresearch.journal.sessions import SessionRecord, SessionRunRecord
from autoresearch.jsonshape import json_shape
from autoresearch.noise import Interval
from autoresearch.paths import HARNESS_FILES
from autoresearch.reset import RuntimeRule, save_then_reset
from autoresearch.states import GitAction, Verdict

ASI_SUMMARY_KEYS = ("hypothesis", "rollback_reason", "next_action_hint")
# An untracked harness stays on disk through the reset, so it is not part of the diff; caches
# are runtime output, not something that was tried.
SESSION_DIRT = RuntimeRule(rooted=HARNESS_FILES)


@dataclass(frozen=True)
class GitEffect:
    """What log did to the session directory."""

    action: GitAction
    commit: str | None
    patch_path: str | None
    kept_commit: str

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class LogReport:
    """The verdict as recorded, with the segment's numbers after it."""

    session_id: int
    run: int
    segment: int
    status: Verdict
    description: str
    metric_name: str
    unit: str
    metric: float | None
    measured: float | None  # the parsed value, when the logged metric differs from it
    delta_pct: float | None
    baseline: Ref | None
    best: BestRef | None
    metrics: dict[str, float]
    asi: dict[str, object]
    confidence: Confidence
    git: GitEffect
    deviations: tuple[str, ...]
    justification: str | None
    flagged: tuple[int, ...]
    justified: tuple[int, ...]
    progress: Progress
    max_reached: bool
    messages: tuple[str, ...]
    # the run − the kept commit read next to it (better is +), when it was paired and logged
    # with the value it measured (pairing.run_change)
    paired: Interval | None = None

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def log_experiment(start: Path, params: LogParams, door: Door = Door.CLI) -> LogReport:
    """Record keep / discard / crash / checks_failed for the pending run."""
    validate_log(params)
    with open_context(start, door=door) as ctx:
        session = ctx.bound_session()
        with session_lock(ctx, session):
            run = _pending(ctx, session)
            earlier = sessions.logged_runs(ctx.journal, session.session_id, session.segment)
            plan = plan_log(session, run, params, expected_secondary(session, earlier))
            _check_targets(ctx, session, run, (*params.flag_runs, *params.justify_runs))
            if params.status == Verdict.KEEP:
                _refuse_keep_after_reset(ctx, session, run)
            changed = _work_paths(ctx, session)
            devs = deviations(changed, session.scope, session.off_limits)
            mismatch = plan.mismatch(session.metric)
            if mismatch:  # a value that is not the measured one needs a justification too
                devs.append(mismatch)
            effect = _git_effect(ctx, session, run, params, plan)
            failpoints.hit("log.after_git")
            _record(ctx, session, run, params, plan, effect, changed, devs)
            return _report(ctx, session, run, params, plan, effect, devs)


def _pending(ctx: Context, session: SessionRecord) -> SessionRunRecord:
    run = sessions.pending_run(ctx.journal, session.session_id)
    if run is None:
        raise RefusedError(no_pending_run(ctx.verbs))
    if not run.completed:
        raise RefusedError(
            f"run #{run.number} never completed (its {ctx.verbs.run} was interrupted); "
            "start a new run, which abandons it"
        )
    return run


def _check_targets(
    ctx: Context,
    session: SessionRecord,
    current: SessionRunRecord | None,
    notes: tuple[RunNote, ...],
) -> None:
    for note in notes:
        target = sessions.run_by_number(ctx.journal, session.session_id, note.run_id)
        now = current is not None and target is not None and target.number == current.number
        if target is None or (target.status is None and not now):
            raise ContractError(f"log: run #{note.run_id} is not a logged run of this session")


def _refuse_keep_after_reset(ctx: Context, session: SessionRecord, run: SessionRunRecord) -> None:
    """An earlier log of this run saved its diff and reset, then died before recording it."""
    patch = ctx.session_paths(session).patch(run.number)
    if patch.exists():
        raise RefusedError(
            f"cannot keep run #{run.number}: it was already reset and its diff saved in "
            f"{patch}; log it as discard, crash or checks_failed"
        )


def _git_effect(
    ctx: Context, session: SessionRecord, run: SessionRunRecord, params: LogParams, plan: LogPlan
) -> GitEffect:
    if params.status == Verdict.KEEP:
        assert plan.metric is not None

        message = keep_message(
            params.description, session.metric, plan.metric, plan.metrics, plan.measured
        )
        sha = commit_work(ctx.cwd, message)
        return GitEffect(
            GitAction.COMMITTED if sha else GitAction.NOTHING_TO_COMMIT,
            sha,
            None,
            git.head(ctx.cwd),
        )
    return _revert(ctx, session, run)


def _revert(ctx: Context, session: SessionRecord, run: SessionRunRecord) -> GitEffect:
    """Save what was tried as a patch next to the run's log, then reset to the last keep."""
    target = ctx.session_paths(session).patch(run.number)
    saved = save_then_reset(ctx.cwd, session.kept_commit, session.kept_commit, SESSION_DIRT, target)
    path = str(target) if target.exists() else None
    action = GitAction.REVERTED if saved else GitAction.NOTHING_TO_REVERT
    return GitEffect(action, None, path, session.kept_commit)


def _work_paths(ctx: Context, session: SessionRecord) -> list[str]:
    """The paths this run changed since the last keep, untracked caches left out."""
    caches = untracked_caches(ctx.cwd)
    return [p for p in git.changed_paths(ctx.cwd, session.kept_commit) if p not in caches]


def _record(
    ctx: Context,
    session: SessionRecord,
    run: SessionRunRecord,
    params: LogParams,
    plan: LogPlan,
    effect: GitEffect,
    changed: list[str],
    devs: list[str],
) -> None:
    with ctx.journal.tx() as conn:
        sessions.update_run(
            conn,
            run.run_id,
            status=params.status,
            description=params.description.strip(),
            metric=plan.metric,
            metrics=plan.metrics,
            asi=plan.asi,
            # The commit holding the kept state, also when the keep had nothing to commit.
            commit_sha=effect.kept_commit if params.status == Verdict.KEEP else None,
            patch_path=effect.patch_path,
            modified_paths=changed,
            deviations=devs,
            justification=params.justification or None,
            logged_at=utc_now_iso(),
        )
        _apply_notes(conn, session, params.flag_runs, params.justify_runs)
        if effect.kept_commit != session.kept_commit:
            sessions.update_session(conn, session.session_id, kept_commit=effect.kept_commit)
        # The confidence as it stood when this run was logged (flags set here included).
        value = stats(conn, session).confidence.value
        sessions.update_run(conn, run.run_id, confidence=value)
    ctx.journal.backup(throttled=True)  # a safe point: the run is logged, its git effect applied


def _apply_notes(
    conn: sqlite3.Connection,
    session: SessionRecord,
    flag_runs: tuple[RunNote, ...],
    justify_runs: tuple[RunNote, ...],
) -> None:
    """flag_runs and justify_runs, checked to exist before git was touched."""
    changes: list[tuple[RunNote, Mapping[str, object]]] = [
        *((n, {"flagged": True, "flag_reason": n.reason}) for n in flag_runs),
        *((n, {"justification": n.reason}) for n in justify_runs),
    ]
    for note, columns in changes:
        target = sessions.run_by_number(conn, session.session_id, note.run_id)
        assert target is not None
        sessions.update_run(conn, target.run_id, **columns)


def _report(
    ctx: Context,
    session: SessionRecord,
    run: SessionRunRecord,
    params: LogParams,
    plan: LogPlan,
    effect: GitEffect,
    devs: list[str],
) -> LogReport:
    segment = stats(ctx.journal, session)
    done = progress(ctx.journal, session)
    messages = _messages(ctx, session, run, params, plan, effect, devs)
    if done.reached and done.max is not None:
        messages.append(f"{max_reached_message(done.max)} The session accepts no more runs.")
    return LogReport(
        session_id=session.session_id,
        run=run.number,
        segment=run.segment,
        status=params.status,
        description=params.description.strip(),
        metric_name=session.metric,
        unit=session.unit,
        metric=plan.metric,
        measured=plan.measured,
        delta_pct=segment.delta_pct(plan.metric),
        baseline=segment.baseline,
        best=segment.best_ref(),
        metrics=plan.metrics,
        asi={k: plan.asi[k] for k in ASI_SUMMARY_KEYS if k in plan.asi} or dict(plan.asi),
        confidence=segment.confidence,
        git=effect,
        deviations=tuple(devs),
        justification=params.justification or None,
        flagged=tuple(n.run_id for n in params.flag_runs),
        justified=tuple(n.run_id for n in params.justify_runs),
        progress=done,
        max_reached=done.reached,
        messages=tuple(messages),
        paired=None
        if plan.measured is not None
        else run_change(session.direction, run.readings or (), run.reference_readings or ()),
    )


def _messages(
    ctx: Context,
    session: SessionRecord,
    run: SessionRunRecord,
    params: LogParams,
    plan: LogPlan,
    effect: GitEffect,
    devs: list[str],
) -> list[str]:
    out = []
    if effect.action == GitAction.COMMITTED and effect.commit:
        out.append(f"committed {effect.commit[:7]} on {session.branch}")
    elif effect.action == GitAction.NOTHING_TO_COMMIT:
        out.append("nothing to commit: the kept state is the last kept commit")
    elif effect.patch_path:
        out.append(
            f"reset to {session.kept_commit[:7]}; the discarded diff is saved in "
            f"{effect.patch_path} (git apply it to bring it back)"
        )
    if plan.set_changed:
        out.append(f"secondary metric set changed (forced): {', '.join(plan.set_changed)}")
    if devs and params.status == Verdict.KEEP and not params.justification:
        out.append(
            f"run #{run.number} was kept with deviations ({'; '.join(devs[:5])}): justify "
            f"it ({ctx.verbs.justify_run(run.number)}) or flag it "
            f"({ctx.verbs.flag_run(run.number)}); it is listed in every status until then"
        )
    elif devs:
        out.append(f"scope deviations recorded: {', '.join(devs[:5])}")
    return out


@dataclass(frozen=True)
class NotesReport:
    """What a log with only flag / justify notes recorded: no pending run is needed."""

    session_id: int
    flagged: tuple[int, ...]
    justified: tuple[int, ...]
    unjustified: tuple[int, ...]  # kept runs whose deviations still wait for a reason
    confidence: Confidence
    messages: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def annotate_runs(
    start: Path,
    flag_runs: tuple[RunNote, ...] = (),
    justify_runs: tuple[RunNote, ...] = (),
    door: Door = Door.CLI,
) -> NotesReport:
    """Flag or justify logged runs of the bound session, with or without a pending run."""
    validate_notes((*flag_runs, *justify_runs), required=True)
    with open_context(start, door=door) as ctx:
        session = ctx.bound_session()
        with session_lock(ctx, session):
            _check_targets(ctx, session, None, (*flag_runs, *justify_runs))
            with ctx.journal.tx() as conn:
                _apply_notes(conn, session, flag_runs, justify_runs)
            waiting = sessions.unjustified_keeps(ctx.journal, session.session_id)
            left = tuple(r.number for r in waiting)
            confidence = stats(ctx.journal, session).confidence
    flagged = tuple(n.run_id for n in flag_runs)
    justified = tuple(n.run_id for n in justify_runs)
    messages = [f"flagged run #{n}: excluded from baseline, best and confidence" for n in flagged]
    messages += [f"justified run #{n}" for n in justified]
    if left:
        messages.append(f"still unjustified: {', '.join(f'#{n}' for n in left)}")
    return NotesReport(session.session_id, flagged, justified, left, confidence, tuple(messages))
