"""record.restore_branch, applying a decision to the run worktree: what lies past the kept
commit is saved as a patch before the reset (commits, edits, staged and untracked files), the
run branch is checked out again wherever the session left HEAD, and untracked files stay in
place for the next session's clean-up. Likewise `advance_run_branch`, the run branch following
a lanes keep: only tracked edits are saved first. Pins their behaviour now that the save and
the reset go through the one owner, reset.py.
"""

from __future__ import annotations

from autoresearch import git as g
from autoresearch.journal import runs
from autoresearch.supervisor import record
from autoresearch.supervisor.handle import RunHandle
from helpers import edit_and_commit, git


def test_work_past_the_kept_commit_is_saved_then_reset_and_untracked_files_stay(
    run: RunHandle,
) -> None:
    h, target = run, run.run.last_kept_commit or ""
    edit_and_commit(h.worktree, {"past.txt": "committed past the keep\n"}, "past")
    (h.worktree / "past.txt").write_text("edited after the commit\n")
    (h.worktree / "staged.txt").write_text("staged, never committed\n")
    git(h.worktree, "add", "staged.txt")
    (h.worktree / "untracked.txt").write_text("untracked\n")

    notes = record.restore_branch(h.context, h.run, 1, "keep", target)

    patch = h.paths.patch(1, "keep")
    assert notes == [f"changes past {target[:12]} saved to {patch}"]
    saved = patch.read_text()
    for name in ("past.txt", "edited after the commit", "staged.txt", "untracked.txt"):
        assert name in saved
    assert g.head(h.worktree) == target
    assert g.head_branch(h.worktree) == record.branch_ref(h)
    assert not (h.worktree / "past.txt").exists() and not (h.worktree / "staged.txt").exists()
    assert (h.worktree / "untracked.txt").read_text() == "untracked\n"  # not cleaned here
    assert git(h.worktree, "status", "--porcelain") == "?? untracked.txt"
    assert (
        record.restore_branch(h.context, h.run, 1, "keep", target) == []
    )  # idempotent: nothing to do


def test_head_left_off_the_branch_is_checked_out_again_without_a_patch_for_a_discard(
    run: RunHandle,
) -> None:
    h, target = run, run.run.last_kept_commit or ""
    past = edit_and_commit(h.worktree, {"past.txt": "a discarded candidate\n"}, "candidate")
    git(h.worktree, "checkout", "-q", "--detach", past)
    (h.worktree / "untracked.txt").write_text("untracked\n")

    notes = record.restore_branch(h.context, h.run, 1, None, target)

    assert notes == [
        f"the session left HEAD off the run branch; {h.branch_name} was checked out "
        f"again at {target[:12]}"
    ]
    assert not h.paths.patch(1, "keep").exists() and not list(h.paths.logs.glob("*.patch"))
    assert g.head(h.worktree) == target
    assert g.head_branch(h.worktree) == record.branch_ref(h)
    assert (h.worktree / "untracked.txt").exists()


def _kept_moved_on(h: RunHandle) -> tuple[str, str]:
    """A lane's keep moved the incumbent past the run worktree's HEAD (the run branch follows
    it with `advance_run_branch`): (HEAD, the new kept commit)."""
    head = h.run.last_kept_commit or ""
    kept = edit_and_commit(h.worktree, {"kept.txt": "a lane's keep\n"}, "a keep")
    git(h.worktree, "reset", "-q", "--hard", head)
    with h.journal.tx() as conn:
        runs.update_run(conn, h.run_id, last_kept_commit=kept)
    h.refresh()
    return head, kept


def test_the_run_branch_follows_the_keep_and_edits_in_the_run_worktree_are_saved_first(
    run: RunHandle,
) -> None:
    h = run
    head, kept = _kept_moved_on(h)
    (h.worktree / "value.txt").write_text("edited in the run worktree\n")
    (h.worktree / "untracked.txt").write_text("untracked\n")

    notes = record.advance_run_branch(h.context, h.run)

    patch = h.paths.patch(h.run.iteration, "run-worktree")
    assert notes == [
        f"changes past {head[:12]} saved to {patch}",
        f"run branch {h.branch_name} now at the kept commit {kept[:12]}",
    ]
    saved = patch.read_text()
    assert "edited in the run worktree" in saved and "untracked.txt" in saved
    assert "kept.txt" not in saved
    assert g.head(h.worktree) == kept and g.head_branch(h.worktree) == record.branch_ref(h)
    assert (h.worktree / "value.txt").read_text() == "1\n"
    assert git(h.worktree, "status", "--porcelain") == "?? untracked.txt"  # not cleaned
    assert record.advance_run_branch(h.context, h.run) == []  # idempotent


def test_a_clean_run_worktree_follows_the_keep_without_a_patch(run: RunHandle) -> None:
    h = run
    _, kept = _kept_moved_on(h)
    (h.worktree / "untracked.txt").write_text("untracked, not tracked work\n")

    notes = record.advance_run_branch(h.context, h.run)

    assert notes == [f"run branch {h.branch_name} now at the kept commit {kept[:12]}"]
    assert not list(h.paths.logs.glob("*.patch"))
    assert g.head(h.worktree) == kept and g.head_branch(h.worktree) == record.branch_ref(h)
    assert git(h.worktree, "status", "--porcelain") == "?? untracked.txt"
