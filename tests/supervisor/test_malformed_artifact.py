"""Issue 38: under `run`, a malformed candidate.json (its shape: not JSON, not an object, a bad
status or notes, a missing field) is a failed agent session – recorded as today (an `error` row,
note `validation_error:<message>`), its work saved as a patch and the tree reset, counted
toward `--max-agent-failures` – not the end of the run. Only the limit ends the run `failed`,
with the exact message as its stop reason. A hand `step` still fails the run (test_step)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autoresearch.contracts.candidate import MSG_NOTES
from autoresearch.journal import iteration_records, runs
from autoresearch.journal.db import open_journal
from autoresearch.states import DecisionKind, RunStatus
from autoresearch.supervisor.run_read import load_run
from helpers import GIT_ENV, Repo, cli, kill_tree, resume_detached, until

# A `cmd:` agent numbering its sessions in COUNTER (under a lock: with `--lanes 2` two sessions
# start at once, and both read "1" without it): a session listed in BAD (or every one for
# `all`) edits value.txt without committing and hands in `notes: "x"`; HANG names a session
# that does so, says it did (HANG_MARK) and waits to be killed; the others commit a gain.
AGENT = textwrap.dedent(
    """\
    import fcntl, json, os, subprocess, time
    counter = os.environ["COUNTER"]
    with open(counter + ".lock", "w") as lock:  # two lanes' sessions may start at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        n = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
        open(counter, "w").write(str(n))
    bad = os.environ.get("BAD", "")
    base = os.environ["AUTORESEARCH_BASE_COMMIT"]
    artifact = {"status": "candidate", "base_commit": base, "description": f"session {n}",
                "notes": [], "created_at": "2026-01-01T00:00:00Z"}
    if bad == "all" or str(n) in bad.split(",") or str(n) == os.environ.get("HANG"):
        open("value.txt", "w").write("999\\n")  # work the malformed artifact must not lose
        artifact.update(notes="x", candidate_commit=None)
    else:
        open("value.txt", "w").write(f"{10 + n}\\n")
        subprocess.run(["git", "commit", "-qam", f"session {n}"], check=True)
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
        artifact["candidate_commit"] = head.stdout.strip()
    with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as f:
        json.dump(artifact, f)
    if str(n) == os.environ.get("HANG"):
        open(os.environ["HANG_MARK"], "w").write("x")
        time.sleep(120)
    """
)
RUN = "missions-demo-m"


def _agent(tmp_path: Path) -> tuple[str, dict[str, str]]:
    (tmp_path / "agent.py").write_text(AGENT)
    return f"cmd:{sys.executable} {tmp_path / 'agent.py'}", {"COUNTER": str(tmp_path / "n")}


def _run(repo: Repo, tmp_path: Path, env: dict[str, str], *args: str) -> None:
    agent, base = _agent(tmp_path)
    done = cli(
        # --sandbox none: the fake counts its sessions in a file outside the repository
        "run", "missions/demo", "--agent", agent, "--run-tag", "M", "--no-certify",
        "--sandbox", "none", *args,
        cwd=repo.root, env={**base, **env}, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr  # 1: the run failed, recorded
    assert "Traceback" not in done.stderr


def _decisions(repo: Repo) -> list[tuple[DecisionKind | None, str | None, list[str]]]:
    with open_journal(repo.root, 5.0) as journal:
        rows = iteration_records.all_iterations(journal, RUN)
    return [(it.decision, it.decision_reason, it.decision_notes) for it in rows[1:]]


def _run_record(repo: Repo) -> runs.RunRecord:
    with open_journal(repo.root, 5.0) as journal:
        return load_run(journal, RUN)


@pytest.mark.parametrize("lanes", [(), ("--lanes", "2")], ids=["single", "lanes"])
def test_one_malformed_artifact_is_a_failed_session_and_the_run_goes_on(
    mission_dir: Path, repo: Repo, tmp_path: Path, lanes: tuple[str, ...]
) -> None:
    _run(repo, tmp_path, {"BAD": "1"}, "--max-iterations", "3", *lanes)
    run = _run_record(repo)
    assert (run.status, run.stop_reason) == (RunStatus.COMPLETED, "max iterations reached (3)")
    decisions = _decisions(repo)
    assert [d for d, _, _ in decisions].count(DecisionKind.ERROR) == 1
    error = next(row for row in decisions if row[0] == DecisionKind.ERROR)
    assert error[1] == MSG_NOTES
    assert f"validation_error:{MSG_NOTES}" in error[2]
    assert any("saved" in note and ".patch" in note for note in error[2]), error[2]
    assert DecisionKind.KEEP in [d for d, _, _ in decisions]


def test_the_failure_limit_ends_the_run_with_the_exact_message(
    mission_dir: Path, repo: Repo, tmp_path: Path
) -> None:
    _run(repo, tmp_path, {"BAD": "all"}, "--max-iterations", "9", "--max-agent-failures", "2")
    run = _run_record(repo)
    assert (run.status, run.stop_reason) == (RunStatus.FAILED, MSG_NOTES)
    assert run.stop_note == "repeated agent failure limit reached (2)"
    assert [d for d, _, _ in _decisions(repo)] == [DecisionKind.ERROR] * 2
    # each session's work is saved, and the worktree is back at the kept commit
    patches = sorted((repo.root / ".autoresearch/runs" / RUN / "logs").rglob("*.patch"))
    assert len(patches) == 2 and all("999" in p.read_text() for p in patches)
    tree = Path(run.worktree_path)
    assert (tree / "value.txt").read_text() == "1\n"


def test_a_run_killed_after_a_malformed_artifact_resumes_and_completes(
    mission_dir: Path, repo: Repo, tmp_path: Path
) -> None:
    agent, base = _agent(tmp_path)
    mark = tmp_path / "hung"
    env = {**os.environ, **GIT_ENV, **base, "BAD": "1", "HANG": "2", "HANG_MARK": str(mark)}
    args = [
        "--agent",
        agent,
        "--run-tag",
        "M",
        "--no-certify",
        "--max-iterations",
        "4",
        "--sandbox",
        "none",
    ]  # the fake counts its sessions outside the repository
    driver = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "run", "missions/demo", *args],
        cwd=repo.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    until(mark.exists, 120, "the second session wrote its malformed artifact")
    kill_tree(driver.pid, repo.root)
    driver.wait(timeout=30)
    done = resume_detached(repo.root, RUN, env={**base, "BAD": "1"})
    assert done.returncode == 0, done.stderr
    run = _run_record(repo)
    assert (run.status, run.iteration) == (RunStatus.COMPLETED, 4)
    decisions = [d for d, _, _ in _decisions(repo)]
    assert decisions[0] == DecisionKind.ERROR  # recorded once, before the kill
    assert decisions.count(DecisionKind.ERROR) <= 2 and DecisionKind.KEEP in decisions
