"""How `run --lanes K` hands out evaluation slots: a reading that a keep made stale is stopped
at once (its slot is wanted; its candidate is replayed and measured again), and waiting
candidates get slots in the order their sessions ended, not by lane number."""

from __future__ import annotations

import json
import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

from helpers import Repo, cli, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
RUN_ID = "missions-demo-t1"

# score = value.txt + one per bonus file; a reading sleeps BONUS_SLEEP with a bonus file,
# VALUE_SLEEP with value.txt raised, else nothing (the baseline); a reading that ran to its end
# appends a line to EVAL_LOG (a stopped one never does). With STALE set, a reading of a bonus
# on the baseline marks STALE and then waits to be stopped (60 s at most), and one of a
# raised value.txt waits (as long) for that mark: it is kept while the other runs. With
# SLEEPING="lane 1 ", only the readings of lane 1's commits sleep.
EVALUATOR = textwrap.dedent(
    """\
    import glob, json, os, subprocess, time
    value, bonus = float(open("value.txt").read()), glob.glob("bonus-*.txt")
    stale, deadline = os.environ.get("STALE"), time.monotonic() + 60
    if stale and bonus and value == 1:
        open(stale, "w").close()
        while time.monotonic() < deadline:
            time.sleep(0.05)
    elif stale and value != 1 and not bonus:
        while not os.path.exists(stale) and time.monotonic() < deadline:
            time.sleep(0.02)
    elif subprocess.run(["git", "log", "-1", "--format=%s"], capture_output=True, text=True,
                        check=True).stdout.startswith(os.environ.get("SLEEPING", "lane ")):
        key = "BONUS_SLEEP" if bonus else "VALUE_SLEEP" if value != 1 else ""
        time.sleep(float(os.environ.get(key, "0")))
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(f"{value} {len(bonus)}\\n")
    print(json.dumps({"pass": True, "score": value + len(bonus)}))
    """
)


def _run(repo: Repo, slots: int, lanes: int, iterations: int, **env: str) -> dict[str, Any]:
    repo.write("scripts/score.py", EVALUATOR)
    extra = f"evaluation:\n  slots: {slots}\n"
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra, unboxed=True))
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "T1", "--json",
               "--lanes", str(lanes), "--max-iterations", str(iterations),
               cwd=repo.root, env=env, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _status(repo: Repo) -> dict[str, Any]:
    return dict(json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout))


def test_a_keep_stops_the_readings_it_made_stale(repo: Repo, tmp_path: Path) -> None:
    evals = tmp_path / "evals.log"
    # lane 1 raises value.txt (kept, its reading ends once lane 2's has started); lane 2's
    # bonus is being measured on the baseline when lane 1 keeps: that reading is worthless,
    # stopped at once (else it would run its 60 s and finish)
    _run(repo, 2, 2, 2, LANE_PLAN="1:value=5:0,2:bonus:0", EVAL_LOG=str(evals),
         STALE=str(tmp_path / "stale-reading-started"))  # fmt: skip
    its = _status(repo)["iterations"][1:]
    assert [(it["agent"]["lane"], it["decision"]) for it in its] == [(1, "keep"), (2, "keep")]
    assert its[1]["evaluator"]["score"] == 6.0  # measured as replayed onto lane 1's keep
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        (recorded,) = conn.execute("SELECT COUNT(*) FROM evaluations").fetchone()
    finally:
        conn.close()
    # every reading that ran to its end was recorded: none was taken only to be thrown away
    finished = evals.read_text().splitlines()
    assert len(finished) == recorded, finished
    assert "1.0 1" not in finished  # lane 2's bonus on the baseline never finished


def test_waiting_candidates_get_the_slot_in_the_order_their_sessions_ended(
    repo: Repo, tmp_path: Path
) -> None:
    # one slot; lane 1's reading takes 2 s; meanwhile lane 3's session ends, then lane 2's:
    # lane 3's candidate is measured next
    _run(repo, 1, 3, 3, LANE_PLAN="1:bonus:0,2:bonus:1,3:bonus:0.3", EVAL_LOG=str(tmp_path / "e"),
         BONUS_SLEEP="2", SLEEPING="lane 1 ")  # fmt: skip
    its = _status(repo)["iterations"][1:]
    assert [it["agent"]["lane"] for it in its] == [1, 3, 2]
