"""A run's fixed facts are one frozen `RunContext` (issue 32): the handle's paths, worktree,
branch and dirt rule are the context's, a lane's context is the run's seen from its lane, and
a handle is frozen: a resume that changes the run's facts hands a new one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from autoresearch.journal import runs
from autoresearch.supervisor.handle import RunContext, lane_branch
from autoresearch.supervisor.lifecycle import resume
from autoresearch.supervisor.prepare import prepare


def test_a_handle_and_its_lanes_see_one_frozen_context(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        run = h.context
        assert run == RunContext.of(h.journal, h.repo, h.run)
        with pytest.raises(dataclasses.FrozenInstanceError):
            run.lane = 2  # type: ignore[misc]
        lane = h.for_lane(2)
        assert lane.context == run.for_lane(2)
        assert (lane.worktree, lane.branch_name) == (
            h.repo.lane_worktree(h.run_id, 2),
            lane_branch(h.run.branch_name, 2),
        )
        assert lane.paths.candidate != h.paths.candidate  # each lane its own handoff files
        assert lane.results_file == h.results_file == Path(h.run.worktree_path) / "results.tsv"
        assert (h.worktree, h.branch_name, h.dirt, h.tag) == (
            run.worktree,
            run.branch_name,
            run.dirt,
            run.tag,
        )


def test_a_handle_is_frozen_and_its_record_is_the_drivers(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        with pytest.raises(dataclasses.FrozenInstanceError):
            h.run = h.run  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            h.context = h.context  # type: ignore[misc]
        assert h.run is h.state.record  # the record as this process last read or wrote it
        with h.journal.tx() as conn:  # as `stop` from another process
            runs.update_run(conn, h.run_id, stop_requested="operator")
        assert h.run.stop_requested is None
        assert h.refresh().stop_requested == "operator" == h.run.stop_requested


def test_a_resume_that_allows_runtime_globs_hands_a_context_with_them(
    mission_dir: Path,
) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        run_id, root, first = h.run_id, h.repo.repo_root, h.context
    armed = resume(root, run_id, runtime=["extra/**"])
    with armed.handle as h:
        assert h.context.runtime == (*first.runtime, "extra/**") == h.run.sandbox.runtime
        assert h.dirt != first.dirt  # the worktree may hold the allowed files now


def test_what_this_process_did_is_the_drivers_state_a_lane_its_own(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        own = h.state
        before = (own.pointer_written, own.reaped, own.recovered, own.measure_with)
        lane = h.for_lane(1)
        assert lane.state is not own and lane.state.lock is own.lock  # one driver, one lock
        assert (lane.state.pointer_written, lane.state.reaped, lane.state.recovered) == (
            True, True, True,
        )  # fmt: skip
        lane.state.measure_with = lambda task, cancel: None  # type: ignore[assignment,return-value]
        assert (own.pointer_written, own.reaped, own.recovered, own.measure_with) == before


def test_the_sandbox_of_a_run_is_a_fixed_fact_of_its_context(mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="T1") as h:
        asked = h.run.loop_settings.sandbox or h.run.sandbox.isolation.sandbox or "auto"
        assert h.context.sandbox_mode == h.sandbox_mode == asked
        for agent in (True, False):
            assert h.context.box(agent) == h.box(agent)
        assert h.context.repo_root == Path(h.run.repo_root)
