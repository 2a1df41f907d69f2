"""A lanes driver killed alone (kill -9 of the driver process: its evaluators lead their own
process groups and run on) while a further reading runs in a scratch checkout of its own
(`lanes._read_ahead`: scratch/ahead/N, not the lane's worktree): the resumed driver must not
start an evaluation until that reading is gone. Else the machine runs more evaluations at
once than sandbox.md's `slots` – timed benchmarks contaminating each other – for as long as
the stray runs. Every reading appends `start`/`end` lines with its pid, its ancestors' pids and
its tree; the stray's `end` is written by its SIGTERM handler (the reaper's first signal) or
when it finishes by itself. A reading is the resumed driver's when that driver is among its
ancestors: the killed driver may have spawned one just before the kill that logs its start
only after it (a start time cannot tell them apart)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import GIT_ENV, Repo, run_children, sandbox_text, until

AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_agent.py'}"
RUN_ID = "missions-demo-p1"
# score = value.txt + one per bonus file + noise; a reading in a scratch/ahead tree while
# HANG exists hangs (STRAY_SECONDS), once
NOISY = textwrap.dedent(
    """\
    import glob, json, os, random, signal, sys, time
    log, tree = os.environ["EVAL_LOG"], os.environ["AUTORESEARCH_WORKTREE"]

    def ancestors():
        pids, pid = [], os.getppid()
        while pid > 1:
            pids.append(str(pid))
            try:
                with open(f"/proc/{pid}/stat") as f:
                    pid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
        return ",".join(pids) or "-"

    def line(what):
        with open(log, "a") as f:
            f.write(f"{what} {os.getpid()} {time.time()} {ancestors()} {tree}\\n")

    def stopped(signum, frame):
        line("end")
        sys.exit(1)

    signal.signal(signal.SIGTERM, stopped)
    line("start")
    hang = os.environ["HANG"]
    if "/ahead/" in tree and os.path.exists(hang):
        os.unlink(hang)
        line("stray")
        time.sleep(float(os.environ["STRAY_SECONDS"]))
    time.sleep(0.2)
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    line("end")
    print(json.dumps({"pass": True, "score": score + random.gauss(0, 0.3)}))
    """
)


def _spans(log: Path) -> dict[int, list[float]]:
    """Each reading's pid → [start, end] (end missing while it runs)."""
    spans: dict[int, list[float]] = {}
    for row in log.read_text().splitlines():
        what, pid, at, _ancestors, _tree = row.split(" ", 4)
        if what in ("start", "end"):
            spans.setdefault(int(pid), []).append(float(at))
    return spans


def _started_under(log: Path, driver: int) -> dict[int, str]:
    """The readings `driver` spawned (it is among their ancestors at their start) → tree."""
    return {
        int(pid): tree
        for what, pid, _at, ancestors, tree in (
            r.split(" ", 4) for r in log.read_text().splitlines()
        )
        if what == "start" and str(driver) in ancestors.split(",")
    }


def test_a_resumed_driver_waits_for_the_killed_drivers_read_ahead_evaluator(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("scripts/noisy.py", NOISY)
    extra = (
        "evaluation:\n  slots: 2\nnoise:\n  mode: sequential\n  calibration: 3\n  max_evals: 8\n"
    )
    repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py", extra=extra))
    log, hang = tmp_path / "evals.log", tmp_path / "hang"
    env = {**os.environ, **GIT_ENV, "EVAL_LOG": str(log), "HANG": str(hang),
           "STRAY_SECONDS": "40", "LANE_SLEEP": "0.1"}  # fmt: skip
    # unboxed: a reading finds its driver among its ancestors in /proc, which a box's own PID
    # namespace hides, and logs to a file outside the repository
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "P1", "--lanes", "1", "--max-iterations", "2", "--sandbox", "none"]  # fmt: skip
    try:
        hang.write_text("")
        proc = subprocess.Popen(argv, cwd=repo.root, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        try:

            def stray() -> bool:
                assert proc.poll() is None, "the driver ended before a reading ran ahead"
                return log.exists() and any(
                    r.startswith("stray ") for r in log.read_text().splitlines()
                )

            until(stray, 120, "a further reading hanging in its scratch tree")
        finally:
            os.kill(proc.pid, signal.SIGKILL)  # the driver alone: its readings run on
            proc.wait(timeout=60)
        (stray_pid,) = [
            int(r.split()[1]) for r in log.read_text().splitlines() if r.startswith("stray")
        ]
        resume = subprocess.Popen(
            [sys.executable, "-m", "autoresearch", "resume", RUN_ID, "--json"], cwd=repo.root,
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )  # fmt: skip
        _out, err = resume.communicate(timeout=240)
        assert resume.returncode == 0, err
        spans = _spans(log)
        assert len(spans[stray_pid]) == 2, "the stray reading still runs after the resume"
        stray_end = spans[stray_pid][1]
        resumed = _started_under(log, resume.pid)
        assert resumed, "the resume took no reading"
        assert stray_pid not in resumed
        # no evaluation of the resumed driver ran beside the killed driver's reading
        first = min(resumed, key=lambda pid: spans[pid][0])
        assert spans[first][0] >= stray_end, (spans[first][0], stray_end, resumed[first])
    finally:
        for pid in run_children(repo.root):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
