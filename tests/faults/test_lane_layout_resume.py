"""Kill -9 of a driver with work in flight, then `resume` with another `--lanes` than the run
had (docs/supervisor.md: resume keeps the recorded `--lanes`, given again it changes): whatever the old
layout (the single loop's included), its work is recovered before the new one starts. Every
finished candidate is judged once, an unfinished session's work is saved as a patch and
recorded interrupted (a lane's as the single loop's), the old lanes' strays are stopped, no
session stays in flight in the journal, a lane beyond the new count ends stopped, and no kept
commit is lost."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_lane_tree_kills import assert_lanes_sound, details

from helpers import GIT_ENV, Repo, git, kill_tree, pid_alive, sandbox_text, until

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_cut_agent.py'}"
RUN_ID = "missions-demo-r1"
# score = value.txt + one per bonus file; while EVAL_HANG exists a candidate's reading hangs
# (its commit noted as MARKS/measuring-<pid>): a reading the kill cuts off
SCORE = textwrap.dedent(
    """\
    import glob, json, os, subprocess, time
    bonus = glob.glob("bonus-*.txt")
    if bonus and os.path.exists(os.environ["EVAL_HANG"]):
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
        mark = os.path.join(os.environ["MARKS"], f"measuring-{os.getpid()}")
        open(mark, "w").write(head.stdout.strip())
        time.sleep(120)
    print(json.dumps({"pass": True, "score": float(open("value.txt").read()) + len(bonus)}))
    """
)


class Flags:
    """The files that make sessions and readings hang, and the marks they leave."""

    def __init__(self, tmp: Path, hang_lanes: str = "", early: bool = False) -> None:
        self.marks, self.hang, self.eval_hang = tmp / "marks", tmp / "hang", tmp / "eval-hang"
        self.marks.mkdir()
        self.env = {
            **os.environ, **GIT_ENV, "MARKS": str(self.marks), "CUT_DIR": str(self.marks),
            "CUT_FLAG": str(self.hang), "CUT_LANES": hang_lanes, "EVAL_HANG": str(self.eval_hang),
        }  # fmt: skip
        if early:
            self.env["CUT_EARLY"] = "1"

    def mark(self, name: str) -> str:
        return (self.marks / name).read_text()

    def measuring(self) -> list[Path]:
        return sorted(self.marks.glob("measuring-*"))

    def lift(self) -> None:
        """What hung no longer hangs: the resumed run goes on by itself."""
        self.hang.unlink(missing_ok=True)
        self.eval_hang.unlink(missing_ok=True)


def start(repo: Repo, flags: Flags, *extra: str) -> subprocess.Popen[str]:
    repo.write("scripts/score.py", SCORE)
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py"))
    # unboxed: the fakes leave their marks (and pids) in a folder outside the repository
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "R1", "--max-iterations", "3", "--sandbox", "none", *extra]  # fmt: skip
    return subprocess.Popen(
        argv, cwd=repo.root, env=flags.env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip


def wait_for(proc: subprocess.Popen[str], condition: Any, what: str) -> None:
    def ready() -> bool:
        assert proc.poll() is None, f"the driver ended before {what}"
        return bool(condition())

    until(ready, 90, what)


def kill(proc: subprocess.Popen[str], repo: Path, how: str) -> None:
    """`tree`: the driver and everything it started, as a machine dying would; `driver`: the
    driver alone (its sessions and readings lead their own groups and run on)."""
    if how == "tree":
        kill_tree(proc.pid, repo)
    else:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def resume(repo: Path, flags: Flags, *extra: str) -> subprocess.CompletedProcess[str]:
    flags.lift()
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", "resume", RUN_ID, "--json", *extra],
        cwd=repo, env=flags.env, capture_output=True, text=True, timeout=240,
        start_new_session=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done


def judged(d: dict[str, Any], commit: str) -> list[dict[str, Any]]:
    return [it for it in d["iterations"][1:] if it["candidate_commit"] == commit]


def in_flight_rows(repo: Path) -> list[tuple[Any, ...]]:
    """The journal's sessions in flight (a test reads the real SQLite file)."""
    with sqlite3.connect(repo / ".autoresearch/journal.sqlite3") as conn:
        lanes = conn.execute("SELECT lane, session FROM lane_inflight").fetchall()
        single = conn.execute("SELECT iteration FROM session_inflight").fetchall()
    return [*lanes, *single]


def patch_saying(folder: Path, text: str) -> list[Path]:
    return [p for p in folder.glob("*.patch") if text in p.read_text()]


@pytest.mark.parametrize("how", ["tree", "driver"])
def test_a_single_loop_killed_mid_reading_resumed_with_lanes_judges_its_candidate(
    repo: Repo, tmp_path: Path, how: str
) -> None:
    flags = Flags(tmp_path)
    flags.eval_hang.write_text("")
    proc = start(repo, flags)
    wait_for(proc, flags.measuring, "the first candidate's reading")
    (mark,) = flags.measuring()
    commit, reader = mark.read_text(), int(mark.name.split("-")[1])
    kill(proc, repo.root, how)
    resume(repo.root, flags, "--lanes", "2")
    assert not pid_alive(reader)
    d = assert_lanes_sound(repo.root, RUN_ID, 3)
    (it,) = judged(d, commit)  # judged once, before any lane's candidate
    assert (it["iteration"], it["decision"]) == (1, "keep")
    assert in_flight_rows(repo.root) == []


