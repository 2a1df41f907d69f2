"""Stopping `run --lanes K` with K sessions in flight: Ctrl-C and SIGTERM to the driver (and a
second one), an operator's `autoresearch stop` from another process, and budgets over all
lanes. Real git repositories, the real CLI in subprocesses, a `cmd:` agent that has unsaved
work on disk while it runs, like a real one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from helpers import GIT_ENV, Repo, cli, git, pid_alive, sandbox_text, until

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_work_agent.py'}"
RUN_ID = "missions-demo-t1"
LANES = 3
EVALUATOR = textwrap.dedent(
    """\
    import glob, json
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    print(json.dumps({"pass": True, "score": score}))
    """
)


def _mission(repo: Repo, extra: str = "") -> None:
    repo.write("scripts/score.py", EVALUATOR)
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra))


def _start(
    repo: Repo, marks: Path, *args: str, **env: str
) -> tuple[subprocess.Popen[str], dict[str, int]]:
    """`run --lanes 3` in a subprocess, once every lane is mid-session: the driver and the
    sessions in flight (`<lane>-<session>` → the agent's pid)."""
    _mission(repo)
    marks.mkdir(exist_ok=True)
    full = {**os.environ, **GIT_ENV, "LANE_MARKS": str(marks), **env}
    # unboxed: the agents note their pids in `marks`, outside the repository
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "T1", "--json", "--lanes", str(LANES), "--sandbox", "none", *args]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=repo.root, env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    until(lambda: len(_in_flight(marks)) == LANES, what="every lane mid-session")
    return proc, _in_flight(marks)


def _in_flight(marks: Path) -> dict[str, int]:
    """Sessions that have their unsaved edit on disk: `<lane>-<session>` → the agent's pid."""
    return {p.name: int(p.read_text()) for p in marks.iterdir() if p.suffix != ".tmp"}


def _status(repo: Repo) -> dict[str, Any]:
    done = cli("status", RUN_ID, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _lane_dir(repo: Repo, lane: int) -> Path:
    return repo.root / ".autoresearch/runs" / RUN_ID / "lanes" / str(lane)


def _lane_worktree(repo: Repo, lane: int) -> Path:
    return repo.root / ".autoresearch/worktrees/lanes" / RUN_ID / str(lane)


def _saved_work(repo: Repo) -> dict[str, str]:
    """Every saved patch of every lane: its name → its text."""
    return {
        f"{p.parents[1].name}/{p.name}": p.read_text()
        for lane in range(1, LANES + 1)
        for p in (_lane_dir(repo, lane) / "logs").glob("*.patch")
    }


def _resume_completes(repo: Repo, iterations: int) -> dict[str, Any]:
    done = cli("resume", RUN_ID, "--json", cwd=repo.root, env={"LANE_SLEEP": "0"}, timeout=180)
    assert done.returncode == 0, done.stderr
    after = _status(repo)
    assert (after["status"], after["iteration"]) == ("completed", iterations)
    return after


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_with_every_lane_in_flight_saves_each_lane_and_resume_continues(
    repo: Repo, tmp_path: Path, sig: signal.Signals
) -> None:
    proc, pids = _start(repo, tmp_path / "marks", "--max-iterations", "4")
    proc.send_signal(sig)  # the driver only: sessions run in their own process groups
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # stopped, resumable: not `completed`
    assert "stopping the current session" in err
    assert f"autoresearch resume {RUN_ID}" in err
    assert not any(pid_alive(pid) for pid in pids.values())
    summary = json.loads(out)
    assert (summary["status"], summary["interrupted"]) == ("running", True)
    assert {lane["lane"]: lane["state"] for lane in summary["lanes"]} == {
        k: "waiting" for k in range(1, LANES + 1)
    }
    # each lane's unsaved edit is in a patch, and its worktree is clean at the incumbent
    saved = _saved_work(repo)
    for name in pids:
        lane, session = name.split("-")
        patch = saved[f"{lane}/session-{int(session):04d}-interrupted.patch"]
        assert f"+lane {lane} session {session}: unsaved work" in patch
        assert git(_lane_worktree(repo, int(lane)), "status", "--porcelain") == ""
    assert _status(repo)["iteration"] == 0  # nothing in flight was judged without its lane
    after = _resume_completes(repo, 4)
    decisions = [it["decision"] for it in after["iterations"][1:]]
    assert decisions.count("interrupted") == LANES  # each interrupted session judged once
    assert decisions.count("keep") == 1  # a restarted lane went on
    assert set(_saved_work(repo)) >= set(saved)  # nothing saved before was lost


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_interrupts_at_once_and_resume_saves_what_was_left(
    repo: Repo, tmp_path: Path, sig: signal.Signals
) -> None:
    # agents that ignore SIGTERM: the first signal waits for the kill grace to end them
    proc, pids = _start(repo, tmp_path / "marks", "--max-iterations", "4",
                        LANE_IGNORE_TERM="1", AUTORESEARCH_KILL_GRACE_SECONDS="20")  # fmt: skip
    proc.send_signal(sig)
    assert proc.stderr is not None
    until(lambda: "stopping the current session" in proc.stderr.readline(), what="first stop")
    started = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=15)
    # not the 20 s kill grace, nor 2 s of SIGTERM grace per stubborn lane, one after another
    # (3 lanes: 6 s, before)
    assert time.monotonic() - started < 4
    assert proc.returncode == 130, err
    assert "autoresearch: interrupted" in err
    # the sessions live in process groups of their own: the driver stopped them before it
    # exited (a driver killed by SIGTERM's default action left them running, orphaned)
    until(lambda: not any(pid_alive(pid) for pid in pids.values()), timeout=5, what="reaped")
    after = _resume_completes(repo, 4)
    assert not any(pid_alive(pid) for pid in pids.values())  # stubborn agents left: reaped
    saved = _saved_work(repo)
    for name in pids:  # what every session had on disk was saved, under one name or another
        lane, session = name.split("-")
        assert any(
            p.startswith(f"{lane}/session-{int(session):04d}-")
            and f"+lane {lane} session {session}: unsaved work" in text
            for p, text in saved.items()
        ), (name, sorted(saved))
    # the sessions the second signal cut off are recorded interrupted, as without lanes, each
    # once; then a restarted lane went on
    decisions = [it["decision"] for it in after["iterations"][1:]]
    assert decisions.count("interrupted") == LANES, decisions
    assert decisions.count("keep") == 1, decisions


