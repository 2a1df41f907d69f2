"""The journal's records survive their folder: its marker and backups also live in the
user's state directory (XDG_STATE_HOME, a temp folder in every test), private, so an agent
that runs `rm -rf .autoresearch` loses nothing `doctor --restore` cannot bring back, and the
run resumes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import Repo, cli, git, loose_modes, sandbox_text

CMD_AGENT = Path(__file__).parents[1] / "agents/fakes/cmd_agent.py"
RUN_ID = "missions-demo-t1"

# A session that deletes the whole state folder at iteration 2 (while WIPE is set); else the
# test agent's `improve`.
WIPER = """
import os, runpy, shutil, sys
from pathlib import Path
if os.environ["AUTORESEARCH_ITERATION"] == "2" and os.environ.get("WIPE"):
    shutil.rmtree(Path(os.environ["AUTORESEARCH_WORKTREE"]).parents[1])
    sys.exit(0)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def agent(tmp_path: Path) -> str:
    script = tmp_path / "wiper.py"
    script.write_text(WIPER)
    return f"cmd:{sys.executable} {script} {CMD_AGENT}"


def test_rm_rf_state_then_restore_then_resume(repo: Repo, tmp_path: Path):
    # Backups after an iteration are throttled (≤ 10 % of the run's time, at most one a second:
    # journal/db.BackupThrottle): a second's evaluation lets the one after iteration 1's keep
    # happen on a loaded machine too, as in test_journal_tamper; a restore is only as recent as
    # the newest backup.
    repo.mission(sandbox=sandbox_text("sleep 1; python3 scripts/eval.py"))
    wiper = agent(tmp_path)
    done = cli(
        "run", "missions/demo", "--agent", wiper, "--run-tag", "T1", "--max-iterations", "3",
        "--sandbox", "none", cwd=repo.root, env={"WIPE": "1"},  # the box hides .autoresearch/
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert not (repo.root / ".autoresearch").exists()
    kept = git(repo.root, "rev-parse", "autoresearch/missions-demo/t1")

    refused = cli("status", cwd=repo.root)
    assert refused.returncode == 2 and "doctor --restore" in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    report = cli("doctor", "--json", cwd=repo.root)
    assert report.returncode == 1, report.stdout
    (journal,) = [f for f in json.loads(report.stdout)["findings"] if f["check"] == "journal"]
    assert journal["severity"] == "error" and "doctor --restore" in journal["fix"]

    restored = cli("doctor", "--restore", "--json", cwd=repo.root)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    outcome = json.loads(restored.stdout)["restored"]
    state = Path(os.environ["XDG_STATE_HOME"])
    assert Path(outcome["restored_from"]).is_relative_to(state)
    assert outcome["worktrees"] == [str(repo.root / ".autoresearch/worktrees" / RUN_ID)]

    resumed = cli("resume", RUN_ID, "--max-iterations", "3", cwd=repo.root)
    assert resumed.returncode == 0, resumed.stderr
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    assert status["status"] == "completed"
    # the keep of iteration 1 was on the branch before the wipe and is kept after it
    ancestry = ["git", "merge-base", "--is-ancestor", kept, status["last_kept_commit"]]
    assert subprocess.run(ancestry, cwd=repo.root).returncode == 0
    assert loose_modes(state) == []  # the outside records are the user's alone


def test_the_outside_records_refuse_a_fresh_journal_in_place_of_a_deleted_one(
    repo: Repo, mission_dir: Path
) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "p1", cwd=repo.root).returncode == 0
    for path in sorted((repo.root / ".autoresearch").rglob("*"), reverse=True):
        if path.is_file() and "worktrees" not in path.parts:
            path.unlink()
    done = cli("prepare", "missions/demo", "--run-tag", "p2", cwd=repo.root)
    assert done.returncode == 2 and "was truncated, deleted or replaced" in done.stderr
    assert not (repo.root / ".autoresearch/journal.sqlite3").exists()  # nothing was written
    # the way to a new journal instead, when the old one is not wanted back
    outside = done.stderr.split("remove its markers ")[1].split(" and ")[0]
    Path(outside).unlink()
    assert cli("prepare", "missions/demo", "--run-tag", "p2", cwd=repo.root).returncode == 0


def test_an_unusable_state_directory_is_one_line(repo: Repo, mission_dir: Path, tmp_path: Path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x")
    done = cli("prepare", "missions/demo", cwd=repo.root, env={"XDG_STATE_HOME": str(blocked)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("autoresearch: ") and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
