"""Kill -9 of the whole process tree (driver, every lane's agent, their git) of `run --lanes K`
with K sessions in flight: each is an interrupted session on resume (its work saved as a
patch under its lane, then a fresh session), however complete the report it had written."""

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

from autoresearch import git as gitlib
from helpers import (
    GIT_ENV,
    Repo,
    cli,
    git,
    git_killer,
    kill_tree,
    resume_detached,
    sandbox_text,
    until,
)

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_cut_agent.py'}"
BONUS_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'supervisor/fakes/lane_agent.py'}"
RUN_ID = "missions-demo-l1"
SCORE = textwrap.dedent(
    """\
    import glob, json
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    print(json.dumps({"pass": True, "score": score}))
    """
)


def lane_mission(repo: Repo) -> None:
    """score = value.txt + one per bonus file: every lane's bonus improves it, none conflicts."""
    repo.write("scripts/score.py", SCORE)
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", unboxed=True))


def details(repo: Path, run_id: str) -> dict[str, Any]:
    done = cli("status", run_id, "--json", cwd=repo)
    return dict(json.loads(done.stdout))


def _lane_states(repo: Path) -> list[str]:
    return [lane["state"] for lane in details(repo, RUN_ID).get("lanes", [])]


def assert_lanes_sound(repo: Path, run_id: str, iterations: int) -> dict[str, Any]:
    """Completed (or stopped by its own noop limit before `iterations`); each iteration and each
    artifact judged once; the run branch at the last kept commit, every kept commit its
    ancestor."""
    d = details(repo, run_id)
    numbers = [it["iteration"] for it in d["iterations"]]
    if d["status"] == "stopped" and d["stop_reason"].startswith("repeated noop limit"):
        assert numbers == list(range(len(numbers))) and len(numbers) <= iterations + 1, numbers
    else:
        assert d["status"] == "completed", d["stop_reason"]
        assert numbers == list(range(iterations + 1)), numbers
    ledger = json.loads(Path(d["manifest"]["ledger_file"]).read_text())["entries"]
    assert [e["iteration"] for e in ledger] == numbers
    shas = [it["artifact_sha256"] for it in d["iterations"][1:] if it.get("artifact_sha256")]
    assert len(shas) == len(set(shas)), "an artifact was judged twice"
    head = git(repo, "rev-parse", f"refs/heads/{d['branch_name']}")
    assert head == d["last_kept_commit"]
    for it in d["iterations"]:
        if it["decision"] == "keep":
            git(repo, "merge-base", "--is-ancestor", it["candidate_commit"], head)
    worktree = Path(d["manifest"]["worktree_path"])
    assert git(worktree, "status", "--porcelain", "--untracked-files=no") == ""
    return d


def test_a_tree_kill_with_k_lanes_in_flight_is_k_interrupted_sessions(
    repo: Repo, tmp_path: Path
) -> None:
    lane_mission(repo)
    flag, reports = tmp_path / "cut", tmp_path / "reports"
    flag.write_text("")
    reports.mkdir()
    env = {**os.environ, **GIT_ENV, "CUT_FLAG": str(flag), "CUT_DIR": str(reports)}
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "L1", "--lanes", "2", "--max-iterations", "3", "--json"]  # fmt: skip
    proc = subprocess.Popen(
        argv, cwd=repo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while len(list(reports.iterdir())) < 2:  # both sessions reported, neither ended
            assert time.monotonic() < deadline and proc.poll() is None, "no lanes in flight"
            time.sleep(0.05)
        # the driver polls on: for it neither session has ended (both lanes in their agent)
        until(lambda: _lane_states(repo.root) == ["agent", "agent"], what="lanes in session")
    finally:
        kill_tree(proc.pid, repo.root)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    cut = {p.name: p.read_text() for p in reports.iterdir()}
    flag.unlink()
    done = resume_detached(repo.root, RUN_ID, env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 3)
    judged = [it["description"] or "" for it in d["iterations"][1:]]
    assert not [j for j in judged if j.startswith("cut ")], judged  # no cut session judged
    assert set(cut.values()).isdisjoint(it["candidate_commit"] for it in d["iterations"])
    logs = repo.root / ".autoresearch/runs" / RUN_ID / "lanes"
    for lane, commit in cut.items():  # each cut session's work is in its lane's patch
        (patch,) = (logs / lane / "logs").glob("*unfinished-session.patch")
        assert f"bonus-{lane}-1.txt" in patch.read_text(), (lane, commit)
    assert done.stderr.count("was cut off by a crash") == 2, done.stderr


def test_a_lane_worktree_half_built_by_a_kill_inside_git_worktree_add_is_rebuilt(
    repo: Repo, tmp_path: Path
) -> None:
    lane_mission(repo)
    # the driver's git calls with `worktree` in them: the run's worktree (prepare), then per
    # lane a prune of a stale registration and the add: the 5th is lane 2's `worktree add`,
    # killed with its branch and registration made, no index and no files
    env = {**os.environ, **GIT_ENV, **git_killer(tmp_path, "worktree", 5)}
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent",
            BONUS_AGENT, "--run-tag", "L1", "--lanes", "2", "--max-iterations", "2"]  # fmt: skip
    done = subprocess.run(argv, cwd=repo.root, env=env, capture_output=True, text=True,
                          timeout=180, start_new_session=True)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    lane = repo.root / ".autoresearch/worktrees/lanes" / RUN_ID / "2"
    branch = "autoresearch-lanes/missions-demo/l1/2"
    assert gitlib.worktree_problem(lane, branch) is not None  # what the kill left
    done = resume_detached(repo.root, RUN_ID)
    assert done.returncode == 0, done.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 2)
    assert gitlib.worktree_problem(lane, branch) is None
    assert git(lane, "status", "--porcelain") == ""
    # nothing of the half-built tree was taken for a session's work: no patch deletes the
    # project's files, no judged candidate lost them
    patches = (repo.root / ".autoresearch/runs" / RUN_ID / "lanes/2/logs").glob("*.patch")
    assert not [p.name for p in patches if "deleted file" in p.read_text()]
    for it in d["iterations"][1:]:
        files = git(repo.root, "ls-tree", "-r", "--name-only", it["candidate_commit"])
        assert "value.txt" in files.split("\n"), it


