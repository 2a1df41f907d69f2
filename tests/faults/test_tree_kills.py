"""Kill -9 of the whole process tree (driver, agent, git) at chosen instants: inside
`git worktree add`, between the built-in agent's edit and its commit, inside that commit
(a stale index.lock), and while an agent writes candidate.json. Every one resumes to
completion with no operator action, no kept commit lost and the project's files intact.

The driver runs in its own session, so a kill of its process group takes everything it
started in that group (its git, the built-in agent) and nothing of the test's."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autoresearch import git as gitlib
from autoresearch.errors import GitError
from helpers import GIT_ENV, Repo, cli, git, git_killer, run_children, sandbox_text, until

HOSTILE = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/hostile_agent.py'}"


def driver(args: list[str], cwd: Path, env: dict[str, str] | None = None):
    """The CLI in its own session (its own process group), as a shell would start it."""
    return subprocess.run(
        [sys.executable, "-m", "autoresearch", *args],
        cwd=cwd, env={**os.environ, **GIT_ENV, **(env or {})}, capture_output=True,
        text=True, timeout=300, start_new_session=True,
    )  # fmt: skip


def only_run(repo: Path) -> dict:
    (run,) = json.loads(cli("--repo", str(repo), "status", "--json", cwd=repo).stdout)["runs"]
    details = cli("--repo", str(repo), "status", run["run_id"], "--json", cwd=repo)
    return dict(json.loads(details.stdout))


def resume(repo: Path, *extra: str) -> dict:
    run_id = only_run(repo)["run_id"]
    done = driver(["--repo", str(repo), "resume", run_id, "--json", *extra], repo)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return dict(json.loads(done.stdout))


def assert_sound(repo: Path, project_files: list[str]) -> dict:
    return assert_completed(only_run(repo), project_files)


def assert_completed(details: dict, project_files: list[str]) -> dict:
    """Completed; git and the journal agree; no kept commit lost; no project file deleted."""
    assert details["status"] == "completed", details["stop_reason"]
    numbers = [it["iteration"] for it in details["iterations"]]
    assert numbers == list(range(len(numbers)))
    worktree = Path(details["manifest"]["worktree_path"])
    head = git(worktree, "rev-parse", "HEAD")
    assert head == details["last_kept_commit"]
    assert git(worktree, "status", "--porcelain", "--untracked-files=no") == ""
    for it in details["iterations"]:
        if it["decision"] == "keep":
            git(worktree, "merge-base", "--is-ancestor", it["candidate_commit"], head)
    tracked = git(worktree, "ls-files").splitlines()
    for name in project_files:  # no commit deleted the project
        assert name in tracked, (name, tracked)
    deleted = git(worktree, "log", "--format=", "--name-only", "--diff-filter=D", "HEAD")
    assert deleted == "", f"a commit deleted project files: {deleted}"
    return details


def test_killed_inside_worktree_add_resumes_without_deleting_the_project(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    env = git_killer(tmp_path, "worktree", 1)
    done = driver(["prepare", "missions/demo", "--run-tag", "W1"], repo.root, env)
    assert done.returncode == -signal.SIGKILL, done.stderr
    resume(repo.root, "--agent", "cmd:true", "--max-iterations", "1")
    assert_sound(repo.root, ["value.txt", "scripts/eval.py", ".gitignore"])


@pytest.fixture
def demo_repo(tmp_path: Path) -> Path:
    """The demo's repository with a prepared run of the built-in agent, not yet driven."""
    done = cli("demo", str(tmp_path / "demo"), "--iterations", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "demo"


def run_demo(repo: Path, env: dict[str, str]):
    return driver(
        ["--repo", str(repo), "run", "missions/tune-sgd", "--agent", "offline",
         "--max-iterations", "3", "--run-tag", "K1"],
        repo, env,
    )  # fmt: skip


def runs_of(repo: Path) -> list[dict]:
    return list(json.loads(cli("--repo", str(repo), "status", "--json", cwd=repo).stdout)["runs"])


def resume_k1(repo: Path, *extra: str) -> dict:
    done = driver(["--repo", str(repo), "resume", "missions-tune-sgd-k1", "--json", *extra], repo)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return dict(json.loads(done.stdout))


def k1_details(repo: Path) -> dict:
    done = cli("--repo", str(repo), "status", "missions-tune-sgd-k1", "--json", cwd=repo)
    return dict(json.loads(done.stdout))


def assert_k1_sound(repo: Path) -> dict:
    return assert_completed(k1_details(repo), ["train.py"])


def test_built_in_agent_killed_between_edit_and_commit(demo_repo: Path) -> None:
    done = run_demo(demo_repo, {"AUTORESEARCH_FAILPOINTS": "offline.after_edit@2"})
    assert done.returncode == -signal.SIGKILL, done.stderr
    resume_k1(demo_repo)
    details = assert_k1_sound(demo_repo)
    interrupted = [it for it in details["iterations"] if it["decision"] == "interrupted"]
    assert len(interrupted) == 1
    notes = " ".join(interrupted[0]["notes"])
    patch = Path(notes.split("saved to ")[1].split()[0])
    assert "train.py" in patch.read_text()  # the edit the kill cut off is kept as a patch


def test_killed_inside_the_agents_commit_clears_the_stale_lock(
    demo_repo: Path, tmp_path: Path
) -> None:
    # commit 1 is the materialized mission of the new run; 2 is the first session's
    done = run_demo(demo_repo, git_killer(tmp_path, "commit", 3))
    assert done.returncode == -signal.SIGKILL, done.stderr
    locks = list((demo_repo / ".git/worktrees").glob("*/index.lock"))
    assert locks, "the kill left no lock behind"
    summary = resume_k1(demo_repo, "--save-dirty")
    assert summary["status"] == "completed"
    assert not any(lock.exists() for lock in locks)
    assert_k1_sound(demo_repo)


def test_a_torn_artifact_from_a_killed_session_is_an_interrupted_session(
    repo: Repo, mission_dir: Path
) -> None:
    env = {"HOSTILE_PLAN": "improve,torn,improve,noop"}
    # unboxed: this agent kills its driver, which a box's own PID namespace keeps out of reach
    done = driver(
        ["run", "missions/demo", "--agent", HOSTILE, "--run-tag", "T1", "--max-iterations", "4",
         "--sandbox", "none"],
        repo.root, env,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    done = driver(["resume", "missions-demo-t1", "--json"], repo.root, env)
    assert done.returncode == 0, done.stderr
    details = assert_sound(repo.root, ["value.txt"])
    decisions = [it["decision"] for it in details["iterations"]]
    assert decisions == ["baseline", "keep", "interrupted", "keep", "noop"], decisions
    notes = " ".join(details["iterations"][2]["notes"])
    assert "saved to" in notes  # the torn session's commit is kept as a patch


def test_a_lock_error_names_the_lock(repo: Repo) -> None:
    lock = repo.root / ".git/index.lock"
    lock.write_text("")
    repo.write("value.txt", "7\n")
    with pytest.raises(GitError) as caught:
        gitlib.commit_all(repo.root, "x")
    assert str(lock) in str(caught.value)
    assert gitlib.clear_stale_locks(repo.root) == [lock]
    assert gitlib.commit_all(repo.root, "x") is not None


def _evaluator_group(repo: Path, needle: bytes, timeout: float = 60.0) -> int:
    """The process group of this repo's run child whose command line holds `needle`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in run_children(repo):
            with contextlib.suppress(OSError):
                if needle in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return os.getpgid(pid)
        time.sleep(0.02)
    raise AssertionError(f"no child running {needle!r}")


def test_a_tree_kill_that_reaches_the_evaluator_first_measures_the_baseline_again(
    repo: Repo, tmp_path: Path
) -> None:
    # A machine or cgroup going down kills process after process: the evaluator may die a
    # moment before the driver. Its SIGKILL is no verdict on the baseline: the driver, killed
    # within the settle delay, records nothing, and resume measures the baseline again.
    gate = tmp_path / "slow"
    gate.write_text("")
    command = f"test -f {gate} && sleep 60; python3 scripts/eval.py"
    repo.mission(sandbox=sandbox_text(command=command, unboxed=True))  # the gate is outside
    args = ["run", "missions/demo", "--agent", "cmd:true", "--run-tag", "B1",
            "--max-iterations", "1", "--json"]  # fmt: skip
    env = {**os.environ, **GIT_ENV, "AUTORESEARCH_SIGNAL_SETTLE_SECONDS": "5"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", *args], cwd=repo.root, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        group = _evaluator_group(repo.root, b"sleep\x0060")
        os.killpg(group, signal.SIGKILL)
        # the sweep reaches the driver next: once the driver has collected the evaluator's
        # exit (its leader is gone, not even a zombie), well within the 5 s settle delay
        until(lambda: not Path(f"/proc/{group}").exists(), timeout=4, what="evaluator reaped")
        os.killpg(proc.pid, signal.SIGKILL)
        _out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL, err
    gate.unlink()
    summary = resume(repo.root)
    assert summary["status"] == "completed", summary
    details = assert_sound(repo.root, ["value.txt"])
    assert details["iterations"][0]["decision"] == "baseline"
    assert details["iterations"][0]["evaluator"]["score"] is not None


def test_an_evaluator_killed_while_the_driver_lives_is_a_verdict(repo: Repo) -> None:
    # The other side of the rule: the driver outlived the settle delay (the OOM killer took
    # the evaluator alone), so the SIGKILL is what the baseline measured.
    repo.mission(sandbox=sandbox_text(command="kill -9 $$"))
    done = driver(
        ["run", "missions/demo", "--agent", "cmd:true", "--run-tag", "B2",
         "--max-iterations", "1"],
        repo.root, {"AUTORESEARCH_SIGNAL_SETTLE_SECONDS": "0.3"},
    )  # fmt: skip
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "autoresearch_baseline_not_comparable" in done.stderr, done.stderr
    assert "code -9" in done.stderr, done.stderr
