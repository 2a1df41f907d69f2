"""Reading a report's model from the journal (never from the file views), and git for diffs.

A run that is still going is read as it stands: WAL readers never block its driver, and the
iteration being evaluated right now is left out until its decision is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from autoresearch import git
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.errors import GitError
from autoresearch.experiments.confidence import BestRef, baseline_of
from autoresearch.experiments.ledger import point, stats
from autoresearch.journal import iteration_records, search, sessions
from autoresearch.journal.db import Journal
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.runs import RunRecord
from autoresearch.journal.sessions import SessionRecord, SessionRunRecord
from autoresearch.noise import Interval as Estimate
from autoresearch.noise import Role
from autoresearch.paths import RepoPaths, session_paths
from autoresearch.report.model import (
    KeptChange,
    Link,
    Outcome,
    ReportData,
    ReportKind,
    Row,
)
from autoresearch.states import (
    DecisionKind,
    EvalPurpose,
    EvalStatus,
    IterationKind,
    RunStatus,
    SessionState,
    Verdict,
)
from autoresearch.supervisor import estimates, improvement
from autoresearch.supervisor.certify import (
    certification_lines,
    level_moved,
    read_certification,
)
from autoresearch.supervisor.estimates import own_commit
from autoresearch.supervisor.improvement import PairedChange
from autoresearch.supervisor.kept import KeptStep, kept_steps

# A kept diff larger than this is cut in the report (the commit itself has it all).
MAX_DIFF_CHARS = 200_000
# Evaluations that measure the iteration's own tree (not the incumbent, not a certification).
OWN_PURPOSES = frozenset({EvalPurpose.BASELINE, EvalPurpose.ITERATION})
# Readings of the iteration's own commit (an incumbent reading belongs to the kept commit).
OWN_ROLES = frozenset({Role.BASELINE, Role.CANDIDATE, Role.CONFIRM})
_DECISIONS = {
    DecisionKind.BASELINE: Outcome.BASELINE,
    DecisionKind.KEEP: Outcome.KEPT,
    DecisionKind.DISCARD: Outcome.DISCARDED,
    DecisionKind.AMBIGUOUS: Outcome.DISCARDED,
    DecisionKind.ERROR: Outcome.ERROR,
}
UNSCORED = (Verdict.CRASH, Verdict.CHECKS_FAILED)


# --- supervised runs -----------------------------------------------------------------------


def run_report(journal: Journal, repo: RepoPaths, run: RunRecord) -> ReportData:
    """The report model of one supervised run."""
    its = iteration_records.all_iterations(journal, run.run_id)
    readings = _readings(journal, run.run_id, {it.iteration: _own_commit(it) for it in its})
    logs = repo.run(run.run_id).logs
    patches = _patches(logs)
    found = estimates.RunReadings.load(journal, run)
    lineage = _lineage(journal, run)
    rows = tuple(
        replace(
            _run_row(it, readings.get(it.iteration, []), patches, found.estimate(own_commit(it))),
            parent=lineage.get(it.iteration),
        )
        for it in its
    )
    head = estimates.headline(journal, run)
    return ReportData(
        kind=ReportKind.RUN,
        ident=run.run_id,
        title=f"{run.mission_slug} · run {run.run_tag}",
        metric=run.evaluator.metric or "score",
        direction=run.evaluator.direction,
        status=run.status,
        stop_reason=run.stop_reason,
        started_at=run.created_at,
        ended_at=run.completed_at if run.status != RunStatus.RUNNING else None,
        generated_at=utc_now_iso(),
        rows=rows,
        kept=tuple(_kept_changes(repo.repo_root, kept_steps(journal, run, its))),
        branch=run.branch_name,
        refresh_hint=f"autoresearch report {run.run_id}",
        facts=_run_facts(run, journal) + _certified(repo, run) + _drift(journal, run),
        baseline_score=head.baseline,
        best_score=head.best,
        baseline_estimate=head.baseline_interval,
        best_estimate=head.best_interval,
        improvement_interval=improvement.pooled_change(journal, run, head),
        paired_change=improvement.certified(journal, run),
    )


def _lineage(journal: Journal, run: RunRecord) -> dict[int, int]:
    """A frontier run's iteration → the iteration that kept its parent (0: the root); empty
    for a run without an archive."""
    entered = {e.commit: e.entered for e in search.elites(journal, run.run_id, current=False)}
    return {
        i: entered[commit]
        for i, commit in search.parents(journal, run.run_id).items()
        if commit in entered
    }


def _run_facts(run: RunRecord, journal: Journal) -> tuple[tuple[str, str], ...]:
    loop = run.loop_settings
    facts = [
        ("evaluator", run.evaluator.command),
        (
            "keep policy",
            f"{run.keep_policy} ({run.evaluator.direction} is better)",
        ),
        ("branch", run.branch_name),
        ("worktree", run.worktree_path),
    ]
    if loop.agent:
        facts.append(("agent", loop.agent))
    if run.status == RunStatus.RUNNING and run.phase:
        facts.append(("now", f"iteration {run.iteration + 1} ({run.phase})"))
    return tuple(facts)


def _drift(journal: Journal, run: RunRecord) -> tuple[tuple[str, str], ...]:
    """The drift the run saw (estimates.level_drift): a commit read at two moments."""
    return tuple(("drift", d.text()) for d in estimates.level_drift(journal, run))


def _certified(repo: RepoPaths, run: RunRecord) -> tuple[tuple[str, str], ...]:
    """`autoresearch certify`'s last report of the run's final commit, when there is one."""
    data = read_certification(repo.run(run.run_id).certification, run.last_kept_commit)
    if data is None:
        return ()
    first, *rest = certification_lines(data)
    notes = {level_moved(data): "drift", data.resolution: "certified"}
    facts = [("certified", first)]
    facts += [(notes.get(line.strip(), "ablation"), line.strip()) for line in rest]
    return tuple(facts)


def _own_commit(it: IterationRecord) -> str | None:
    return it.candidate_commit if it.kind != IterationKind.BASELINE else it.base_commit


def _readings(
    journal: Journal, run_id: str, commits: dict[int, str | None]
) -> dict[int, list[tuple[float | None, str | None]]]:
    """(score, log file) of every evaluation of the iteration's own commit, in order: an
    incumbent re-measured during the iteration is another commit's reading."""
    rows = journal.rows(
        "SELECT iteration, purpose, role, commit_sha, status, score, log_file FROM evaluations "
        "WHERE run_id = ? ORDER BY id",
        (run_id,),
    )
    found: dict[int, list[tuple[float | None, str | None]]] = {}
    for r in rows:
        if r["role"] is None:  # recorded before readings had roles
            if r["purpose"] not in OWN_PURPOSES:
                continue
        elif r["role"] not in OWN_ROLES or r["commit_sha"] != commits.get(int(r["iteration"])):
            continue
        score = r["score"] if r["status"] == EvalStatus.PASS else None
        found.setdefault(int(r["iteration"]), []).append((score, r["log_file"]))
    return found


