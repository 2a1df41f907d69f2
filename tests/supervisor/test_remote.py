"""The far end of a remote executor, without any executor: a session and an evaluation run in
a node folder from bundles, and what they return lands in the driver's run (real git, real
processes, the `cmd:` fake agent)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autoresearch import git
from autoresearch.agents import AgentConfig
from autoresearch.children import run_tag
from autoresearch.errors import ContractError
from autoresearch.states import DecisionKind
from autoresearch.supervisor import remote
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.seal import digest
from autoresearch.supervisor.step import step
from helpers import Repo, sandbox_text

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"


def _code(h: RunHandle, commit: str) -> remote.Code:
    data = remote.bundle_of(h.repo.repo_root, commit)
    assert data is not None
    return remote.Code(commit, ((commit, lambda: data),))


def _session_task(h: RunHandle, spec: str = CMD_AGENT) -> remote.SessionTask:
    base = h.run.last_kept_commit or ""
    return remote.SessionTask(
        run_id=h.run_id,
        iteration=h.run.iteration + 1,
        task_id=uuid.uuid4().hex,
        code=_code(h, base),
        branch=h.run.branch_name,
        agent=AgentConfig(spec),
        instructions=h.paths.instructions.read_bytes(),
        placeholder=h.paths.candidate.read_bytes(),
        timeout=60,
        sandbox=h.run.sandbox,
    )


def _files(h: RunHandle, iteration: int) -> remote.SessionFiles:
    ref = f"refs/autoresearch/{h.run_id}/incoming"
    return remote.SessionFiles(h.paths.candidate, h.paths.agent_log(iteration), ref)


@pytest.fixture
def run(mission_dir: Path) -> RunHandle:
    return prepare(mission_dir, run_tag="REMOTE")


def test_a_remote_session_lands_in_the_driver_as_if_it_had_run_there(
    run: RunHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PLAN", "improve")
    node = tmp_path / "node"
    task = _session_task(run)
    outcome = remote.run_session(node, task)
    assert outcome.result.exit_code == 0 and outcome.on_branch
    assert outcome.bundle is not None and outcome.head != task.code.commit
    # nothing of the task is left on the node but the run's commit cache
    assert sorted(p.name for p in (node / run.run_id).iterdir()) == [
        "cache.git",
        "cache.lock",
        "tasks",
    ]
    assert list((node / run.run_id / "tasks").iterdir()) == []
    result = remote.land_session(
        run.repo.repo_root, run.worktree, run.run.branch_name, outcome, _files(run, 1)
    )
    assert git.head(run.worktree) == outcome.head
    assert result.log_file == str(run.paths.agent_log(1))
    judged = step(run)
    assert judged.decision == DecisionKind.KEEP and judged.last_kept_commit == outcome.head


def test_uncommitted_work_of_a_remote_session_comes_back_as_changes(
    run: RunHandle, tmp_path: Path
) -> None:
    script = "echo 7 > value.txt; echo idea > notes.txt; echo said so"
    outcome = remote.run_session(tmp_path / "node", _session_task(run, f"cmd:{script}"))
    assert outcome.bundle is None and outcome.head == run.run.last_kept_commit
    assert b"said so" in outcome.log
    remote.land_session(
        run.repo.repo_root, run.worktree, run.run.branch_name, outcome, _files(run, 1)
    )
    assert (run.worktree / "value.txt").read_text() == "7\n"
    assert (run.worktree / "notes.txt").read_text() == "idea\n"


def test_a_remote_evaluation_measures_the_commit_with_the_sealed_harness(
    repo: Repo, tmp_path: Path
) -> None:
    sandbox = sandbox_text(
        'python3 "$AUTORESEARCH_SEALED_DIR/scripts/eval.py"', extra="sealed: [scripts/eval.py]\n"
    )
    h = prepare(repo.mission(sandbox=sandbox), run_tag="RSEAL")
    digests = {rel: digest(h.paths.sealed / rel) for rel in h.sealed}
    task = remote.EvaluationTask(
        run_id=h.run_id,
        iteration=1,
        task_id=uuid.uuid4().hex,
        code=_code(h, h.run.last_kept_commit or ""),
        evaluator=h.run.evaluator,
        relative_dir=str(h.run.sandbox.get("relative_dir", ".")),
        sealed=remote.pack_sealed(h.paths.sealed, digests),
    )
    outcome = remote.run_evaluation(tmp_path / "node", task)
    assert outcome.record.status == "pass" and outcome.record.score == 1.0
    assert b"progress line" in outcome.log
    landed = remote.land_evaluation(outcome, h.paths.evaluator_log(1))
    assert Path(landed.log_file).read_bytes() == outcome.log


def test_a_sealed_copy_damaged_in_transit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "h/eval.py").write_text("print(1)\n")
    copy = remote.pack_sealed(tmp_path / "h", {"eval.py": "0" * 64})
    with pytest.raises(ContractError, match="damaged in transit: eval.py"):
        remote.unpack_sealed(copy, tmp_path / "node")


def test_a_dead_task_s_processes_and_folder_are_gone_before_the_next_task(
    run: RunHandle, tmp_path: Path
) -> None:
    """A worker killed mid-task leaves its folder unlocked and its agent running (its own
    process group): the next task of the run on that node stops it and removes the folder."""
    node = tmp_path / "node"
    dead = node / run.run_id / "tasks" / "dead-task"
    (dead / "tree").mkdir(parents=True)
    env = run_tag(run.run_id, dead / "tree").env()
    stray = subprocess.Popen(
        ["sleep", "60"], env=env, start_new_session=True, stdin=subprocess.DEVNULL
    )
    try:
        outcome = remote.run_session(node, _session_task(run, "cmd:true"))
        assert outcome.result.exit_code == 0
        deadline = time.monotonic() + 5
        while stray.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stray.poll() is not None, "the dead task's process still runs"
        assert not dead.exists()
    finally:
        if stray.poll() is None:
            os.killpg(stray.pid, 9)
        stray.wait()
