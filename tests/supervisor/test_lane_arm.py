"""What a lanes driver does to each lane's worktree when it starts (`lanes._Driver._arm`), driven
in process by `run_lanes` with its stop signal already set: every lane is armed, then the
driver stops before any session. Pins the save-then-reset and the reaping there:
* work a previous driver left in a lane (commits past the incumbent, a tracked edit, a staged
  file, an untracked file; HEAD anywhere) is saved as a patch past the incumbent, then the lane
  branch is checked out at it and the untracked work removed, runtime dirt spared;
* a lane whose branch is past its finished candidate's commit (a driver killed between a replay
  and rewriting the artifact), or whose tree is dirty at it (killed inside the replay's
  checkout), is put back at that commit on a clean tree, what lay past it saved;
* a stale git lock in a lane's worktree is removed, and said so."""

from __future__ import annotations

import sys
from pathlib import Path

from autoresearch import git as g
from autoresearch.agents import AgentConfig
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.lanes import run_lanes
from autoresearch.supervisor.loop import MSG_PROCESSING_PENDING, LoopLimits, StopSignal
from autoresearch.supervisor.prepare import prepare
from helpers import (
    LEFT_WORK,
    QuietLanes,
    applied_patch,
    artifact,
    assert_work_reset,
    edit_and_commit,
    git,
    leave_work,
    write_artifact,
)

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"


class _Notes(QuietLanes):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        self.notes.append(message)


def _arm(h: RunHandle) -> list[str]:
    """Arm both lanes of a `--lanes 2` driver, then stop: the notes it gave."""
    signal, observer = StopSignal(), _Notes()
    signal.set("test")
    limits = LoopLimits(max_iterations=4, max_noops=0, lanes=2)
    outcome = run_lanes(h, AgentConfig(AGENT), limits, None, observer, signal)
    assert outcome.interrupted and outcome.sessions == 0
    return observer.notes


def test_work_left_in_a_lane_is_saved_then_the_lane_is_reset_to_the_incumbent(
    mission_dir: Path, tmp_path: Path
) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        assert _arm(h) == []  # fresh lanes: nothing to save
        kept = h.run.last_kept_commit or ""
        lanes = [h.for_lane(1), h.for_lane(2)]
        for lh in lanes:
            assert g.head(lh.worktree) == kept
        leave_work(lanes[0].worktree)
        leave_work(lanes[1].worktree)
        git(lanes[1].worktree, "checkout", "-q", "--detach")  # HEAD off the lane branch

        notes = _arm(h)

        patches = [lh.paths.session_patch(0, "unfinished-session") for lh in lanes]
        assert notes == [
            f"lane {k}: changes past {kept[:12]} saved to {patch}"
            for k, patch in enumerate(patches, 1)
        ]
        for k, (lh, patch) in enumerate(zip(lanes, patches, strict=True)):
            assert applied_patch(lh.worktree, kept, patch, tmp_path / f"applied-{k}") == LEFT_WORK
            assert_work_reset(lh.worktree, lh.branch_name, kept)
        assert _arm(h) == []  # done: a lane at the incumbent on a clean tree stays


def test_a_lane_past_its_candidates_commit_is_put_back_with_what_lay_past_saved(
    mission_dir: Path,
) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        _arm(h)
        kept = h.run.last_kept_commit or ""
        lh = h.for_lane(1)
        tree = lh.worktree
        candidate = edit_and_commit(tree, {"value.txt": "5\n"}, "the session's candidate")
        data = artifact(candidate_commit=candidate, base_commit=kept, description="five")
        write_artifact(lh.paths.candidate, data)
        replayed = edit_and_commit(tree, {"replayed.txt": "a replay\n"}, "a replay's commit")
        (tree / "value.txt").write_text("6\n")
        (tree / "untracked.txt").write_text("untracked\n")

        notes = _arm(h)

        patch = lh.paths.session_patch(0, "unfinished-replay")
        assert notes == [
            f"lane 1: {MSG_PROCESSING_PENDING}",
            f"lane 1: changes past {candidate[:12]} saved to {patch}",
        ]
        saved = patch.read_text()
        assert "replayed.txt" in saved and "+6" in saved and "untracked.txt" in saved
        assert "+5" not in saved  # the candidate itself is not past its commit
        assert g.head(tree) == candidate and g.head_branch(tree) == f"refs/heads/{lh.branch_name}"
        assert (tree / "value.txt").read_text() == "5\n" and not (tree / "replayed.txt").exists()
        assert git(tree, "status", "--porcelain") == ""
        assert git(tree, "cat-file", "-t", replayed) == "commit"


def test_a_lane_at_its_candidate_with_a_dirty_tree_is_cleaned_with_the_dirt_saved(
    mission_dir: Path, tmp_path: Path
) -> None:
    """What a replay killed inside its checkout leaves (the incumbent's files written, the
    index and HEAD not moved): saved, then removed, so the replay and the reset after its
    verdict find a clean tree; runtime dirt stays."""
    with prepare(mission_dir, run_tag="T1") as h:
        _arm(h)
        kept = h.run.last_kept_commit or ""
        lh = h.for_lane(2)
        tree = lh.worktree
        candidate = edit_and_commit(tree, {"value.txt": "5\n"}, "the session's candidate")
        data = artifact(candidate_commit=candidate, base_commit=kept, description="five")
        write_artifact(lh.paths.candidate, data)
        (tree / "bonus-1-1.txt").write_text("the incumbent's new file\n")
        (tree / "value.txt").write_text("7\n")
        (tree / "__pycache__").mkdir()
        (tree / "__pycache__/score.pyc").write_bytes(b"runtime")

        notes = _arm(h)

        patch = lh.paths.session_patch(0, "unfinished-replay")
        assert notes == [
            f"lane 2: {MSG_PROCESSING_PENDING}",
            f"lane 2: changes past {candidate[:12]} saved to {patch}",
        ]
        saved = patch.read_text()
        assert "bonus-1-1.txt" in saved and "+7" in saved and "score.pyc" not in saved
        assert g.head(tree) == candidate and g.head_branch(tree) == f"refs/heads/{lh.branch_name}"
        assert (tree / "value.txt").read_text() == "5\n"
        assert git(tree, "status", "--porcelain") == ""
        assert (tree / "__pycache__/score.pyc").exists()
        assert _arm(h) == [f"lane 2: {MSG_PROCESSING_PENDING}"]  # clean: nothing to save


def test_a_stale_git_lock_in_a_lane_is_removed(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        _arm(h)
        lh = h.for_lane(2)
        own, _ = g.git_dirs(lh.worktree)
        lock = own / "index.lock"
        lock.write_text("")  # a git the crash killed

        notes = _arm(h)

        assert not lock.exists()
        assert len(notes) == 1 and notes[0].startswith(f"lane 2: removed the stale git lock {lock}")
        assert git(lh.worktree, "status", "--porcelain") == ""