def _patches(logs: Path) -> dict[int, list[Path]]:
    """Saved patches by iteration (iteration-NNNN-<label>.patch)."""
    found: dict[int, list[Path]] = {}
    if logs.is_dir():
        for path in sorted(logs.glob("iteration-*.patch")):
            match = re.match(r"iteration-(\d+)-", path.name)
            if match:
                found.setdefault(int(match.group(1)), []).append(path)
    return found


def _run_row(
    it: IterationRecord,
    readings: list[tuple[float | None, str | None]],
    patches: dict[int, list[Path]],
    estimate: Estimate | None = None,
) -> Row:
    ev = it.evaluator
    agent = it.agent if it.agent is not None else AgentRecord()
    links = [Link(_log_label(i, len(readings)), log) for i, (_, log) in enumerate(readings) if log]
    if agent.log_file:
        links.append(Link("agent log", str(agent.log_file)))
    links += [Link(p.name.split("-", 2)[-1], str(p)) for p in patches.get(it.iteration, [])]
    return Row(
        number=it.iteration,
        decision=it.decision,
        outcome=_outcome(it.decision, ev),
        score=ev.score if ev and ev.status != EvalStatus.ERROR else None,
        description=" ".join((it.description or "").split()),
        reason=it.decision_reason or "",
        notes=(*it.artifact_notes, *it.decision_notes),
        readings=tuple(s for s, _ in readings if s is not None),
        commit=_own_commit(it),
        agent=_agent_name(agent),
        lane=_lane(it, agent),
        tokens=_tokens(agent),
        cost_usd=agent.usage.cost_usd,
        seconds=_seconds(agent, ev),
        at=it.created_at,
        links=tuple(links),
        estimate=estimate,
    )


def _outcome(decision: DecisionKind | None, ev: StoredEvaluation | None) -> Outcome:
    if ev and ev.status == EvalStatus.ERROR and decision != DecisionKind.KEEP:
        return Outcome.ERROR
    return Outcome.OTHER if decision is None else _DECISIONS.get(decision, Outcome.OTHER)


def _log_label(index: int, count: int) -> str:
    return "evaluator log" if count == 1 else f"evaluator log {index + 1}"


def _agent_name(agent: AgentRecord) -> str | None:
    name = agent.agent
    if not name:
        return None
    return f"{name} ({agent.usage.model})" if agent.usage.model else str(name)


def _lane(it: IterationRecord, agent: AgentRecord) -> str | None:
    """The lane of `run --lanes K` whose session this was; None for a run without lanes
    (the journal's lane 0), so its report has no lane column and no spend per lane."""
    lane = agent.lane if agent.lane is not None else it.lane
    return str(lane) if lane else None


def _tokens(agent: AgentRecord) -> int | None:
    parts = [agent.usage.input_tokens, agent.usage.output_tokens]
    seen = [int(p) for p in parts if isinstance(p, int)]
    return sum(seen) if seen else None