def test_a_keep_the_run_branch_had_not_followed_when_killed_is_followed_on_resume(
    repo: Repo,
) -> None:
    """Killed with a lane's keep recorded, before the run branch followed it, and with the run
    worktree's index written by a checkout the kill cut off: resume moves the run branch to the
    kept commit (a resume is the first repair after a crashed driver, though it stopped the
    driver's strays before recovering)."""
    lane_mission(repo)
    # the 2nd decision is lane 1's first keep (the 1st is the baseline's)
    env = {**os.environ, **GIT_ENV, "AUTORESEARCH_FAILPOINTS": "step.after_decided@2"}
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent",
            BONUS_AGENT, "--run-tag", "L1", "--lanes", "1", "--max-iterations", "2"]  # fmt: skip
    done = subprocess.run(argv, cwd=repo.root, env=env, capture_output=True, text=True,
                          timeout=180, start_new_session=True)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    d = details(repo.root, RUN_ID)
    kept, branch = d["last_kept_commit"], d["branch_name"]
    assert git(repo.root, "rev-parse", f"refs/heads/{branch}") != kept  # what the kill left
    git(Path(d["manifest"]["worktree_path"]), "read-tree", kept)
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", "resume", RUN_ID, "--max-iterations", "0"],
        cwd=repo.root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True,
        timeout=180, start_new_session=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert git(repo.root, "rev-parse", f"refs/heads/{branch}") == kept


def _killed_run(repo: Repo, env: dict[str, str]) -> None:
    """`run --lanes 2 --max-iterations 2` with lane 1 adding a file quickly and lane 2
    finishing later, so that lane 2's candidate is replayed onto lane 1's keep; `env` kills
    the driver's tree there."""
    lane_mission(repo)
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent",
            BONUS_AGENT, "--run-tag", "L1", "--lanes", "2", "--max-iterations", "2"]  # fmt: skip
    done = subprocess.run(argv, cwd=repo.root, env={**os.environ, **GIT_ENV, **env},
                          capture_output=True, text=True, timeout=180,
                          start_new_session=True)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_a_replay_killed_inside_its_checkout_leaves_nothing_for_an_operator(
    repo: Repo, tmp_path: Path
) -> None:
    """The campaign's seed-11 failure, made deterministic: a kill inside lane 2's `git rebase
    --onto` (replaying its candidate onto lane 1's keep) leaves the keep's new file in the lane
    worktree as an untracked file and a stale index lock. Resume saves what the kill left,
    replays the candidate afresh (not a `replay conflict` that blames the candidate) and
    completes; before, it refused with autoresearch_reset_requires_clean_worktree, then failed
    the run on the artifact its refused judgement had rewritten."""
    plan = {"LANE_PLAN": "1:bonus:0.1,2:bonus:1.5"}
    _killed_run(repo, {**plan, **git_killer(tmp_path, "rebase", 1)})
    lane = repo.root / ".autoresearch/worktrees/lanes" / RUN_ID / "2"
    assert "?? bonus-1-1.txt" in git(lane, "status", "--porcelain")  # what the kill left
    done = resume_detached(repo.root, RUN_ID, plan)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 2)
    its = d["iterations"][1:]
    assert [(it["decision"], it["evaluator"]["score"]) for it in its] == [
        ("keep", 2.0),
        ("keep", 3.0),
    ], its
    assert any("replayed onto" in n for n in its[1]["notes"]), its[1]["notes"]
    (patch,) = (repo.root / ".autoresearch/runs" / RUN_ID / "lanes/2/logs").glob(
        "*unfinished-replay.patch"
    )
    assert "bonus-1-1.txt" in patch.read_text()  # nothing removed unsaved


def test_a_driver_killed_between_a_replay_conflict_and_its_judgement_judges_it_on_resume(
    repo: Repo,
) -> None:
    """Killed after lane 2's replay failed on a real conflict, before the discard was
    recorded: resume replays again and discards it `replay conflict`, the artifact as the
    session wrote it (before, it had been rewritten as built on the keep, and resume
    measured it and failed the run: `candidate_commit … does not descend from last kept
    commit …`)."""
    plan = {"LANE_PLAN": "1:value=5:0.1,2:value=9:1.5"}
    _killed_run(repo, {**plan, "AUTORESEARCH_FAILPOINTS": "lanes.after_replay_conflict"})
    done = resume_detached(repo.root, RUN_ID, plan)
    assert done.returncode == 0, done.stderr
    d = assert_lanes_sound(repo.root, RUN_ID, 2)
    its = d["iterations"][1:]
    assert [(it["decision"], it["decision_reason"]) for it in its] == [
        ("keep", "score improved over last kept score"),
        ("discard", "replay conflict"),
    ], its
    assert its[1]["evaluator"] is None  # never measured
