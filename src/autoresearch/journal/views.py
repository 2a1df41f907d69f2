"""File views of the journal (supervisor.md §5): ledger, latest result, results.tsv (the manifest:
journal/manifest.py).

Renderers are pure apart from the redaction (autoresearch.redact) every view goes through on
its way out: the journal keeps the raw record, the views are what people read and share.
Writers are atomic (temp + rename), except the two append-only views –
the ledger and results.tsv – which are appended in O(1) so that an iteration's cost never grows
with the run. An append that was torn by a crash is detected (the journal records which
iteration the views reflect) and the file is rebuilt whole from the journal.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from autoresearch.fsutil import atomic_write_text
from autoresearch.paths import RepoPaths
from autoresearch.redact import redact, redact_value
from autoresearch.states import DecisionKind, EvalStatus, ProcessState, RunStatus

if TYPE_CHECKING:  # read, never built here: a hook that only formats a score (format_score)
    # imports neither the run store nor the contracts it decodes (issue 36)
    from autoresearch.contracts.stored_evaluation import StoredEvaluation
    from autoresearch.journal.iteration_records import IterationRecord
    from autoresearch.journal.runs import RunRecord

SCHEMA_VERSION = 1
TSV_HEADER = "iteration\tcommit\tpass\tscore\tstatus\tdescription\n"
_LEDGER_TAIL_MARK = b'\n  ],\n  "updated_at": '


def format_score(value: float | None) -> str:
    """Scores print as numbers; integral values without `.0`."""
    if value is None:
        return ""
    if math.isfinite(value) and float(value).is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(float(value))


NOT_RUN = "not run"


def evaluation_text(
    evaluator: StoredEvaluation | None, decision: DecisionKind | None, reason: str | None
) -> str:
    """What an iteration's evaluation came to, in one cell (status, MCP run_status): the
    evaluator's status, or – never measured – `not run`, with the pinned reason of a discard
    decided without a reading (`not run: replay conflict`, `not run: harness changed: …`)."""
    if evaluator:
        # a timeout is recorded as status error (the contract's three statuses); the cell
        # names what happened, as the live line's `discard (timeout)` does
        return str(ProcessState.TIMEOUT) if evaluator.timed_out else evaluator.status_text
    if decision is None or decision == DecisionKind.BASELINE:
        return ""
    why = unmeasured_reason(evaluator, decision, reason)
    return f"{NOT_RUN}: {why}" if why else NOT_RUN


class Measured(Protocol):
    """What `decision_label` reads of an evaluation: a step's record (evaluate.EvaluationRecord)
    or the journal's (StoredEvaluation)."""

    @property
    def status(self) -> EvalStatus | None: ...

    @property
    def timed_out(self) -> bool: ...


def decision_label(
    evaluator: Measured | None, decision: DecisionKind | None, reason: str | None
) -> str | None:
    """Why a decision came out as it did, in a word (the live line's `discard (timeout)`): a
    candidate not kept whose evaluation did not pass, `fail`, `timeout` or `error`; one never
    measured, the pinned reason of its discard (`unmeasured_reason`); else None."""
    if not evaluator:
        return unmeasured_reason(None, decision, reason)
    if decision == DecisionKind.KEEP:
        return None
    if evaluator.timed_out:
        return str(ProcessState.TIMEOUT)
    status = evaluator.status
    return str(status) if status in (EvalStatus.FAIL, EvalStatus.ERROR) else None


def unmeasured_reason(
    evaluator: StoredEvaluation | None, decision: DecisionKind | None, reason: str | None
) -> str | None:
    """The pinned reason of a discard decided without a reading (`replay conflict`), or None."""
    if evaluator or decision != DecisionKind.DISCARD or not reason:
        return None
    return reason


