"""Bring the file views of a run in line with the journal after each recorded iteration.

The journal's `views_iteration` says which iteration the views reflect. When it is exactly one
behind, the ledger and results.tsv are appended (O(1)); otherwise they are rebuilt whole. The
placeholder artifact is written only over an artifact that was already processed, so a session
artifact that is still waiting is never destroyed.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from autoresearch import failpoints
from autoresearch.clock import utc_now_iso
from autoresearch.contracts import candidate as cand
from autoresearch.contracts.candidate import placeholder
from autoresearch.contracts.json_input import load_json
from autoresearch.contracts.sandbox import memory_enabled
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.evaluate import EvaluationRecord
from autoresearch.fsutil import (
    FileRefused,
    atomic_write_json,
    atomic_write_view,
    dump_json,
    read_regular,
)
from autoresearch.journal import iteration_records, runs, views
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.runs import RunRecord
from autoresearch.redact import redact, redact_value
from autoresearch.states import RunStatus
from autoresearch.supervisor import estimates, instructions, memory, plateau
from autoresearch.supervisor.handle import RunContext, RunHandle, pid_host


@dataclass(frozen=True)
class ArtifactBytes:
    """candidate.json as read, bounded: its bytes, or why it was refused, and a digest that
    tells one state of the file from another (None: there is no file)."""

    raw: bytes | None
    refused: str | None
    sha256: str | None

    @property
    def from_session(self) -> bool:
        """The file holds what a session wrote, not the supervisor's placeholder: a refused or
        unparsable one too (judging it is step's work, and fails the run)."""
        if self.sha256 is None:
            return False
        try:
            data = load_json(self.raw) if self.raw is not None else None
        except ValueError:
            return True
        return data is None or not cand.is_placeholder(data)


def read_artifact(path: Path) -> ArtifactBytes:
    """Read the artifact a session wrote: a regular file only, never through a symlink, never
    waiting on a FIFO, at most cand.MAX_ARTIFACT_BYTES."""
    try:
        raw = read_regular(path, cand.MAX_ARTIFACT_BYTES)
    except FileNotFoundError:
        return ArtifactBytes(None, None, None)
    except FileRefused as exc:
        reason = cand.MSG_NOT_REGULAR.format(path=path, why=exc)
        return ArtifactBytes(None, reason, hashlib.sha256(reason.encode()).hexdigest())
    return ArtifactBytes(raw, None, hashlib.sha256(raw).hexdigest())


def file_sha256(path: Path) -> str | None:
    return read_artifact(path).sha256


def write_placeholder(h: RunContext, kept: str | None) -> None:
    """The handoff a session overwrites, naming `kept` (the commit to build on)."""
    path = h.paths.candidate
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)  # a session made a folder of it: nothing to keep in the handoff
    atomic_write_view(path, dump_json(placeholder(kept or "", utc_now_iso())))


def write_instructions(h: RunContext, run: RunRecord) -> None:
    """The next session's prompt, from `run` as the session should see it."""
    recent = iteration_records.recent_iterations(h.journal, h.run_id, 3)
    text = instructions.render(
        run,
        recent,
        mission_text=run.sandbox.mission_text,
        sandbox_body=run.sandbox.body,
        results_file=str(h.results_file),
        candidate_file=str(h.paths.candidate),
        tried=iteration_records.measured_iterations(h.journal, h.run_id, instructions.TRIED_CAP),
        earlier=earlier_runs_digest(h, run),
        plateau=plateau.EXPLORE_LINES if plateau.exploring(h.journal, run) else (),
    )
    # The agent's model reads this (and its provider may keep it): no secret goes in.
    atomic_write_view(h.paths.instructions, redact(text))


# The digest of a run's earlier runs, made once per process: the instructions are written after
# every step, and neither the frozen sandbox.md nor the other (ended) runs change meanwhile,
# so parsing the one and reading the others again each step was work on the hot path.
_EARLIER: dict[tuple[str, str], list[str]] = {}


