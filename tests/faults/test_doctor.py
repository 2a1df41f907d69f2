"""autoresearch doctor on the repository's git side: stale git locks (an error, with the fix)
and `--clear-locks`; worktrees, branches and run folders that no run in the journal knows."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from autoresearch.locks import FileLock
from autoresearch.paths import RepoPaths
from helpers import Repo, cli, git


def doctor(repo: Path, *extra: str) -> tuple[int, dict]:
    done = cli("--repo", str(repo), "doctor", "--json", *extra, cwd=repo)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def findings(report: dict, check: str) -> list[dict]:
    return [f for f in report["findings"] if f["check"] == check]


def test_a_healthy_repository(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    code, report = doctor(repo.root)
    assert code == 0 and report["healthy"], report
    assert findings(report, "journal")[0]["severity"] == "ok"
    # one backup, kept twice: in the user's state directory and beside the journal
    backups = findings(report, "backups")
    assert [f["severity"] for f in backups] == ["ok", "ok"]
    assert os.environ["XDG_STATE_HOME"] in backups[0]["message"]


def test_stale_locks_are_an_error_and_cleared_on_request(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    locks = [
        repo.root / ".git/worktrees/missions-demo-d1/index.lock",
        repo.root / ".git/refs/heads/autoresearch/missions-demo/d1.lock",
    ]
    for lock in locks:
        lock.write_text("")
    code, report = doctor(repo.root)
    assert code == 1 and not report["healthy"]
    stale = findings(report, "locks")
    assert sorted(f["message"].split()[3].rstrip(":") for f in stale) == sorted(map(str, locks))
    assert all("--clear-locks" in f["fix"] for f in stale)
    code, report = doctor(repo.root, "--clear-locks")
    assert code == 0, report
    assert sorted(report["cleared_locks"]) == sorted(map(str, locks))
    assert not any(lock.exists() for lock in locks)


def test_strays_are_named_with_their_fix(repo: Repo, mission_dir: Path, tmp_path: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    stray = repo.root / ".autoresearch/worktrees/not-a-run"
    git(repo.root, "worktree", "add", "-q", "-b", "autoresearch/other/x1", str(stray))
    shutil.copytree(repo.root / ".autoresearch/runs/missions-demo-d1",
                    repo.root / ".autoresearch/runs/missions-demo-gone")  # fmt: skip
    code, report = doctor(repo.root)
    assert code == 1
    (wt,) = findings(report, "worktrees")
    assert str(stray) in wt["message"] and wt["fix"] == f"git worktree remove --force {stray}"
    (branch,) = findings(report, "branches")
    assert "autoresearch/other/x1" in branch["message"]
    (run,) = findings(report, "runs")
    assert "missions-demo-gone" in run["message"] and run["severity"] == "error"


def test_lane_worktrees_belong_to_their_run(repo: Repo, mission_dir: Path) -> None:
    # doctor once named the `lanes` folder (the parent of every lane worktree) as a worktree
    # of no run after any `run --lanes K`, with a fix that git refuses
    args = ["run", "missions/demo", "--agent", "cmd:true", "--lanes", "2", "--run-tag", "l1"]
    done = cli(*args, "--max-iterations", "2", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    lanes = repo.root / ".autoresearch" / "worktrees" / "lanes"
    assert len(list(lanes.glob("*/*"))) == 2  # the lane worktrees exist
    _, report = doctor(repo.root)
    assert findings(report, "worktrees") == [], report
    ghost = lanes / "missions-demo-gone" / "1"
    ghost.mkdir(parents=True)
    _, report = doctor(repo.root)
    assert [f["message"] for f in findings(report, "worktrees")] == [
        f"worktree {ghost} belongs to no run in the journal"
    ]


def test_restore_is_refused_while_a_run_is_driven(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    driver = FileLock(RepoPaths(repo.root).run("missions-demo-d1").driver_lock)
    driver.acquire()  # a driver of the run, as `run` holds it
    try:
        done = cli("--repo", str(repo.root), "doctor", "--restore", "--force", cwd=repo.root)
    finally:
        driver.release()
    assert done.returncode == 2, done.stderr
    assert "run missions-demo-d1 is being driven right now" in done.stderr
    done = cli("--repo", str(repo.root), "doctor", "--restore", "--force", cwd=repo.root)
    assert "being driven" not in done.stderr, done.stderr