def test_operator_stop_from_another_process_ends_every_lane_and_records_it(
    repo: Repo, tmp_path: Path
) -> None:
    proc, pids = _start(repo, tmp_path / "marks", "--max-iterations", "9")
    done = cli("stop", RUN_ID, "--reason", "lunch", cwd=repo.root)
    assert done.returncode == 0 and "stop requested" in done.stdout, done.stderr
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert not any(pid_alive(pid) for pid in pids.values())
    summary = json.loads(out)
    assert (summary["status"], summary["stop_reason"]) == ("stopped", "operator stop")
    assert summary["interrupted"] is False
    after = _status(repo)
    assert after["manifest"]["stop_note"] == "lunch"
    # each session in flight was ended, its work saved and recorded as interrupted
    its = after["iterations"][1:]
    assert [it["decision"] for it in its] == ["interrupted"] * LANES
    assert sorted(it["agent"]["lane"] for it in its) == list(range(1, LANES + 1))
    saved = _saved_work(repo)
    for name in pids:
        lane, session = name.split("-")
        patch = saved[f"{lane}/session-{int(session):04d}-interrupted.patch"]
        assert f"+lane {lane} session {session}: unsaved work" in patch
    assert {lane["state"] for lane in summary["lanes"]} == {"stopped"}
    assert all(lane["last_decision"] == "interrupted" for lane in summary["lanes"])


def test_a_second_signal_while_the_summary_is_written_still_interrupts_at_once(
    repo: Repo, tmp_path: Path
) -> None:
    # the window after the lanes have stopped: the driver writes the summary and the report
    # (a second or more on a loaded machine); SIGTERM's default action there killed it (143)
    proc, _ = _start(repo, tmp_path / "marks", "--max-iterations", "4",
                     AUTORESEARCH_FAILPOINTS="summary.start:stall")  # fmt: skip
    proc.send_signal(signal.SIGTERM)
    _signal_at_the_summary(proc)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "autoresearch: interrupted" in err
    after = _resume_completes(repo, 4)
    assert after["iterations"][1:], after  # the run went on from what was recorded


def test_the_first_signal_after_the_loop_has_ended_says_the_summary_is_still_written(
    repo: Repo,
) -> None:
    # the loop ended on its own (its one iteration done): a signal there stops no session; the
    # driver says what it still does, does it, and the run stays completed
    _mission(repo)
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", "cmd:true",
            "--run-tag", "T1", "--max-iterations", "1", "--json"]  # fmt: skip
    env = {**os.environ, **GIT_ENV, "AUTORESEARCH_FAILPOINTS": "summary.start:stall"}
    proc = subprocess.Popen(argv, cwd=repo.root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    _signal_at_the_summary(proc)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "autoresearch: the loop has ended; still writing its summary and the report" in err
    assert "stopping the current session" not in err
    assert "autoresearch resume" not in err  # nothing was interrupted
    summary = json.loads(out)
    assert (summary["status"], summary["interrupted"]) == ("completed", False)
    assert Path(summary["report_file"]).is_file()
    assert _status(repo)["status"] == "completed"


def _signal_at_the_summary(proc: subprocess.Popen[str]) -> None:
    """SIGTERM once the driver stalls where the summary starts (`summary.start:stall`)."""
    assert proc.stderr is not None
    until(lambda: "failpoint summary.start: stalled" in proc.stderr.readline(), what="summary")
    proc.send_signal(signal.SIGTERM)