def test_a_single_loop_killed_mid_session_resumed_with_lanes_records_it_interrupted(
    repo: Repo, tmp_path: Path
) -> None:
    flags = Flags(tmp_path, hang_lanes="0")
    flags.hang.write_text("")
    proc = start(repo, flags)
    wait_for(proc, (flags.marks / "0").exists, "the session's complete report")
    cut = flags.mark("0")
    kill(proc, repo.root, "tree")
    resume(repo.root, flags, "--lanes", "2")
    d = assert_lanes_sound(repo.root, RUN_ID, 3)
    first = d["iterations"][1]
    assert first["decision"] == "interrupted", first
    assert not judged(d, cut)  # the report it never saw end is no verdict
    logs = repo.root / ".autoresearch/runs" / RUN_ID / "logs"
    (patch,) = patch_saying(logs, "bonus-0-1.txt")  # its work is saved
    assert str(patch) in " ".join(first["notes"])
    assert in_flight_rows(repo.root) == []


@pytest.mark.parametrize("hung", [1, 2])
def test_two_lanes_killed_resumed_with_one_recover_both_lanes_first(
    repo: Repo, tmp_path: Path, hung: int
) -> None:
    """Lane `hung` is in its session, the other lane's candidate in its reading; the driver
    alone is killed, so both run on until the resume stops them."""
    other = 3 - hung
    flags = Flags(tmp_path, hang_lanes=str(hung))
    flags.hang.write_text("")
    flags.eval_hang.write_text("")
    proc = start(repo, flags, "--lanes", "2")
    wait_for(proc, lambda: (flags.marks / str(hung)).exists() and flags.measuring(), "both")
    cut, agent = flags.mark(str(hung)), int(flags.mark(f"agent-{hung}-1"))
    (mark,) = flags.measuring()
    measured, reader = mark.read_text(), int(mark.name.split("-")[1])
    assert measured == git(repo.root, "rev-parse", f"autoresearch-lanes/missions-demo/r1/{other}")
    kill(proc, repo.root, "driver")
    done = resume(repo.root, flags, "--lanes", "1")
    assert not pid_alive(agent) and not pid_alive(reader)  # every old lane's strays stopped
    d = assert_lanes_sound(repo.root, RUN_ID, 3)
    assert len(judged(d, measured)) == 1  # the finished candidate, judged once
    assert not judged(d, cut)
    logs = repo.root / ".autoresearch/runs" / RUN_ID / "lanes" / str(hung) / "logs"
    assert patch_saying(logs, f"bonus-{hung}-1.txt"), done.stderr  # the cut session's work
    assert f"lane {hung}: session 1 was cut off by a crash" in done.stderr
    assert in_flight_rows(repo.root) == []
    # the layout is the new one: lane 2 was stopped once its work was judged, and says why
    (one, two) = details(repo.root, RUN_ID)["lanes"]
    assert (one["lane"], one["state"], two["lane"], two["state"]) == (1, "stopped", 2, "stopped")
    assert "not in the layout" in two["detail"], two


@pytest.mark.parametrize("lanes", [0, 2])
def test_a_session_cut_off_before_it_changed_anything_saves_no_empty_patch(
    repo: Repo, tmp_path: Path, lanes: int
) -> None:
    layout = ["--lanes", str(lanes)] if lanes else []
    flags = Flags(tmp_path, hang_lanes="0,1,2", early=True)
    flags.hang.write_text("")
    proc = start(repo, flags, *layout)
    hung = ["early-0"] if not lanes else ["early-1", "early-2"]
    wait_for(proc, lambda: all((flags.marks / m).exists() for m in hung), "sessions in flight")
    if lanes:  # the driver saw neither session end
        until(lambda: [x["state"] for x in details(repo.root, RUN_ID)["lanes"]] == ["agent"] * 2)
    kill(proc, repo.root, "tree")
    done = resume(repo.root, flags)
    d = assert_lanes_sound(repo.root, RUN_ID, 3)
    run_dir = repo.root / ".autoresearch/runs" / RUN_ID
    assert [p for p in run_dir.rglob("*.patch") if p.stat().st_size == 0] == []
    cut = [line for line in done.stderr.splitlines() if "was cut off by a crash" in line]
    # each cut session is an interrupted iteration whose notes say it too, with lanes as without
    interrupted = [it for it in d["iterations"] if it["decision"] == "interrupted"]
    assert [it["iteration"] for it in interrupted] == list(range(1, len(hung) + 1))
    cut += [n for it in interrupted for n in it["notes"] if "past" in n]
    assert len(cut) == len(hung) * 2, (cut, done.stderr)
    for line in cut:
        assert "saved to" not in line and "no changes past" in line, line