def _seconds(agent: AgentRecord, ev: StoredEvaluation | None) -> float | None:
    parts = [agent.duration_ms, ev.duration_ms if ev else None]
    seen = [p for p in parts if isinstance(p, int | float)]
    return sum(seen) / 1000.0 if seen else None


def _kept_changes(repo_root: Path, steps: Iterable[KeptStep]) -> list[KeptChange]:
    changes = []
    for k in steps:
        diff, cut = _diff(repo_root, k.base, k.commit)
        changes.append(
            KeptChange(
                k.iteration,
                k.commit,
                k.description,
                k.before,
                k.after,
                diff,
                cut,
                k.before_estimate,
                k.after_estimate,
            )
        )
    return changes


def _diff(repo_root: Path, base: str, tip: str) -> tuple[str, bool]:
    try:
        text = git.readable_diff(repo_root, base, tip)
    except GitError as exc:  # a commit gone after `git gc` is reported, not fatal
        return f"(diff unavailable: {exc.message})", False
    if len(text) > MAX_DIFF_CHARS:
        return text[:MAX_DIFF_CHARS], True
    return text, False


# --- experiment sessions -------------------------------------------------------------------


def session_report(journal: Journal, repo_root: Path, session: SessionRecord) -> ReportData:
    """The report model of an experiment session's current segment."""
    logged = sessions.logged_runs(journal, session.session_id, session.segment)
    base = baseline_of([point(r) for r in logged])
    rows = tuple(_session_row(r, base.run if base else None) for r in logged)
    seg = stats(journal, session)
    facts = [
        ("command", session.command),
        ("branch", session.branch),
        ("directory", session.directory),
        ("segment", str(session.segment)),
    ]
    if seg.confidence.value is not None:
        facts.append(("confidence", f"{seg.confidence.value:.2f} × MAD ({seg.confidence.label})"))
    if session.goal:
        facts.insert(0, ("goal", session.goal))
    return ReportData(
        kind=ReportKind.SESSION,
        ident=str(session.session_id),
        title=f"session #{session.session_id} '{session.name}'",
        metric=session.metric,
        unit=session.unit,
        direction=session.direction,
        status=SessionState.CLOSED if session.closed_at else SessionState.OPEN,
        started_at=session.created_at,
        ended_at=session.closed_at,
        generated_at=utc_now_iso(),
        rows=rows,
        kept=tuple(_session_kept(repo_root, logged, base.run if base else None)),
        branch=session.branch,
        refresh_hint="autoresearch exp report",
        facts=tuple(facts),
        paired_change=_session_paired(seg.best_ref()),
    )


def _session_paired(best: BestRef | None) -> PairedChange | None:
    """A session's best against its baseline from its chain of paired keeps (None: none)."""
    if best is None or best.paired is None:
        return None
    return PairedChange(best.paired)


def _session_outcome(run: SessionRunRecord, baseline: int | None) -> Outcome:
    if run.flagged:
        return Outcome.OTHER
    if run.status in UNSCORED:
        return Outcome.ERROR
    if run.number == baseline:
        return Outcome.BASELINE
    return Outcome.KEPT if run.status == Verdict.KEEP else Outcome.DISCARDED


def _session_row(run: SessionRunRecord, baseline: int | None) -> Row:
    asi = run.asi or {}
    notes = [f"{k}: {v}" for k, v in asi.items() if isinstance(v, str)]
    if run.flagged:
        notes.insert(0, f"flagged: {run.flag_reason or 'excluded'}")
    if run.deviations:
        notes.append(f"deviations: {', '.join(run.deviations)}")
    links = [Link("run log", run.log_path)] if run.log_path else []
    if run.patch_path:
        links.append(Link("discarded patch", run.patch_path))
    return Row(
        number=run.number,
        decision=run.status,
        outcome=_session_outcome(run, baseline),
        score=run.metric if run.status not in UNSCORED else None,
        description=" ".join((run.description or "").split()),
        reason=_session_reason(run),
        notes=tuple(notes),
        commit=run.commit_sha,
        seconds=None if run.duration_ms is None else run.duration_ms / 1000.0,
        at=run.started_at,
        links=tuple(links),
    )


def _session_reason(run: SessionRunRecord) -> str:
    if run.timed_out:
        return "timed out"
    if run.error:
        return run.error
    if run.exit_code not in (0, None):
        return f"exit {run.exit_code}"
    return ""


def _session_kept(
    repo_root: Path, logged: list[SessionRunRecord], baseline: int | None
) -> list[KeptChange]:
    changes, before = [], None
    for run in logged:
        if run.status != Verdict.KEEP or run.flagged:
            continue
        if run.number != baseline and run.commit_sha:
            diff, cut = _diff(repo_root, run.base_commit, run.commit_sha)
            description = " ".join((run.description or "").split())
            kept = KeptChange(
                run.number, run.commit_sha, description, before, run.metric, diff, cut
            )
            changes.append(kept)
        before = run.metric
    return changes


def session_report_dir(repo_root: Path, session: SessionRecord) -> Path:
    return session_paths(repo_root, session.session_id).report
