"""Repair after a crash: finish or roll back the iteration that was in flight, stop the crashed
driver's children, and bring the views back in line with the journal.

Idempotent: running it on a healthy run changes nothing.
"""

from __future__ import annotations

from autoresearch.clock import utc_now_iso
from autoresearch.contracts import candidate as cand
from autoresearch.fsutil import atomic_write_json
from autoresearch.journal import inflight, runs
from autoresearch.states import ArtifactStatus, IterationState, Phase
from autoresearch.supervisor import record, sync
from autoresearch.supervisor.handle import RunHandle


def recover(h: RunHandle) -> list[str]:
    """Repair the run; returns one note per repair made."""
    first = not h.recovered  # the first repair of this handle: a crashed driver came before
    h.recovered = True
    notes = record.reap_stale_children(h)
    notes += finish_interrupted_session(h)
    for it in runs.unfinished_iterations(h.journal, h.run_id):
        if it.state == IterationState.EVALUATING:
            with h.journal.tx() as conn:
                runs.delete_iteration(conn, h.run_id, it.iteration)
            notes.append(
                f"rolled back iteration {it.iteration}: its evaluation was interrupted; "
                "the artifact will be evaluated again"
            )
        elif it.state == IterationState.DECIDED:
            # a lane's iteration is applied in its lane's worktree
            record.apply_effect(h.for_lane(it.lane) if it.lane != h.lane else h, it)
            notes.append(f"finished iteration {it.iteration}: applied its {it.decision}")
    h.refresh()
    lanes = (h.run.loop_settings.lanes or 0) > 0
    if first and lanes and h.run.phase == Phase.READY:
        # a keep recorded before the branch moved (a live lanes driver moves it itself)
        notes += record.advance_run_branch(h)
    if h.run.phase == Phase.READY and h.run.views_iteration != h.run.iteration:
        _resync_views(h)
        notes.append(f"rebuilt the run files from the journal (iteration {h.run.iteration})")
    return notes


def _resync_views(h: RunHandle) -> None:
    last = runs.get_iteration(h.journal, h.run_id, h.run.iteration)
    current = sync.file_sha256(h.paths.candidate)
    if current is None or (last is not None and current == last.artifact_sha256):
        sync.write_placeholder(h)
    sync.rebuild_views(h)


def finish_interrupted_session(h: RunHandle) -> list[str]:
    """A session that a crash cut off (the driver, the agent and its git killed at once): its
    work is saved as a patch, the run's branch is back at the base, and the artifact says
    `interrupted` – a half-written candidate.json, or one the driver never saw the session
    finish, is not a verdict. Call with stale children reaped and git locks cleared."""
    found = inflight.get(h.journal, h.run_id)
    if found is None:
        return []
    note = record.save_and_reset(h, found.iteration, "interrupted", found.base_commit)
    data = cand.artifact(
        ArtifactStatus.INTERRUPTED,
        None,
        found.base_commit,
        "agent session interrupted by a crash",
        [note],
        utc_now_iso(),
    )
    atomic_write_json(h.paths.candidate, data)
    with h.journal.tx() as conn:
        inflight.finish(conn, h.run_id)
    return [f"the session of iteration {found.iteration} was cut off by a crash: {note}"]
