"""What an agent session leaves, the single loop's and a lane's alike: its artifact and its
worktree made consistent after it ends (work is never lost: a session that timed out, was
interrupted, or left uncommitted changes has them saved as a patch before the worktree is
reset), what its iteration records of it, and the run's history it is shown.
"""

from __future__ import annotations

from collections.abc import Callable

from autoresearch import git
from autoresearch.agents.base import AgentResult, PastIteration
from autoresearch.clock import utc_now_iso
from autoresearch.contracts import candidate as cand
from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.json_input import load_json
from autoresearch.contracts.tune import tried_values
from autoresearch.fsutil import atomic_write_json
from autoresearch.journal import iteration_records, runs
from autoresearch.states import ArtifactStatus, DecisionKind
from autoresearch.supervisor import record, sync
from autoresearch.supervisor.handle import RunContext, RunHandle
from autoresearch.supervisor.safety import dirty_entries

MSG_NO_ARTIFACT = "agent session wrote no candidate artifact"


def session_failure(
    result: AgentResult, decision: DecisionKind, wrote_artifact: bool
) -> str | None:
    """Why a session counts toward the agent failure limit, or None.

    A session that broke (could not start, crashed, reported an error, was denied) or wrote
    no artifact counts unless it still produced a candidate that was judged."""
    if decision not in (DecisionKind.NOOP, DecisionKind.INTERRUPTED):
        return None
    if result.cancelled:
        return None
    if result.failure_reason:
        return result.failure_reason
    return None if wrote_artifact else MSG_NO_ARTIFACT


def session_record(result: AgentResult, wrote: bool, lane: int | None = None) -> AgentRecord:
    """What the iteration records of a session: its end, and what autoresearch concluded
    beside the agent's self-report (a failure; a stop by an operator or a signal is none)."""
    failure = result.failure_reason or (None if wrote else MSG_NO_ARTIFACT)
    return result.record(lane, failure if failure and not result.cancelled else None)


def history(h: RunContext, after: int) -> list[PastIteration]:
    """What an agent may know of the run: its recorded iterations, never the journal."""
    return [
        PastIteration(
            it.iteration,
            it.decision,
            it.description,
            tuple(it.artifact_notes),
            tried_values(it.artifact_notes),
            it.base_commit,
            it.kept_commit if it.decision == DecisionKind.KEEP else None,
        )
        for it in iteration_records.iterations_after(h.journal, h.run_id, after)
    ]


class RunHistory:
    """`history(h, 0)` as a tuple, kept current by reading only the iterations recorded since
    the last call (a lane ships the whole history with every session; read anew it cost
    0.76 s at 10,000 iterations).

    Appending is exact because what an agent sees of a recorded iteration never changes: an
    iteration is invisible while it is evaluating (and only then rolled back), becomes
    visible with its decision, and afterwards only its state and decision notes are written;
    iterations are recorded in increasing numbers, one at a time. That is checked, not
    assumed: when the journal's count of iteration rows up to the newest one held (in any
    state: an evaluating row below it would be a surprise too) differs from what is held,
    the history is read anew."""

    def __init__(self, h: RunHandle) -> None:
        self._h = h
        self._past: tuple[PastIteration, ...] = ()

    def snapshot(self) -> tuple[PastIteration, ...]:
        h, past = self._h, self._past
        last = past[-1].iteration if past else 0
        if past and runs.iteration_rows(h.journal, h.run_id, 0, last) != len(past):
            past, last = (), 0
        new = history(h.context, last)
        if new or not past:
            self._past = (*past, *new)
        return self._past


# Save what a session left past a base, then reset: (label, base, reset_to) → the ledger note.
Saver = Callable[[str, str, str | None], str]


def after_session(
    h: RunContext,
    run: runs.RunRecord,
    from_git: bool,
    result: AgentResult,
    iteration: int,
    base: str,
    save: Saver | None = None,
) -> list[str]:
    """Make the artifact and the worktree consistent after a session ended, losing nothing.

    `from_git`: the agent cannot write the artifact (Agent.artifact_from_git). `save` names
    the patches (default: by `iteration`; a lane names them by its session)."""

    def saved(label: str, since: str, reset_to: str | None = None) -> str:
        if save is not None:
            return save(label, since, reset_to)
        return record.save_and_reset(h, run, h.paths.patch(iteration, label), since, reset_to)

    notes = _agent_notes(result)
    if result.timed_out or result.cancelled:
        label = "timed-out" if result.timed_out else "interrupted"
        notes.append(saved(label, base))
        write_artifact(h, ArtifactStatus.INTERRUPTED, None, base, f"agent session {label}", notes)
        return []
    artifact = read_artifact(h)
    if cand.is_placeholder(artifact):
        if from_git:
            return notes + _artifact_from_git(h, iteration, base)
        # the placeholder's own text would read as the agent's: say what happened instead
        write_artifact(h, ArtifactStatus.NOOP, None, base, MSG_NO_ARTIFACT, [])
        return [*notes, MSG_NO_ARTIFACT]
    status = artifact.get("status") if isinstance(artifact, dict) else None
    if status == ArtifactStatus.CANDIDATE and dirty_entries(h.worktree, h.dirt):
        head = git.head(h.worktree)
        notes.append(saved("uncommitted", head, head))
        notes.append("uncommitted changes were not evaluated (saved above)")
    return notes


def _agent_notes(result: AgentResult) -> list[str]:
    if result.cancelled and not result.timed_out:
        return ["agent session was stopped"]
    reason = result.failure_reason
    notes = [reason] if reason else []
    denied = "agent was denied: " + "; ".join(result.usage.denials)
    if result.usage.denials and reason != denied:  # a crash that was also denied: both
        notes.append(denied)
    return notes


def read_artifact(run: RunContext) -> object:
    raw = sync.read_artifact(run.paths.candidate).raw
    try:
        return load_json(raw) if raw is not None else None
    except ValueError:
        return None


def _artifact_from_git(run: RunContext, iteration: int, base: str) -> list[str]:
    """For agents that cannot write the artifact: changes → a candidate commit, none → noop."""
    message = f"autoresearch: {run.mission_slug} iteration {iteration} (agent edits)"
    paths: list[str] = []
    for entry in dirty_entries(run.worktree, run.dirt):  # runtime files stay out
        paths += [entry.path, *([entry.orig_path] if entry.orig_path else [])]
    commit = git.commit_all(run.worktree, message, pathspec=paths) if paths else None
    head = commit or git.head(run.worktree)
    if head == base:
        write_artifact(run, ArtifactStatus.NOOP, None, base, "agent made no changes", [])
        return []
    write_artifact(
        run, ArtifactStatus.CANDIDATE, head, base, git.commit_message(run.worktree, head), []
    )
    return ["artifact derived from git: the agent's changes were committed by autoresearch"]


def write_artifact(
    run: RunContext,
    status: ArtifactStatus,
    commit: str | None,
    base: str,
    description: str,
    notes: list[str],
) -> None:
    data = cand.artifact(status, commit, base, description, notes, utc_now_iso())
    atomic_write_json(run.paths.candidate, data)