def ledger_entry(it: IterationRecord) -> dict[str, object]:
    entry: dict[str, object] = {
        "iteration": it.iteration,
        "kind": it.kind,
        "decision": it.decision,
        "decision_reason": it.decision_reason,
        "candidate_status": it.candidate_status,
        "base_commit": it.base_commit,
        "candidate_commit": it.candidate_commit,
        "kept_commit": it.kept_commit,
        "keep_policy": it.keep_policy,
        "evaluator": it.evaluator.to_dict() if it.evaluator is not None else None,
        "created_at": it.created_at,
        "notes": [*it.artifact_notes, *it.decision_notes],
        "description": it.description,
    }
    agent = it.shown_agent()
    if agent:
        entry["agent"] = agent.to_dict()
    return dict(redact_value(entry))


def _entry_text(entry: dict[str, object]) -> str:
    body = json.dumps(entry, indent=2, ensure_ascii=False)
    return "\n".join("    " + line for line in body.splitlines())


def _ledger_tail(updated_at: str) -> str:
    return f'\n  ],\n  "updated_at": {json.dumps(updated_at)}\n}}\n'


def ledger_text(run: RunRecord, entries: list[dict[str, object]], updated_at: str) -> str:
    """The whole ledger; `append_ledger` produces byte-identical files entry by entry."""
    head = (
        "{\n"
        f'  "schema_version": {SCHEMA_VERSION},\n'
        f'  "run_id": {json.dumps(run.run_id)},\n'
        f'  "created_at": {json.dumps(run.created_at)},\n'
        '  "entries": ['
    )
    if not entries:
        return head + f'],\n  "updated_at": {json.dumps(updated_at)}\n}}\n'
    body = ",".join("\n" + _entry_text(e) for e in entries)
    return head + body + _ledger_tail(updated_at)


def write_ledger(path: Path, run: RunRecord, its: list[IterationRecord], updated_at: str) -> None:
    atomic_write_text(path, ledger_text(run, [ledger_entry(i) for i in its], updated_at))


def append_ledger(path: Path, it: IterationRecord, updated_at: str) -> bool:
    """Append one entry in place; False when the file is not in the expected shape."""
    try:
        with path.open("r+b") as handle:
            size = handle.seek(0, 2)
            window = min(size, 4096)
            handle.seek(size - window)
            tail = handle.read(window)
            mark = tail.rfind(_LEDGER_TAIL_MARK)
            if mark < 0 or not tail.rstrip().endswith(b"}"):
                return False
            handle.seek(size - window + mark)
            addition = ",\n" + _entry_text(ledger_entry(it)) + _ledger_tail(updated_at)
            handle.write(addition.encode("utf-8"))
            handle.truncate()
    except FileNotFoundError:
        return False
    return True


def tsv_row(it: IterationRecord, score: float | None = None) -> str:
    """One row; `score`: the mean of the commit's readings as of the decision (estimates),
    else the iteration's own evaluation's score."""
    ev = it.evaluator
    commit = it.candidate_commit or it.kept_commit or it.base_commit or ""
    passed = ev.passed if ev else None
    cells = [
        str(it.iteration),
        commit[:7],
        "" if passed is None else ("true" if passed else "false"),
        format_score((ev.score if ev else None) if score is None else score),
        it.decision or "",
        " ".join(redact(it.description or "").replace("\t", " ").splitlines()),
    ]
    return "\t".join(cells) + "\n"


def write_tsv(
    path: Path, its: list[IterationRecord], scores: dict[int, float] | None = None
) -> None:
    scores = scores or {}
    rows = "".join(tsv_row(i, scores.get(i.iteration)) for i in its)
    atomic_write_text(path, TSV_HEADER + rows)


def append_tsv(path: Path, it: IterationRecord, score: float | None = None) -> bool:
    """Append one row; False when the file is missing (then it is rebuilt)."""
    if not path.exists():
        return False
    with path.open("a", encoding="utf-8") as handle:
        handle.write(tsv_row(it, score))
    return True


def active_run_pointer(
    run: RunRecord, repo: RepoPaths, pid: int | None, host: str, now: str
) -> dict[str, object]:
    return {
        "schema_version": SCHEMA_VERSION,
        "active": run.status == RunStatus.RUNNING,
        "run_id": run.run_id,
        "mission_slug": run.mission_slug,
        "repo_root": str(repo.repo_root),
        "worktree_path": run.worktree_path,
        "status": run.status,
        "pid": pid,
        "host": host,
        "updated_at": now,
    }
