"""recovery.finish_interrupted_session on a session a crash cut off: everything it left past its
base – commits, a tracked edit, a file staged but never committed, an untracked file – is saved
in one patch, then the branch is checked out at the incumbent (a lane's may have moved on
while the session ran) and the untracked work is removed, runtime dirt spared. Saved once: a
repeat after a kill keeps the first patch. Pins the saved patch and the tree after, for the
single loop and for a lane."""

from __future__ import annotations

import json
import re
from pathlib import Path

from autoresearch.journal import inflight, runs
from autoresearch.supervisor import recovery
from autoresearch.supervisor.handle import RunHandle
from helpers import LEFT_WORK, applied_patch, assert_work_reset, edit_and_commit, git, leave_work


def test_the_single_loops_cut_session_is_saved_whole_then_reset(
    run: RunHandle, tmp_path: Path
) -> None:
    h = run
    base = h.run.last_kept_commit or ""
    with h.journal.tx() as conn:
        inflight.start(conn, h.run_id, 1, base)
    leave_work(h.worktree)

    notes = recovery.finish_interrupted_session(h.context, h.run)

    patch = h.paths.patch(1, "interrupted")
    note = f"changes past {base[:12]} saved to {patch}"
    assert notes == [f"the session of iteration 1 was cut off by a crash: {note}"]
    assert applied_patch(h.worktree, base, patch, tmp_path / "applied") == LEFT_WORK
    assert_work_reset(h.worktree, h.branch_name, base)
    assert inflight.get(h.journal, h.run_id) is None
    assert recovery.cut_artifact(json.loads(h.paths.candidate.read_text()))
    assert (
        recovery.finish_interrupted_session(h.context, h.run) == []
    )  # idempotent: nothing in flight

    # a repeat (the recovery killed after the save) keeps the first patch as it is
    saved = patch.read_bytes()
    with h.journal.tx() as conn:
        inflight.start(conn, h.run_id, 1, base)
    (h.worktree / "value.txt").write_text("8\n")
    assert recovery.finish_interrupted_session(h.context, h.run) == notes
    assert patch.read_bytes() == saved
    assert (h.worktree / "value.txt").read_text() == "1\n"


def test_a_lanes_cut_session_is_saved_past_its_base_and_reset_to_the_moved_incumbent(
    run: RunHandle, tmp_path: Path
) -> None:
    h = run
    base = h.run.last_kept_commit or ""
    lh = h.for_lane(1)
    git(h.repo.repo_root, "worktree", "add", "-q", "-b", lh.branch_name, str(lh.worktree), base)
    # another lane kept meanwhile: the incumbent moved past the session's base
    kept = edit_and_commit(h.worktree, {"kept.txt": "another lane's keep\n"}, "a keep")
    with h.journal.tx() as conn:
        runs.update_run(conn, h.run_id, last_kept_commit=kept)
        inflight.start_lane(conn, h.run_id, 1, 3, base)
    lh.refresh()
    leave_work(lh.worktree)

    notes = recovery.finish_interrupted_session(lh.context, lh.run)

    patch = lh.paths.session_patch(3, "unfinished-session")
    assert re.fullmatch(r".*/lanes/1/logs/session-0003-unfinished-session\.patch", str(patch))
    assert notes == [f"session 3 was cut off by a crash: changes past {base[:12]} saved to {patch}"]
    assert (
        applied_patch(lh.worktree, base, patch, tmp_path / "applied") == LEFT_WORK
    )  # not kept.txt
    assert_work_reset(lh.worktree, lh.branch_name, kept)
    assert (lh.worktree / "kept.txt").exists()