def earlier_runs_digest(h: RunContext, run: RunRecord) -> list[str]:
    """Memory across runs: the digest of the mission's earlier runs, unless sandbox.md's
    `search: {memory: false}` turned it off."""
    key = (str(h.journal.path), h.run_id)
    if key not in _EARLIER:
        enabled = memory_enabled(h.sandbox.sandbox_text)
        found = memory.earlier_runs(h.journal, run) if enabled else []
        _EARLIER[key] = memory.digest_lines(found) if enabled else []
    return _EARLIER[key]


def write_active_pointer(h: RunHandle, driving: bool = True) -> None:
    pid, host = pid_host()
    now = utc_now_iso()
    pointer = views.active_run_pointer(h.run, h.repo, pid if driving else None, host, now)
    atomic_write_json(h.repo.active_run, pointer)
    h.state.pointer_written = driving


def rebuild_views(h: RunHandle) -> None:
    """Rewrite every view from the journal (used after a crash or on request)."""
    its = iteration_records.all_iterations(h.journal, h.run_id)
    now = utc_now_iso()
    views.write_ledger(h.paths.ledger, h.run, its, now)
    if h.results_file.parent.is_dir():
        views.write_tsv(h.results_file, its, estimates.row_means(h.journal, h.run, its))
    _finish(h, iteration_records.latest_evaluation(h.journal, h.run_id))


def sync_after_iteration(
    h: RunHandle,
    it: IterationRecord,
    evaluation: EvaluationRecord | None,
    processed_sha: str | None,
) -> None:
    """Update the views after iteration `it` was recorded and applied (h.run is current).

    Each view is written once a step, and each has a reader before the next step (issue 36):
    candidate.json is the handoff the next step judges; instructions.md is the prompt the
    next session starts with (the loop launches it at once; after `step` by hand, the user's
    agent; a lane's is written by lanes._write_handoff just before its session, naming the
    parent the strategy picks, so a lane's step leaves it as its session read it);
    results.tsv is the table the instructions point the session to, and the ledger its whole
    record (both appended, O(1)); manifest.json and latest-evaluator-result.json are what
    scripts and people poll between steps (`status` and MCP read the journal instead). Each
    replace costs little (fsutil's exchange); only the pointer is written just once."""
    now = utc_now_iso()
    appended = h.run.views_iteration == it.iteration - 1 and views.append_ledger(
        h.paths.ledger, it, now
    )
    failpoints.hit("views.after_ledger")
    score = estimates.row_mean(h.journal, h.run, it)
    appended = appended and views.append_tsv(h.results_file, it, score)
    if not appended:
        its = iteration_records.all_iterations(h.journal, h.run_id)
        views.write_ledger(h.paths.ledger, h.run, its, now)
        views.write_tsv(h.results_file, its, estimates.row_means(h.journal, h.run, its))
    if processed_sha is None or file_sha256(h.paths.candidate) == processed_sha:
        write_placeholder(h.context, h.run.last_kept_commit)
    failpoints.hit("views.after_placeholder")
    _finish(h, evaluation)


def _finish(h: RunHandle, evaluation: EvaluationRecord | StoredEvaluation | None) -> None:
    if evaluation is not None:
        atomic_write_view(h.paths.latest_evaluator, dump_json(redact_value(evaluation.to_dict())))
    estimates.write_manifest(h.journal, h.run, h.repo)
    if not h.lane:  # a lane's prompt is written by the lanes driver as its session starts
        write_instructions(h.context, h.run)
    if not h.state.pointer_written or h.run.status != RunStatus.RUNNING:
        write_active_pointer(h)
    with h.journal.tx() as conn:
        runs.update_run(
            conn, h.run_id, views_iteration=h.run.iteration, updated_at=h.run.updated_at
        )
    h.state.saw(replace(h.run, views_iteration=h.run.iteration))
