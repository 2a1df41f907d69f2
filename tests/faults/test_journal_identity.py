"""A journal that is damaged, truncated, deleted or swapped is never mistaken for a fresh one
and never written; backups taken at safe points and `autoresearch doctor --restore` are the
way back."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

from helpers import cli, git


def status(repo: Path):
    return cli("--repo", str(repo), "status", "--json", cwd=repo)


def one_line_refusal(done, needle: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert needle in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def journal_of(repo: Path) -> Path:
    return repo / ".autoresearch/journal.sqlite3"


def test_a_backup_is_taken_and_doctor_reports_healthy(demo: Path) -> None:
    names = sorted(b.name for b in (demo / ".autoresearch/backups").glob("journal.*.sqlite3"))
    # prepare's and the run's end's are always taken, an iteration's only once the run has spent
    # 9 times the last backup's time, and a second, since (journal/db.BackupThrottle): a timing,
    # so the two-iteration demo leaves 2 or 3 (a quick iteration none of its own)
    assert names in (["journal.1.sqlite3", "journal.2.sqlite3"],
                     ["journal.1.sqlite3", "journal.2.sqlite3", "journal.3.sqlite3"]), names  # fmt: skip
    done = cli("--repo", str(demo), "doctor", "--json", cwd=demo)
    report = json.loads(done.stdout)
    journal = [f for f in report["findings"] if f["check"] == "journal"]
    assert journal[0]["severity"] == "ok", report
    assert all(f["severity"] != "error" for f in report["findings"] if f["check"] != "worktrees")


def test_truncated_journal_is_refused_then_restored(demo: Path) -> None:
    before = json.loads(status(demo).stdout)["runs"]
    journal_of(demo).write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{journal_of(demo)}{suffix}").unlink(missing_ok=True)
    one_line_refusal(status(demo), "was truncated, deleted or replaced")
    one_line_refusal(
        cli("--repo", str(demo), "run", "missions/tune-sgd", "--agent", "offline", cwd=demo),
        "doctor --restore",
    )
    assert journal_of(demo).read_bytes() == b""  # nothing was written into it
    report = cli("--repo", str(demo), "doctor", "--json", cwd=demo)
    assert report.returncode == 1
    (finding,) = [f for f in json.loads(report.stdout)["findings"] if f["check"] == "journal"]
    assert finding["severity"] == "error" and "doctor --restore" in finding["fix"]
    done = cli("--repo", str(demo), "doctor", "--restore", cwd=demo)
    assert "restored the journal from" in done.stdout, done.stdout + done.stderr
    assert json.loads(status(demo).stdout)["runs"] == before
    assert list(demo.glob(".autoresearch/journal.sqlite3.replaced-*"))  # moved aside, kept


def overwrite_a_page(journal: Path) -> None:
    """Garbage over one page in the middle of the file, as a stray write would leave it."""
    conn_size = journal.stat().st_size
    page = 4096
    victim = (conn_size // page) // 2 * page
    with journal.open("r+b") as handle:
        handle.seek(victim)
        handle.write(b"\xa5" * page)


def test_damaged_page_is_found_before_any_write(demo: Path) -> None:
    with sqlite3.connect(journal_of(demo)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    overwrite_a_page(journal_of(demo))
    damaged = journal_of(demo).read_bytes()
    for args in (["status"], ["stop"], ["resume", "x"]):
        one_line_refusal(cli("--repo", str(demo), *args, cwd=demo), "doctor --restore")
    assert journal_of(demo).read_bytes() == damaged
    done = cli("--repo", str(demo), "doctor", "--restore", "--json", cwd=demo)
    assert json.loads(done.stdout)["restored"]["restored_from"].endswith("journal.1.sqlite3")
    assert status(demo).returncode == 0


def test_a_swapped_journal_is_refused(demo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    done = cli("demo", str(other), "--iterations", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for suffix in ("", "-wal", "-shm"):
        Path(f"{journal_of(demo)}{suffix}").unlink(missing_ok=True)
        source = Path(f"{journal_of(other)}{suffix}")
        if source.exists():
            shutil.copy(source, f"{journal_of(demo)}{suffix}")
    one_line_refusal(status(demo), "was swapped for another one")
    # copied into a repository that never had a journal: it names its own repository
    fresh = tmp_path / "fresh"
    git(tmp_path, "init", "-q", str(fresh))
    (fresh / ".autoresearch").mkdir()
    shutil.copy(journal_of(demo), journal_of(fresh))
    one_line_refusal(status(fresh), "belongs to another repository")


def test_restore_refuses_a_whole_journal(demo: Path) -> None:
    done = cli("--repo", str(demo), "doctor", "--restore", cwd=demo)
    one_line_refusal(done, "is whole and the one that belongs here")


DELETER = """
import os, sys
from pathlib import Path
req_dir = Path(os.environ["AUTORESEARCH_WORKTREE"])
journal = req_dir.parent.parent / "journal.sqlite3"
for suffix in ("", "-wal", "-shm"):
    Path(str(journal) + suffix).unlink(missing_ok=True)
"""


def test_an_agent_that_deletes_the_journal_stops_the_driver(tmp_path: Path) -> None:
    repo = tmp_path / "demo"
    done = cli("demo", str(repo), "--iterations", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (repo / "deleter.py").write_text(DELETER)
    agent = f"cmd:{sys.executable} {repo / 'deleter.py'}"
    # unboxed: the OS sandbox hides the journal from the agent (tests/test_confine.py)
    done = cli(
        "--repo", str(repo), "run", "missions/tune-sgd", "--agent", agent, "--max-iterations", "2",
        "--sandbox", "none", cwd=repo,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "was deleted or replaced while this process had it open" in done.stderr
    assert "Traceback" not in done.stderr
    assert not journal_of(repo).exists()
    one_line_refusal(status(repo), "was truncated, deleted or replaced")
    restored = cli("--repo", str(repo), "doctor", "--restore", cwd=repo)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    runs = json.loads(status(repo).stdout)["runs"]
    assert [r["status"] for r in runs][:1] == ["completed"]
