"""Behaviours pinned after review: stop requests, read-only commands, odd file names,
other worktrees, missions with their own files, repositories without commits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sup_helpers import submit

from autoresearch import git as arg
from autoresearch.reset import run_dirt
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.lifecycle import stop
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import step
from helpers import GIT_ENV, Repo, cli, git, host_pid, make_repo, sandbox_text, until

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"


def test_a_step_honours_an_operators_stop_request(repo: Repo, run: RunHandle) -> None:
    assert stop(repo.root, run.run_id, reason="done for today").requested is True
    submit(run, {"value.txt": "4\n"})
    result = step(run)
    assert result.decision == "keep"  # the iteration is recorded first
    assert (run.run.status, run.run.stop_reason, run.run.stop_note) == (
        "stopped", "operator stop", "done for today",
    )  # fmt: skip


# A candidate's reading (a value above the baseline's 1) holds until the test's EVAL_GATE exists
# (at most 60 s): the stop surely comes while it runs, however slow the machine.
GATED_EVAL = textwrap.dedent(
    """\
    import json, os, time
    value = float(open("value.txt").read())
    deadline = time.monotonic() + 60
    while value > 1 and not os.path.exists(os.environ["EVAL_GATE"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(json.dumps({"pass": True, "score": value}))
    """
)


def test_an_operator_stop_lets_the_evaluation_finish(repo: Repo, mission_dir: Path) -> None:
    gate = repo.root / "eval-gate"  # in the repository: the sandboxed evaluator sees it
    env = {**os.environ, **GIT_ENV, "FAKE_PLAN": "improve", "EVAL_GATE": str(gate)}
    repo.write("scripts/eval.py", GATED_EVAL)
    repo.commit("a gated evaluator")
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", CMD_AGENT,
         "--run-tag", "T1", "--max-iterations", "3", "--json"],
        cwd=repo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    worktree = repo.root / ".autoresearch/worktrees/missions-demo-t1"
    agent_started = worktree / ".autoresearch/agent-1.started"
    until(agent_started.exists, 60, "the agent started")
    # The stop comes while the evaluation runs (its log exists once it has started).
    logs = repo.root / ".autoresearch/runs/missions-demo-t1/logs"
    until(lambda: (logs / "iteration-0001-evaluator.log").exists(), 60, "the evaluation")
    assert cli("stop", cwd=repo.root).returncode == 0
    gate.touch()
    out, err = proc.communicate(timeout=60)
    summary = json.loads(out)
    assert (summary["status"], summary["stop_reason"]) == ("stopped", "operator stop"), err
    assert summary["counts"] == {"keep": 1}
    # the branch ends on the kept commit, not on an unevaluated candidate
    assert git(worktree, "rev-parse", "HEAD") == summary["last_kept_commit"]


def test_read_only_commands_create_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "fresh")
    assert cli("status", cwd=repo.root).stdout.startswith("no runs yet")
    assert cli("stop", cwd=repo.root).stderr.strip() == "autoresearch: no active run to stop"
    assert cli("status", "x", cwd=repo.root).returncode == 2
    assert cli("resume", "x", cwd=repo.root).stderr.strip() == (
        "autoresearch: autoresearch_resume_manifest_missing:x – unknown run: x "
        "(autoresearch status lists the runs)"
    )
    assert cli("stop", "x", cwd=repo.root).stderr.strip() == "autoresearch: unknown run: x"
    assert not (repo.root / ".autoresearch").exists()
    assert git(repo.root, "status", "--porcelain") == ""


def test_a_repository_without_commits_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    (root / "m").mkdir()
    (root / "m/mission.md").write_text("m")
    (root / "m/sandbox.md").write_text(sandbox_text())
    done = cli("prepare", "m", cwd=root)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: the repository has no commits yet")


def test_a_missions_own_uncommitted_files_come_along(repo: Repo) -> None:
    mission = repo.mission(
        "missions/own",
        sandbox=sandbox_text(command='python3 "$AUTORESEARCH_MISSION_DIR/eval.py"'),
        commit=False,
    )
    (mission / "eval.py").write_text('print(\'{"pass": true, "score": 7}\')\n')
    with prepare(mission, run_tag="own") as h:
        assert h.run.last_kept_score == 7
        assert (h.worktree / "missions/own/eval.py").exists()
        assert "materialize" in git(h.worktree, "log", "-1", "--format=%s")


def test_file_names_that_look_like_pathspec_magic_are_saved(repo: Repo, run: RunHandle) -> None:
    from autoresearch.supervisor.record import save_patch

    for name in (":(exclude)weird", ":memory:"):
        (run.worktree / name).write_text(f"work in {name}\n")
    note = save_patch(run, 1, "odd", run.run.last_kept_commit or "")
    patch = Path(note.rsplit(" ", 1)[-1]).read_text()
    assert "work in :(exclude)weird" in patch and "work in :memory:" in patch


def test_removing_a_run_worktree_keeps_other_worktree_registrations(
    repo: Repo, tmp_path: Path
) -> None:
    other = tmp_path / "other-worktree"
    git(repo.root, "worktree", "add", "-q", str(other), "-b", "elsewhere")
    moved = tmp_path / "unmounted"
    other.rename(moved)  # like a worktree on a disk that is not mounted right now
    ours = repo.root / ".autoresearch/worktrees/ours"
    git(repo.root, "worktree", "add", "-q", str(ours), "-b", "ours")
    arg.worktree_remove(repo.root, ours)
    moved.rename(other)
    assert git(other, "status", "--porcelain") == ""  # still a registered worktree
    assert str(ours) not in git(repo.root, "worktree", "list")


@pytest.mark.parametrize(
    ("path", "runtime"),
    [(".results.tsv.abc123.tmp", True), (".run.log.x.tmp", True), (".results.tsv", False),
     ("src/.results.tsv.x.tmp", False)],
)  # fmt: skip
def test_a_torn_atomic_write_is_runtime(path: str, runtime: bool) -> None:
    assert run_dirt((), ()).spares(path) is runtime


def test_resume_with_an_unknown_agent_records_nothing(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root).returncode == 0
    done = cli("resume", "missions-demo-t1", "--agent", "bogus", cwd=repo.root)
    assert done.returncode == 2 and "unknown agent 'bogus'" in done.stderr
    manifest = json.loads(cli("status", "missions-demo-t1", "--json", cwd=repo.root).stdout)
    assert manifest["manifest"]["agent"] is None


def test_a_driver_killed_during_an_agent_session_resumes_with_no_operator_action(
    repo: Repo, mission_dir: Path
) -> None:
    env = {**os.environ, **GIT_ENV, "FAKE_PLAN": "improve,hang,improve"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", CMD_AGENT,
         "--run-tag", "T1", "--max-iterations", "3"],
        cwd=repo.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    worktree = repo.root / ".autoresearch/worktrees/missions-demo-t1"
    started = worktree / ".autoresearch/agent-2.started"
    until(started.exists, 60, "the second session started")
    until(lambda: (worktree / "value.txt").read_text().strip() == "3", what="the agent's edit")
    agent_pid = host_pid(started.read_text())
    proc.kill()  # the driver dies; its agent is orphaned with an uncommitted edit
    proc.wait()
    # the session never returned: it is interrupted, its edit saved; no --save-dirty needed
    done = cli("resume", "missions-demo-t1", "--json", cwd=repo.root, env={"FAKE_PLAN": "improve"})
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout)
    assert final["status"] == "completed"
    assert any(Path(final["logs_dir"]).glob("*interrupted.patch"))
    from helpers import pid_alive

    assert not pid_alive(agent_pid)


def test_a_child_spawned_just_before_its_driver_died_is_found_by_its_environment(
    repo: Repo, mission_dir: Path
) -> None:
    from autoresearch.supervisor.lifecycle import resume
    from helpers import pid_alive

    prepare(mission_dir, run_tag="T1").close()
    worktree = repo.root / ".autoresearch/worktrees/missions-demo-t1"
    env = {**os.environ, "AUTORESEARCH_RUN_ID": "missions-demo-t1",
           "AUTORESEARCH_WORKTREE": str(worktree)}  # fmt: skip
    orphan = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        outcome = resume(repo.root, "missions-demo-t1")
        outcome.handle.close()
        assert any("unregistered process group" in n for n in outcome.notes)
        orphan.wait(timeout=10)
        assert pid_alive(bystander.pid)
    finally:
        for p in (orphan, bystander):
            p.kill()
            p.wait()
