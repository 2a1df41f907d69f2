"""Repair after a crash: finish or roll back the iteration that was in flight, stop the crashed
driver's children, and bring the views back in line with the journal.

Idempotent: running it on a healthy run changes nothing.
"""

from __future__ import annotations

from autoresearch import failpoints
from autoresearch.clock import utc_now_iso
from autoresearch.contracts import candidate as cand
from autoresearch.fsutil import atomic_write_json
from autoresearch.journal import inflight, iteration_records, runs
from autoresearch.states import ArtifactStatus, IterationState, Phase
from autoresearch.supervisor import record, sync
from autoresearch.supervisor.handle import RunContext, RunHandle

CUT_DESCRIPTION = "agent session interrupted by a crash"


def recover(h: RunHandle) -> list[str]:
    """Repair the run; returns one note per repair made."""
    first = not h.state.recovered  # the first repair of this handle: a crashed driver came before
    h.state.recovered = True
    notes = record.reap_stale_children(h)
    notes += finish_interrupted_session(h.context, h.run)
    for it in iteration_records.unfinished_iterations(h.journal, h.run_id):
        if it.state == IterationState.EVALUATING:
            with h.journal.tx() as conn:
                iteration_records.delete_iteration(conn, h.run_id, it.iteration)
            notes.append(
                f"rolled back iteration {it.iteration}: its evaluation was interrupted; "
                "the artifact will be evaluated again"
            )
        elif it.state == IterationState.DECIDED:
            # a lane's iteration is applied in its lane's worktree
            lh = h.for_lane(it.lane) if it.lane != h.lane else h
            record.apply_effect(lh.context, lh.run, it)
            notes.append(f"finished iteration {it.iteration}: applied its {it.decision}")
    h.refresh()
    lanes = (h.run.loop_settings.lanes or 0) > 0
    if first and lanes and h.run.phase == Phase.READY:
        # a keep recorded before the branch moved (a live lanes driver moves it itself)
        notes += record.advance_run_branch(h.context, h.run)
    if h.run.phase == Phase.READY and h.run.views_iteration != h.run.iteration:
        _resync_views(h)
        notes.append(f"rebuilt the run files from the journal (iteration {h.run.iteration})")
    return notes


def _resync_views(h: RunHandle) -> None:
    last = iteration_records.get_iteration(h.journal, h.run_id, h.run.iteration)
    current = sync.file_sha256(h.paths.candidate)
    if current is None or (last is not None and current == last.artifact_sha256):
        sync.write_placeholder(h.context, h.run.last_kept_commit)
    sync.rebuild_views(h)


def finish_interrupted_session(h: RunContext, run: runs.RunRecord) -> list[str]:
    """A session that a crash cut off (the driver, the agent and its git killed at once): its
    work is saved as a patch, the branch is back at the incumbent, and the artifact says
    `interrupted` – a half-written candidate.json, or one the driver never saw the session
    finish, is not a verdict; judged, it is the `interrupted` iteration whose notes name the
    patch. `h` is the run's (the single loop's session) or a lane's (that lane's session,
    numbered by the lane): one rule for both. Call with stale children reaped and git locks
    cleared. Idempotent: a recovery killed half-way is finished by the next."""
    found = inflight.get(h.journal, h.run_id, h.lane)
    if found is None:
        return []
    note = _save_cut_work(h, run, found)
    failpoints.hit("recovery.after_cut_saved")
    data = cand.artifact(
        ArtifactStatus.INTERRUPTED,
        None,
        found.base_commit,
        CUT_DESCRIPTION,
        [note],
        utc_now_iso(),
    )
    atomic_write_json(h.paths.candidate, data)
    with h.journal.tx() as conn:
        inflight.finish(conn, h.run_id, h.lane)
    who = f"session {found.iteration}" if h.lane else f"the session of iteration {found.iteration}"
    return [f"{who} was cut off by a crash: {note}"]


def cut_artifact(data: object) -> bool:
    """Whether an artifact is the one `finish_interrupted_session` wrote (no session ended)."""
    return isinstance(data, dict) and data.get("description") == CUT_DESCRIPTION


def _save_cut_work(h: RunContext, run: runs.RunRecord, found: inflight.InflightSession) -> str:
    """Save the session's work past its base, then check the branch out at the incumbent (a
    lane's may have moved on while the session ran). Saved once: the first save, taken with
    the session's processes stopped, holds all of its work; a repeat after a kill during or
    after the reset would see a half-reset tree or, in a lane, the commits other lanes kept
    meanwhile, and must not overwrite it."""
    path, base = h.paths.cut_patch(found.iteration), found.base_commit
    return record.save_and_reset(h, run, path, base, at=run.last_kept_commit or base, once=True)
