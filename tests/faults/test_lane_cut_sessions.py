"""Kill -9 of a real `run --lanes K` driver (K = 2, 3) with every lane's session in flight:
each lane's cut-off session is recorded on `resume` exactly as the single loop's is – one
`interrupted` iteration (`candidate session interrupted cleanly`, description `agent session
interrupted by a crash`) whose notes name the patch its work was saved to – counted once in
its lane, once only even when the resume itself is killed during that recovery, and shown by
`status`, `status --json` and the MCP tool `run_status` (the real MCP client)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_lane_layout_resume import AGENT, SCORE, Flags, in_flight_rows, kill
from test_lane_tree_kills import assert_lanes_sound, details

from autoresearch.mcp.server import build_server
from helpers import Repo, cli, sandbox_text, until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect

RUN_ID = "missions-demo-c1"
DECISION = ("interrupted", "candidate session interrupted cleanly")
DESCRIPTION = "agent session interrupted by a crash"


def start(repo: Repo, flags: Flags, lanes: int) -> subprocess.Popen[str]:
    """`run --lanes K --max-iterations K`: the K cut sessions are the whole run."""
    repo.write("scripts/score.py", SCORE)
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", unboxed=True))
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "C1", "--lanes", str(lanes), "--max-iterations", str(lanes)]  # fmt: skip
    return subprocess.Popen(
        argv, cwd=repo.root, env=flags.env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip


def cut_all(repo: Repo, tmp_path: Path, lanes: int) -> tuple[Flags, dict[int, str]]:
    """Every lane's session reported a complete candidate and hangs; the driver and everything
    it started are killed. The cut commits, by lane."""
    flags = Flags(tmp_path, hang_lanes=",".join(str(k) for k in range(1, lanes + 1)))
    flags.hang.write_text("")
    proc = start(repo, flags, lanes)
    try:

        def in_flight() -> bool:
            assert proc.poll() is None, "the driver ended before its sessions were in flight"
            if not all((flags.marks / str(k)).exists() for k in range(1, lanes + 1)):
                return False
            # the driver polls on: for it no session has ended
            return [x["state"] for x in details(repo.root, RUN_ID)["lanes"]] == ["agent"] * lanes

        until(in_flight, 90, "every lane in its session")
    finally:
        kill(proc, repo.root, "tree")
    flags.lift()
    return flags, {k: flags.mark(str(k)) for k in range(1, lanes + 1)}


def resume(repo: Path, flags: Flags, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "autoresearch", "resume", RUN_ID, "--json"], cwd=repo,
        env={**flags.env, **(env or {})}, capture_output=True, text=True, timeout=240,
        start_new_session=True,
    )  # fmt: skip


def lane_patch(repo: Path, lane: int) -> Path:
    logs = repo / ".autoresearch/runs" / RUN_ID / "lanes" / str(lane) / "logs"
    return logs / "session-0001-unfinished-session.patch"


def assert_recorded_interrupted(repo: Path, lanes: int, cut: dict[int, str]) -> dict[str, Any]:
    """Each lane's cut session is one interrupted iteration, as the single loop records it:
    its notes name the patch that holds the session's work; nothing the kill cut off is judged
    as a verdict; the lane counts it once and spent nothing on it."""
    d = assert_lanes_sound(repo, RUN_ID, lanes)
    base = d["iterations"][0]["kept_commit"]
    judged = d["iterations"][1:]
    assert [(it["decision"], it["decision_reason"]) for it in judged] == [DECISION] * lanes
    assert {it["candidate_status"] for it in judged} == {"interrupted"}
    assert {it["description"] for it in judged} == {DESCRIPTION}
    assert not {it["candidate_commit"] for it in judged} & set(cut.values())
    by_lane = {}
    for lane, commit in cut.items():
        patch = lane_patch(repo, lane)
        text = patch.read_text()
        assert f"bonus-{lane}-1.txt" in text, (lane, commit)  # its session's own work
        others = [f"bonus-{k}-1.txt" for k in cut if k != lane]
        assert not [o for o in others if o in text], text  # and nothing else
        (it,) = [it for it in judged if str(patch) in " ".join(it["notes"])]  # linked once
        assert it["notes"] == [f"changes past {base[:12]} saved to {patch}"], it["notes"]
        assert it.get("agent", {}).get("lane") == lane, it  # the lane it was cut off in
        by_lane[lane] = it["iteration"]
    assert d["counts"].get("interrupted") == lanes, d["counts"]
    for row in d["lanes"]:
        assert row["iterations"] == 1 and row["keeps"] == 0, row
        assert (row["tokens"], row["cost_usd"]) == (0, None), row
        assert (row["last_decision"], row["last_reason"]) == DECISION, row
        assert row["last_iteration"] == by_lane[row["lane"]], row
    assert in_flight_rows(repo) == []
    return d


def _row(table: str, lane: int) -> list[str]:
    line = next(x for x in table.splitlines() if x.startswith(f"{lane}  "))
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


def assert_every_door_shows_it(repo: Path, d: dict[str, Any]) -> None:
    async def mcp() -> tuple[str, dict[str, Any]]:
        async with connect(build_server(repo)) as t:
            reply = await t.ok("run_status", {"run_id": RUN_ID})
            return reply.text, reply.data

    mcp_text, mcp_data = anyio.run(mcp, backend="asyncio")
    assert mcp_data["lanes"] == d["lanes"]
    assert mcp_data["counts"] == d["counts"]
    assert [(it["decision"], it.get("agent", {}).get("lane")) for it in mcp_data["iterations"]] == [
        (it["decision"], it.get("agent", {}).get("lane")) for it in d["iterations"]
    ]
    text = cli("status", RUN_ID, cwd=repo).stdout
    for table in (text, mcp_text):
        for row in d["lanes"]:
            cells = _row(table, row["lane"])
            assert cells[2:4] == [f"interrupted #{row['last_iteration']}", "1 (0 kept)"], table


@pytest.mark.parametrize("lanes", [2, 3])
def test_k_lanes_cut_off_by_a_kill_are_recorded_interrupted_like_the_single_loop(
    repo: Repo, tmp_path: Path, lanes: int
) -> None:
    flags, cut = cut_all(repo, tmp_path, lanes)
    done = resume(repo.root, flags)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    d = assert_recorded_interrupted(repo.root, lanes, cut)
    assert_every_door_shows_it(repo.root, d)
    again = resume(repo.root, flags)  # a completed run: nothing is recorded again
    assert again.returncode == 2, again.stderr
    assert details(repo.root, RUN_ID)["iterations"] == d["iterations"]


@pytest.mark.parametrize("nth", [1, 2])
def test_a_resume_killed_while_it_records_the_cut_lanes_records_each_once(
    repo: Repo, tmp_path: Path, nth: int
) -> None:
    """The resume is killed (its whole tree) right after it committed its `nth` interrupted
    iteration, before applying it; the next resume finishes it and records each lane once."""
    lanes = 3
    flags, cut = cut_all(repo, tmp_path, lanes)
    killed = resume(repo.root, flags, {"AUTORESEARCH_FAILPOINTS": f"step.after_decided@{nth}"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    recorded = [it["decision"] for it in details(repo.root, RUN_ID)["iterations"][1:]]
    assert recorded == ["interrupted"] * nth  # the kill came during the recovery
    done = resume(repo.root, flags)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    d = assert_recorded_interrupted(repo.root, lanes, cut)
    assert_every_door_shows_it(repo.root, d)


def test_a_resume_killed_after_saving_a_cut_lane_keeps_its_patch(
    repo: Repo, tmp_path: Path
) -> None:
    """Lane 1's candidate is kept while lane 2's session runs; the kill cuts lane 2 off. The
    resume saves lane 2's work and resets the lane to the keep, and is killed right there
    (its whole tree): the next resume must not save again over that patch, as the lane now
    holds lane 1's keep past the session's base, not the session's work."""
    flags = Flags(tmp_path, hang_lanes="2")
    flags.hang.write_text("")
    proc = start(repo, flags, 2)
    try:

        def cut_after_a_keep() -> bool:
            assert proc.poll() is None, "the driver ended before lane 1's keep"
            if not (flags.marks / "2").exists():
                return False
            lanes = details(repo.root, RUN_ID)["lanes"]
            return [(x["state"], x["last_decision"]) for x in lanes] == [
                ("idle", "keep"), ("agent", None)
            ]  # fmt: skip

        until(cut_after_a_keep, 90, "lane 1 kept, lane 2 in its session")
    finally:
        kill(proc, repo.root, "tree")
    flags.lift()
    killed = resume(repo.root, flags, {"AUTORESEARCH_FAILPOINTS": "recovery.after_cut_saved"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    patch = lane_patch(repo.root, 2)
    saved = patch.read_text()
    assert "bonus-2-1.txt" in saved and "bonus-1-1.txt" not in saved, saved
    done = resume(repo.root, flags)
    assert done.returncode == 0, done.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 2)
    assert [it["decision"] for it in d["iterations"][1:]] == ["keep", "interrupted"]
    assert patch.read_text() == saved  # the session's work, as first saved
    (cut,) = [it for it in d["iterations"] if it["decision"] == "interrupted"]
    base = d["iterations"][0]["kept_commit"]
    assert cut["notes"] == [f"changes past {base[:12]} saved to {patch}"], cut["notes"]
    assert in_flight_rows(repo.root) == []
