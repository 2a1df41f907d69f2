"""A journal whose history was rewritten behind autoresearch's back (an agent with `sqlite3`)
is found – at open and before any git effect – and never obeyed: the run stops with one line
that names the restore, the run branch keeps its keeps, and the restore lets it resume."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from autoresearch.errors import JournalError
from autoresearch.journal.db import Journal, open_journal
from helpers import Repo, cli, forge_away_iteration, git

CMD_AGENT = Path(__file__).parents[1] / "agents/fakes/cmd_agent.py"
RUN_ID = "missions-demo-t1"
BRANCH = "autoresearch/missions-demo/t1"

# At iteration 3 (or TAMPER_AT) the session forgets the run's keeps: it deletes the decided
# iterations and sets the kept commit back to the baseline (or to TAMPER_TO), then works as
# usual (after TAMPER_SLEEP seconds). With TAMPER_AFTER_BACKUP it first waits (≤ 60 s) for the
# newest backup to hold every decision before it: the throttle may have put that backup off,
# to be taken while this session runs.
TAMPERER = """
import os, runpy, sqlite3, sys, time
from contextlib import closing
from pathlib import Path
at = os.environ.get("TAMPER_AT", "3")
if os.environ["AUTORESEARCH_ITERATION"] == at and os.environ.get("TAMPER"):
    journal = Path(os.environ["AUTORESEARCH_WORKTREE"]).parents[1] / "journal.sqlite3"
    run = os.environ["AUTORESEARCH_RUN_ID"]
    deadline = time.monotonic() + 60
    while os.environ.get("TAMPER_AFTER_BACKUP") and time.monotonic() < deadline:
        newest = journal.parent / "backups" / "journal.1.sqlite3"
        held = None
        try:
            with closing(sqlite3.connect(f"{newest.as_uri()}?mode=ro", uri=True)) as backup:
                held = backup.execute(
                    "select max(iteration) from iterations where run_id=?", (run,)
                ).fetchone()[0]
        except sqlite3.Error:
            pass
        if held is not None and held >= int(at) - 1:
            break
        time.sleep(0.05)
    conn = sqlite3.connect(journal)
    base = conn.execute("select baseline_commit from runs where run_id=?", (run,)).fetchone()[0]
    conn.execute("delete from evaluations where run_id=? and iteration > 0", (run,))
    conn.execute("delete from iterations where run_id=? and iteration > 0", (run,))
    kept = os.environ.get("TAMPER_TO") or base
    conn.execute("update runs set last_kept_commit=? where run_id=?", (kept, run))
    conn.commit()
    time.sleep(float(os.environ.get("TAMPER_SLEEP", "0")))
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def run_tampered(repo: Repo, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    script = tmp_path / "tamperer.py"
    script.write_text(TAMPERER)
    # unboxed: what is tested is what the seals do about an agent that reaches the journal,
    # which the OS sandbox hides (tests/test_confine.py)
    return cli(
        "run", "missions/demo", "--agent", f"cmd:{sys.executable} {script} {CMD_AGENT}",
        "--run-tag", "T1", "--max-iterations", "4", "--sandbox", "none", cwd=repo.root,
        env={"TAMPER": "1", **env},
    )  # fmt: skip


def one_line(done: subprocess.CompletedProcess, needle: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert needle in done.stderr and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("autoresearch:")]
    assert len(lines) == 1, done.stderr


def is_ancestor(repo: Repo, older: str, newer: str) -> bool:
    check = ["git", "merge-base", "--is-ancestor", older, newer]
    return subprocess.run(check, cwd=repo.root).returncode == 0


def test_a_rewritten_history_stops_the_run_and_the_restore_resumes_it(
    repo: Repo, tmp_path: Path
) -> None:
    # the rewrite waits for the backup of the last decision before it (one that lags behind
    # the branch is a restore that lags: test_doctor.py, not what this test is about)
    repo.mission()
    done = run_tampered(repo, tmp_path, TAMPER_AFTER_BACKUP="1")
    one_line(done, "was changed outside autoresearch")
    assert "autoresearch doctor --restore" in done.stderr
    # no git effect followed: the run branch still holds both keeps (it was reset to the
    # baseline before)
    kept = git(repo.root, "log", "--format=%H %s", BRANCH).splitlines()
    second = next(line.split()[0] for line in kept if line.endswith("improve to 3"))
    assert is_ancestor(repo, second, BRANCH)

    one_line(cli("status", cwd=repo.root), "was changed outside autoresearch")
    report = cli("doctor", "--json", cwd=repo.root)
    assert report.returncode == 1
    (journal,) = [f for f in json.loads(report.stdout)["findings"] if f["check"] == "journal"]
    assert journal["severity"] == "error" and "doctor --restore" in journal["fix"]

    restored = cli("doctor", "--restore", cwd=repo.root)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    resumed = cli("resume", RUN_ID, cwd=repo.root)
    assert resumed.returncode == 0, resumed.stderr
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    assert status["status"] == "completed"
    assert is_ancestor(repo, second, status["last_kept_commit"])


def test_a_kept_commit_set_to_a_missing_object_is_one_line(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    done = run_tampered(repo, tmp_path, TAMPER_TO="0" * 40)
    one_line(done, "was changed outside autoresearch")
    assert "exit 128" not in done.stderr and "git diff" not in done.stderr


def test_a_journal_rewritten_mid_session_lets_the_session_end_then_stops_the_run(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """The first keep comes within the backup throttle's second: its backup is owed, and the
    driver's stop poll takes it during the next session, which rewrites the journal first.
    That backup is refused, and stays owed: the session works on to its end (its agent is
    paid for) and the step after it stops the run in one line, before any git effect (were
    the refusal raised from the poll, the session would be killed mid-work)."""
    done = run_tampered(repo, tmp_path, TAMPER_AT="2", TAMPER_SLEEP="2.5")
    one_line(done, "was changed outside autoresearch")
    assert "autoresearch doctor --restore" in done.stderr
    subjects = git(repo.root, "log", "--all", "--format=%s").splitlines()
    assert "improve to 3" in subjects  # the second session's commit: it was not cut short


def test_writes_over_a_tampered_row_abort_and_a_reopen_refuses(repo: Repo) -> None:
    path = repo.root / ".autoresearch/journal.sqlite3"
    with open_journal(repo.root) as journal, journal.tx() as conn:
        conn.execute(
            "INSERT INTO runs (run_id, run_tag, mission_slug, source_mission_dir, mission_dir, "
            "mission_file, sandbox_file, repo_root, worktree_path, branch_name, "
            "baseline_commit, last_kept_commit, evaluator_json, keep_policy, sandbox_json, "
            "status, phase, created_at, updated_at) VALUES ('r', 't', 's', '', '', '', '', '', "
            "'', 'b', 'base', 'kept', '{}', 'pass_only', '{}', 'running', 'ready', 'x', 'x')"
        )
    with open_journal(repo.root) as journal:
        other = sqlite3.connect(path)
        with other:
            other.execute("UPDATE runs SET last_kept_commit = 'base'")
        other.close()
        with pytest.raises(JournalError, match="changed outside autoresearch"):
            journal.check_kept("r", "base", "base")
        with pytest.raises(JournalError, match="changed outside autoresearch"), journal.tx() as tx:
            tx.execute("UPDATE runs SET last_kept_commit = 'newer'")
    with pytest.raises(JournalError, match=r"run r: its kept commit .* doctor --restore"):
        Journal.open(path)


def test_doctor_reports_a_journal_that_lost_a_decision_its_backup_holds(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """Someone who could read the seal key rewrote the journal with valid seals: the backup
    outside the repository still disagrees, and doctor says so."""
    script = tmp_path / "agent.py"
    script.write_text(TAMPERER)
    done = cli(
        "run", "missions/demo", "--agent", f"cmd:{sys.executable} {script} {CMD_AGENT}",
        "--run-tag", "T1", "--max-iterations", "2", "--sandbox", "none", cwd=repo.root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert cli("doctor", cwd=repo.root).returncode == 0
    path = repo.root / ".autoresearch/journal.sqlite3"
    forge_away_iteration(path, 1)  # the seals stay valid: only a backup can tell
    assert cli("status", cwd=repo.root).returncode == 0  # nothing for the seals to find
    report = cli("doctor", "--json", cwd=repo.root)
    assert report.returncode == 1, report.stdout
    (found,) = [f for f in json.loads(report.stdout)["findings"] if "disagrees" in f["message"]]
    assert found["severity"] == "error" and "iteration 1 (keep)" in found["message"]
    assert "doctor --restore --force" in found["fix"]
