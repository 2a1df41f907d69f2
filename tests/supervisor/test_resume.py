"""resume and stop: the contract's error order, re-arming, and repair after a killed driver."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sup_helpers import submit

from autoresearch.errors import RefusedError
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.lifecycle import resume, stop
from autoresearch.supervisor.prepare import prepare
from helpers import GIT_ENV, Repo, cli, edit_and_commit, git, host_pid, pid_alive, until

RUN_ID = "missions-demo-t1"


def prepared(mission_dir: Path) -> None:
    prepare(mission_dir, run_tag="T1").close()


def test_resume_rearms_a_running_run(repo: Repo, mission_dir: Path) -> None:
    prepared(mission_dir)
    outcome = resume(repo.root, RUN_ID)
    with outcome.handle as h:
        assert outcome.notes == [] and outcome.pending_artifact is False
        assert json.loads(h.paths.candidate.read_text())["description"] == "not-yet-written"
        assert "Iteration: 1" in h.paths.instructions.read_text()


def test_resume_error_order(repo: Repo, mission_dir: Path) -> None:
    with pytest.raises(
        RefusedError, match="^autoresearch_resume_manifest_missing:nope – unknown run: nope "
    ):
        resume(repo.root, "nope")
    prepared(mission_dir)
    worktree = repo.root / ".autoresearch/worktrees" / RUN_ID
    (worktree / "value.txt").write_text("dirty\n")
    with pytest.raises(RefusedError, match="^autoresearch_reset_requires_clean_worktree:"):
        resume(repo.root, RUN_ID)
    shutil.rmtree(worktree)
    with pytest.raises(RefusedError) as info:
        resume(repo.root, RUN_ID)
    assert str(info.value).split()[0] == f"autoresearch_resume_missing_worktree:{worktree}"
    assert f"autoresearch stop {RUN_ID}" in str(info.value)
    stop(repo.root, RUN_ID)
    with pytest.raises(
        RefusedError,
        match=f"^autoresearch_resume_terminal_run:{RUN_ID} .*autoresearch continue {RUN_ID}",
    ):
        resume(repo.root, RUN_ID)


def test_a_live_driver_blocks_a_second_one(repo: Repo, run: RunHandle) -> None:
    with pytest.raises(
        RefusedError, match=f"^autoresearch_active_run_exists:{RUN_ID} – another process drives"
    ):
        resume(repo.root, RUN_ID)


def test_save_dirty_keeps_the_work_as_a_patch(repo: Repo, mission_dir: Path) -> None:
    prepared(mission_dir)
    worktree = repo.root / ".autoresearch/worktrees" / RUN_ID
    (worktree / "value.txt").write_text("42\n")
    (worktree / "new.txt").write_text("new file\n")
    outcome = resume(repo.root, RUN_ID, save_dirty=True)
    with outcome.handle as h:
        assert git(worktree, "status", "--porcelain") == ""
        patch = next(h.paths.logs.glob("*dirty.patch"))
        assert "+42" in patch.read_text() and "new file" in patch.read_text()
        assert outcome.notes[0].endswith(str(patch))


def test_pending_artifact_survives_resume(repo: Repo, mission_dir: Path) -> None:
    prepared(mission_dir)
    outcome = resume(repo.root, RUN_ID)
    with outcome.handle as h:
        data = submit(h, {"value.txt": "9\n"})
    outcome = resume(repo.root, RUN_ID)
    with outcome.handle as h:
        assert outcome.pending_artifact is True
        assert json.loads(h.paths.candidate.read_text()) == data
        from autoresearch.supervisor.step import step

        assert step(h).decision == "keep"


def test_unfinished_session_commits_are_saved_then_reset(repo: Repo, mission_dir: Path) -> None:
    prepared(mission_dir)
    worktree = repo.root / ".autoresearch/worktrees" / RUN_ID
    kept = git(worktree, "rev-parse", "HEAD")
    edit_and_commit(worktree, {"value.txt": "8\n"}, "session died before its artifact")
    outcome = resume(repo.root, RUN_ID)
    with outcome.handle as h:
        assert git(worktree, "rev-parse", "HEAD") == kept
        patch = next(h.paths.logs.glob("*unfinished-session.patch"))
        assert "+8" in patch.read_text()


def test_stop_finalizes_and_is_not_repeated(repo: Repo, mission_dir: Path) -> None:
    prepared(mission_dir)
    outcome = stop(repo.root, None, reason="enough")
    assert (outcome.status, outcome.stop_reason, outcome.note, outcome.requested) == (
        "stopped", "operator stop", "enough", False,
    )  # fmt: skip
    manifest = json.loads((repo.root / f".autoresearch/runs/{RUN_ID}/manifest.json").read_text())
    assert manifest["status"] == "stopped" and manifest["completed_at"]
    assert (manifest["stop_reason"], manifest["stop_note"]) == ("operator stop", "enough")
    pointer = json.loads((repo.root / ".autoresearch/active-run.json").read_text())
    assert pointer["active"] is False
    with pytest.raises(RefusedError, match="already stopped"):
        stop(repo.root, RUN_ID)


def test_stop_with_a_live_driver_only_requests(repo: Repo, run: RunHandle) -> None:
    outcome = stop(repo.root, RUN_ID)
    assert outcome.requested is True and outcome.stop_reason == "operator stop"
    assert run.refresh().stop_requested == "operator stop"
    assert run.run.status == "running"


# --- a driver killed at a failpoint ---------------------------------------------------------


def killed_step(repo: Repo, failpoint: str) -> subprocess.CompletedProcess[str]:
    done = cli("step", RUN_ID, cwd=repo.root, env={"AUTORESEARCH_FAILPOINTS": failpoint})
    assert done.returncode == -signal.SIGKILL, done.stderr
    return done


@pytest.mark.parametrize(
    ("failpoint", "value", "expected"),
    [
        ("step.after_evaluator", "5", "keep"),
        ("step.after_decided", "0", "discard"),
        ("apply.before_reset", "0", "discard"),
        ("step.after_applied", "0", "discard"),
        ("step.after_views", "5", "keep"),
    ],
)
def test_killed_step_is_repaired_without_loss_or_duplication(
    repo: Repo, mission_dir: Path, failpoint: str, value: str, expected: str
) -> None:
    prepared(mission_dir)
    outcome = resume(repo.root, RUN_ID)
    with outcome.handle as h:
        kept = h.run.last_kept_commit
        submit(h, {"value.txt": value + "\n"})
        candidate = git(h.worktree, "rev-parse", "HEAD")
    killed_step(repo, failpoint)
    done = cli("resume", RUN_ID, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    # an evaluation that was interrupted is rolled back: its artifact is still waiting
    if failpoint == "step.after_evaluator":
        assert cli("step", RUN_ID, cwd=repo.root).returncode == 0
    manifest = json.loads(done.stdout)
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    decisions = [it["decision"] for it in status["iterations"]]
    assert decisions == ["baseline", expected]
    worktree = repo.root / ".autoresearch/worktrees" / RUN_ID
    final = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)["manifest"]
    head = git(worktree, "rev-parse", "HEAD")
    assert head == final["last_kept_commit"] == (candidate if expected == "keep" else kept)
    ledger = json.loads(Path(manifest["ledger_file"]).read_text())
    assert [e["decision"] for e in ledger["entries"]] == ["baseline", expected]
    tsv = (worktree / "results.tsv").read_text().splitlines()
    assert [row.split("\t")[4] for row in tsv[1:]] == ["baseline", expected]
    assert json.loads(Path(manifest["candidate_file"]).read_text())["description"] == (
        "not-yet-written"
    )


def test_killed_prepare_is_finished_by_resume(repo: Repo, mission_dir: Path) -> None:
    done = cli(
        "prepare", str(mission_dir), "--run-tag", "T1", cwd=repo.root,
        env={"AUTORESEARCH_FAILPOINTS": "prepare.after_worktree"},
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL
    refused = cli("prepare", str(mission_dir), "--run-tag", "T2", cwd=repo.root)
    assert refused.returncode == 2
    assert refused.stderr.split()[:2] == [
        "autoresearch:",
        f"autoresearch_active_run_exists:{RUN_ID}",
    ]
    assert f"resume it (autoresearch resume {RUN_ID})" in refused.stderr
    done = cli("resume", RUN_ID, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout)
    assert manifest["last_kept_score"] == 1.0 and manifest["baseline_commit"]


def test_stale_evaluator_of_a_killed_driver_is_stopped(repo: Repo, mission_dir: Path) -> None:
    prepared(mission_dir)
    outcome = resume(repo.root, RUN_ID)
    with outcome.handle as h:
        submit(h, {"value.txt": "5\n", "mode.txt": "hang\n"})
        pid_file = h.worktree / ".autoresearch/evaluator.pid"
    env = {**GIT_ENV, **{k: os.environ[k] for k in ("PATH", "HOME", "XDG_STATE_HOME")}}
    driver = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "step", RUN_ID], cwd=repo.root, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    until(pid_file.exists, 30, "the evaluator started")
    evaluator_pid = host_pid(pid_file.read_text())
    driver.kill()
    driver.wait()
    assert pid_alive(evaluator_pid)  # orphaned, still running
    pid_file.unlink()
    outcome = resume(repo.root, RUN_ID)
    with outcome.handle:
        assert any("stopped a stale evaluator" in n for n in outcome.notes)
        assert any("rolled back iteration 1" in n for n in outcome.notes)
    assert not pid_alive(evaluator_pid)
