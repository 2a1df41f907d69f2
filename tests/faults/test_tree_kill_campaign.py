"""The tree-kill campaign (marker `slow`; `.ci/run` runs it): a loop of the built-in agent,
with everything it runs – driver, git, evaluator – killed with SIGKILL at a random instant,
then `resume`d (itself killed at random instants a few times) until it completes. Every trial
must end completed with no operator action: no traceback, no kept commit lost, iterations
recorded once each, git and journal agreeing, the project's files never deleted.

AUTORESEARCH_CAMPAIGN_TRIALS and AUTORESEARCH_CAMPAIGN_SEED change the size and the instants.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GIT_ENV, Repo, cli, git, kill_tree

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("AUTORESEARCH_CAMPAIGN_TRIALS", "8"))
SEED = int(os.environ.get("AUTORESEARCH_CAMPAIGN_SEED", "11"))
RUN_ID = "missions-tune-sgd-c1"
RUN = ["run", "missions/tune-sgd", "--agent", "offline", "--max-iterations", "4",
       "--run-tag", "c1", "--json"]  # fmt: skip


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template")
    done = cli("demo", str(root / "demo"), "--iterations", "1", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "demo"


def start(repo: Path, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "--repo", str(repo), *args],
        cwd=repo, env={**os.environ, **GIT_ENV, **(env or {})}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def drive(
    repo: Path, args: list[str], kill_after: float | None, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run the CLI; past `kill_after` seconds, kill its whole tree as a machine dying would."""
    driver = start(repo, args, env)
    try:
        _out, err = driver.communicate(timeout=kill_after)
        return driver.returncode, err
    except subprocess.TimeoutExpired:
        kill_tree(driver.pid, repo)
        _out, err = driver.communicate(timeout=60)
        return driver.returncode, err


def run_status(repo: Path, run_id: str = RUN_ID) -> str | None:
    done = cli("--repo", str(repo), "status", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    found = [r["status"] for r in json.loads(done.stdout)["runs"] if r["run_id"] == run_id]
    return str(found[0]) if found else None


def check(repo: Path) -> dict:
    done = cli("--repo", str(repo), "status", RUN_ID, "--json", cwd=repo)
    details = dict(json.loads(done.stdout))
    assert details["status"] == "completed", details.get("stop_reason")
    numbers = [it["iteration"] for it in details["iterations"]]
    assert numbers == list(range(len(numbers))), "iterations missing or recorded twice"
    ledger = json.loads(Path(details["manifest"]["ledger_file"]).read_text())["entries"]
    assert [e["iteration"] for e in ledger] == numbers
    worktree = Path(details["manifest"]["worktree_path"])
    head = git(worktree, "rev-parse", "HEAD")
    assert head == details["last_kept_commit"]
    assert git(worktree, "symbolic-ref", "HEAD") == f"refs/heads/{details['branch_name']}"
    assert git(worktree, "status", "--porcelain", "--untracked-files=no") == ""
    for it in details["iterations"]:
        if it["decision"] == "keep":
            git(worktree, "merge-base", "--is-ancestor", it["candidate_commit"], head)
    assert "train.py" in git(worktree, "ls-files").splitlines()
    deleted = git(worktree, "log", "--format=", "--name-only", "--diff-filter=D", "HEAD")
    assert deleted == "", f"a commit deleted project files: {deleted}"
    return details


@pytest.mark.parametrize("trial", range(TRIALS))
def test_tree_kill_at_a_random_instant_resumes_to_completion(
    template: Path, tmp_path: Path, trial: int
) -> None:
    rng = random.Random(SEED * 1000 + trial)
    repo = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(template), str(repo))
    code, err = drive(repo, RUN, rng.uniform(0.05, 6.0))
    log = [err]
    for attempt in range(8):
        if code == 0:
            break
        assert "Traceback" not in err, err
        known = run_status(repo)
        if known == "completed":  # killed after it recorded the end: nothing left to do
            code = 0
            break
        args = ["resume", RUN_ID, "--json"] if known else RUN
        kill_after = rng.uniform(0.05, 3.0) if attempt < 2 else None
        code, err = drive(repo, args, kill_after)
        log.append(err)
    assert code == 0, "\n---\n".join(log)
    assert "Traceback" not in err, err
    check(repo)


HOSTILE = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/hostile_agent.py'}"
ACTIONS = ["improve", "improve", "noop", "torn", "foreign", "detach", "rewrite", "invalid"]
REFUSALS = ("autoresearch candidate", "candidate_commit")


@pytest.mark.parametrize("trial", range(TRIALS))
def test_hostile_sessions_and_tree_kills_never_take_the_history(
    repo: Repo, mission_dir: Path, trial: int
) -> None:
    rng = random.Random(SEED * 1000 + 500 + trial)
    plan = ",".join(rng.choice(ACTIONS) for _ in range(5))
    env = {**os.environ, **GIT_ENV, "HOSTILE_PLAN": plan}
    args = ["run", "missions/demo", "--agent", HOSTILE, "--run-tag", "H1", "--max-iterations",
            "5", "--json"]  # fmt: skip
    log = []
    for _ in range(8):  # a torn session kills the whole tree: resume, as often as it takes
        done = subprocess.run(
            [sys.executable, "-m", "autoresearch", *args], cwd=repo.root, env=env,
            capture_output=True, text=True, timeout=300, start_new_session=True,
        )  # fmt: skip
        log.append(done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        if done.returncode != -signal.SIGKILL:
            break
        args = ["resume", "missions-demo-h1", "--json"]
    details = json.loads(
        cli("--repo", str(repo.root), "status", "missions-demo-h1", "--json", cwd=repo.root).stdout
    )
    assert details["status"] in ("completed", "failed", "stopped"), (plan, "\n".join(log))
    if details["status"] == "failed":  # only a session's own invalid report fails a run
        assert any(r in details["stop_reason"] for r in REFUSALS), (plan, details["stop_reason"])
    worktree = Path(details["manifest"]["worktree_path"])
    kept = details["last_kept_commit"]
    assert git(repo.root, "rev-parse", f"refs/heads/{details['branch_name']}") == kept, plan
    assert git(worktree, "symbolic-ref", "HEAD") == f"refs/heads/{details['branch_name']}"
    assert git(worktree, "rev-parse", "HEAD") == kept
    for it in details["iterations"]:
        if it["decision"] == "keep":
            git(worktree, "merge-base", "--is-ancestor", it["candidate_commit"], kept)
