"""`--on-plateau ask` (issue 33) through the real CLI: the driver pauses (no session runs)
with a notice that `status` shows, until `autoresearch continue`; a kill during the pause and
a resume keep it paused; bad settings are refused before anything is prepared; and a
noise-aware run whose candidates are within the noise stops on its plateau."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from autoresearch.supervisor.plateau import msg_plateau
from helpers import (
    GIT_ENV,
    cli,
    decisions,
    kill_tree,
    make_repo,
    pid_alive,
    run_noisy,
    sandbox_text,
    until,
)

FLAT_AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/flat_agent.py'}"


def _start(repo: Path, *args: str) -> subprocess.Popen[str]:
    """A driver in a process group of its own (a test may kill the whole tree)."""
    return subprocess.Popen(
        [sys.executable, "-m", "autoresearch", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _runs(repo: Path) -> list[dict[str, Any]]:
    done = cli("status", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["runs"])


def _paused_run(repo: Path) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    def paused() -> bool:
        found[:] = [r for r in _runs(repo) if r["paused"]]
        return bool(found)

    until(paused, timeout=120, what="a run paused on a plateau")
    return found[0]


def _ask_run(tmp: Path, *extra: str) -> tuple[Path, subprocess.Popen[str]]:
    repo = make_repo(tmp / "repo")
    repo.mission()
    driver = _start(
        repo.root, "run", "missions/demo", "--agent", FLAT_AGENT, "--plateau", "2",
        "--on-plateau", "ask", "--max-iterations", "4", "--no-certify", *extra,
    )  # fmt: skip
    return repo.root, driver


def test_ask_pauses_status_shows_it_and_continue_goes_on(tmp_path: Path) -> None:
    repo, driver = _ask_run(tmp_path)
    try:
        run = _paused_run(repo)
        run_id = run["run_id"]
        assert run["status"] == "running" and run["iteration"] == 2
        assert run["paused"].startswith(f"paused: {msg_plateau(2)}; go on with")
        assert run["resume_command"] == f"autoresearch continue {run_id}"
        text = cli("status", run_id, cwd=repo).stdout
        assert f"paused: {msg_plateau(2)}" in text
        assert driver.poll() is None  # the driver waits, holding no session
        assert _runs(repo)[0]["iteration"] == 2
        # the waiting driver keeps its own limits: new ones are refused, the pause stays
        refused = cli("continue", run_id, "--max-iterations", "+5", cwd=repo)
        assert refused.returncode != 0 and "its driver waits with its own limits" in (
            refused.stderr
        )
        assert _paused_run(repo)["run_id"] == run_id
        done = cli("continue", run_id, cwd=repo)
        assert done.returncode == 0, done.stderr
        assert "it goes on" in done.stderr
        _, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            kill_tree(driver.pid, repo)
    assert driver.returncode == 0, err
    assert f"paused: {msg_plateau(2)}" in err  # the live display said so
    ended = _runs(repo)[0]
    # counted afresh from the continue: 2 more flat iterations would pause again at 4, but
    # the iteration limit ends the run first
    assert (ended["status"], ended["stop_reason"]) == ("completed", "max iterations reached (4)")
    assert ended["paused"] is None


def test_a_paused_run_takes_the_backup_its_last_decisions_owe(tmp_path: Path) -> None:
    """The flat agent's quick decisions come within the backup throttle's second: their
    backup is skipped and owed, and the paused driver (which may wait for days) takes it
    once due instead of at a next decision that never comes (before: never taken)."""
    repo, driver = _ask_run(tmp_path)
    try:
        _paused_run(repo)
        journal = decisions(repo)
        assert [d for _, d in journal] == ["baseline", "discard", "discard"]
        # due a second after the last backup; the pause polls every half second
        until(lambda: decisions(repo, backup=True) == journal, timeout=5, what="the backup")
        assert driver.poll() is None  # still paused: no decision made the backup
    finally:
        if driver.poll() is None:
            kill_tree(driver.pid, repo)


def test_ask_over_lanes_lets_the_sessions_in_flight_end_then_starts_none(
    tmp_path: Path,
) -> None:
    repo, driver = _ask_run(tmp_path, "--lanes", "2")
    try:
        run_id = _paused_run(repo)["run_id"]

        def lanes_idle() -> bool:
            details = json.loads(cli("status", run_id, "--json", cwd=repo).stdout)
            return all(lane["state"] != "agent" for lane in details["lanes"])

        until(lanes_idle, timeout=120, what="no session while paused")
        held = _runs(repo)[0]["iteration"]
        assert held in (2, 3)  # the plateau at 2, and the other lane's session judged
        assert driver.poll() is None and _runs(repo)[0]["iteration"] == held
        assert cli("continue", run_id, cwd=repo).returncode == 0
        _, err = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            kill_tree(driver.pid, repo)
    assert driver.returncode == 0, err
    ended = _runs(repo)[0]
    assert (ended["status"], ended["stop_reason"]) == ("completed", "max iterations reached (4)")


def test_stop_ends_a_paused_run_and_its_waiting_driver(tmp_path: Path) -> None:
    repo, driver = _ask_run(tmp_path)
    try:
        run_id = _paused_run(repo)["run_id"]
        assert cli("stop", run_id, cwd=repo).returncode == 0
        driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            kill_tree(driver.pid, repo)
    ended = _runs(repo)[0]
    assert (ended["status"], ended["stop_reason"], ended["paused"]) == (
        "stopped", "operator stop", None,
    )  # fmt: skip
    assert ended["iteration"] == 2 and "nobody drives" not in cli("status", cwd=repo).stdout


def test_a_kill_during_the_pause_and_a_resume_stay_paused_until_continue(
    tmp_path: Path,
) -> None:
    repo, driver = _ask_run(tmp_path)
    resumed = None
    try:
        run_id = _paused_run(repo)["run_id"]
        kill_tree(driver.pid, repo)
        driver.wait(timeout=30)
        assert _paused_run(repo)["driver_alive"] is False
        resumed = _start(repo, "resume", run_id)
        until(lambda: _runs(repo)[0]["driver_alive"], timeout=60, what="the resumed driver")
        run = _paused_run(repo)
        assert run["iteration"] == 2  # paused still: the resumed driver started no session
        done = cli("continue", run_id, cwd=repo)
        assert done.returncode == 0, done.stderr
        _, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
    finally:
        for proc in (driver, resumed):
            if proc is not None and pid_alive(proc.pid):
                kill_tree(proc.pid, repo)
    ended = _runs(repo)[0]
    assert (ended["status"], ended["iteration"], ended["paused"]) == ("completed", 4, None)


def test_continue_of_a_paused_run_nobody_drives_resumes_its_loop(tmp_path: Path) -> None:
    repo, driver = _ask_run(tmp_path)
    try:
        run_id = _paused_run(repo)["run_id"]
        kill_tree(driver.pid, repo)
        driver.wait(timeout=30)
        done = cli("continue", run_id, cwd=repo, timeout=180)
    finally:
        if pid_alive(driver.pid):
            kill_tree(driver.pid, repo)
    assert done.returncode == 0, done.stderr
    assert "was paused on a plateau: it goes on" in done.stderr
    ended = _runs(repo)[0]
    assert (ended["status"], ended["iteration"], ended["paused"]) == ("completed", 4, None)


def test_bad_plateau_settings_are_refused_before_anything_is_prepared(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    repo.mission("missions/bad", sandbox_text(extra="search:\n  plateau: 0\n"))
    for args, message in [
        (("missions/demo", "--plateau", "0"), "'--plateau': 0 is not in the range x>=1"),
        (("missions/demo", "--on-plateau", "later"), "'--on-plateau': 'later' is not one of"),
        (
            ("missions/bad",),
            "sandbox.md frontmatter search.plateau must be a positive whole number",
        ),
    ]:
        done = cli("run", *args, "--agent", FLAT_AGENT, cwd=repo.root)
        assert done.returncode != 0 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert len(repo.git("worktree", "list").splitlines()) == 1  # no run was prepared


# a session that changes nothing the score depends on: under the noise, never significant
NOTHING_BETTER = """\
import json, os, subprocess
n = os.environ["AUTORESEARCH_ITERATION"]
open(f"note-{n}.txt", "w").write("x\\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-qm", f"note {n}"], check=True)
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout
json.dump({"status": "candidate", "candidate_commit": head.strip(),
           "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"], "description": f"note {n}",
           "notes": [], "created_at": "2026-01-01T00:00:00Z"},
          open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w"))
"""


def test_a_noise_aware_run_without_a_real_gain_stops_on_its_plateau(tmp_path: Path) -> None:
    """Under a noisy evaluator a candidate is kept only beyond the noise: results within it
    (ambiguous) or worse (discard) are no improvement, so the plateau stops the run."""
    repo = make_repo(tmp_path / "repo")
    done = run_noisy(
        repo, tmp_path, NOTHING_BETTER, "--plateau", "2", "--on-plateau", "stop",
        "--max-iterations", "10",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = _runs(repo.root)[0]
    assert (run["status"], run["stop_reason"]) == ("completed", msg_plateau(2))
    decided = {k: v for k, v in run["counts"].items() if v and k != "baseline"}
    assert sum(decided.values()) == 2 and set(decided) <= {"ambiguous", "discard"}, decided
