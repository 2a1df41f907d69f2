"""evaluator.screen, the cascade (#34), through prepare and step on real repositories: checks
first, then the cheap screen of the candidate against the screen of the kept commit, then the
full evaluation only for a candidate the screen did not rule out. A screen that crashes, hangs
or prints no score discards the candidate with `screen failed: …`, never a score."""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest
from sup_helpers import submit, submit_and_step

from autoresearch.decide import REASON_CHECKS_FAILED
from autoresearch.journal.views import NOT_RUN
from autoresearch.screening import NOTE_SCREENED
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.screen import REFERENCE_USES
from helpers import Repo, cli, sandbox_text

# the screen: value.txt again (cheaper in real life: a shorter training), its misbehaviour
# picked by screen-mode.txt; every run leaves a mark, to count them
SCREEN = textwrap.dedent(
    """\
    import json, os, sys, time
    open(os.environ["SCREEN_MARKS"], "a").write("x")
    mode = open("screen-mode.txt").read().strip() if os.path.exists("screen-mode.txt") else ""
    if mode == "crash":
        sys.exit(2)
    if mode == "hang":
        time.sleep(30)
    if mode == "noscore":
        print(json.dumps({"pass": True})); sys.exit(0)
    print(json.dumps({"pass": True, "score": float(open("value.txt").read())}))
    """
)
FAILPOINT = "step.after_evaluator"  # hit after each evaluation, the screen's included
SCREEN_BLOCK = (
    "  screen:\n    command: python3 scripts/screen.py\n    timeout_seconds: 5\n    margin: 0.5\n"
)


def screened_mission(repo: Repo, extra: str = "") -> Path:
    repo.write("scripts/screen.py", SCREEN)
    return repo.mission(sandbox=sandbox_text(extra=SCREEN_BLOCK + extra, unboxed=True))


def full_evaluations(repo: Repo, iteration: int) -> int:
    conn = sqlite3.connect(repo.root / ".autoresearch" / "journal.sqlite3")
    try:
        sql = "SELECT count(*) FROM evaluations WHERE iteration = ?"
        return int(conn.execute(sql, (iteration,)).fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "screen-marks"
    monkeypatch.setenv("SCREEN_MARKS", str(path))
    return path


def test_a_candidate_clearly_worse_on_the_screen_is_not_evaluated_in_full(
    repo: Repo, marks: Path
) -> None:
    with prepare(screened_mission(repo), run_tag="S") as h:
        run_id = h.run_id
        worse = submit_and_step(h, {"value.txt": "0.2\n"})  # 1 → 0.2: worse by over the margin
        assert (worse.decision, worse.decision_reason) == (
            "discard",
            f"screen: clearly worse than kept commit {h.run.baseline_commit[:7]} (0.2 vs 1)",
        )
        assert worse.evaluator is None and NOTE_SCREENED in worse.notes
        assert full_evaluations(repo, 1) == 0
        assert h.paths.screen_log(1, "candidate").exists()
        assert h.paths.screen_log(1, "reference").exists()
        close = submit_and_step(h, {"value.txt": "0.8\n"})  # within the margin: evaluated
        assert close.decision == "discard" and close.evaluator is not None
        assert "screen 0.8 vs 1" in close.notes
        better = submit_and_step(h, {"value.txt": "3\n"})
        assert (better.decision, better.last_kept_score) == ("keep", 3)
        # 3 candidates, the reference read once for the baseline; the next against the new one
        assert marks.read_text() == "x" * 4
        after = submit_and_step(h, {"value.txt": "1.0\n"})
        assert after.decision_reason.startswith(
            f"screen: clearly worse than kept commit {better.candidate_commit[:7]} (1 vs 3)"
        )
        assert marks.read_text() == "x" * 6
    status = cli("status", run_id, cwd=repo.root).stdout
    assert f"{NOT_RUN}: screen: clearly worse than" in status


@pytest.mark.parametrize(
    ("mode", "why"), [("crash", "exit 2"), ("hang", "timeout"), ("noscore", "no score")]
)
def test_a_screen_that_fails_discards_with_its_outcome_never_a_score(
    repo: Repo, marks: Path, mode: str, why: str
) -> None:
    with prepare(screened_mission(repo), run_tag="F") as h:
        done = submit_and_step(h, {"value.txt": "5\n", "screen-mode.txt": f"{mode}\n"})
        assert (done.decision, done.decision_reason) == ("discard", f"screen failed: {why}")
        assert done.evaluator is None and full_evaluations(repo, 1) == 0
        assert h.run.last_kept_score == 1.0


def test_checks_run_before_the_screen(repo: Repo, marks: Path) -> None:
    repo.write("scripts/check.sh", 'test "$(cat value.txt)" != 7 || exit 1\n')
    with prepare(screened_mission(repo, "checks: sh scripts/check.sh\n"), run_tag="C") as h:
        banned = submit_and_step(h, {"value.txt": "7\n"})
        assert (banned.decision, banned.decision_reason) == ("discard", REASON_CHECKS_FAILED)
        assert not marks.exists() and full_evaluations(repo, 1) == 0
        fine = submit_and_step(h, {"value.txt": "6\n"})  # its checks are not run twice
        assert fine.decision == "keep" and marks.read_text() == "xx"


def test_the_reference_is_read_again_after_serving_a_few_candidates(
    repo: Repo, marks: Path
) -> None:
    with prepare(screened_mission(repo), run_tag="R") as h:
        for n in range(REFERENCE_USES + 1):
            assert submit_and_step(h, {"value.txt": f"0.{n + 1}\n"}).decision == "discard"
        assert marks.read_text() == "x" * (REFERENCE_USES + 1 + 2)


def test_without_a_screen_nothing_changes(repo: Repo, marks: Path) -> None:
    with prepare(repo.mission(sandbox=sandbox_text(unboxed=True)), run_tag="N") as h:
        worse = submit_and_step(h, {"value.txt": "0.2\n"})
        assert worse.decision == "discard" and worse.evaluator is not None
        assert not marks.exists() and not h.paths.screen_log(1, "candidate").exists()


def test_a_step_killed_after_the_screen_is_screened_again_and_recorded_once(
    repo: Repo, marks: Path
) -> None:
    with prepare(screened_mission(repo), run_tag="K") as h:
        run_id = h.run_id
        submit(h, {"value.txt": "0.2\n"})
    killed = cli("step", run_id, cwd=repo.root, env={"AUTORESEARCH_FAILPOINTS": FAILPOINT})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert marks.read_text() == "x"  # killed right after the candidate's screen
    assert cli("resume", run_id, "--json", cwd=repo.root).returncode == 0
    assert cli("step", run_id, cwd=repo.root).returncode == 0  # the artifact waited
    status = json.loads(cli("status", run_id, "--json", cwd=repo.root).stdout)
    rows = [(it["iteration"], it["decision"]) for it in status["iterations"]]
    assert rows == [(0, "baseline"), (1, "discard")]
    assert status["iterations"][1]["decision_reason"].startswith("screen: clearly worse")
    assert full_evaluations(repo, 1) == 0


def test_lanes_run_the_cascade_as_the_single_lane_does(repo: Repo, marks: Path) -> None:
    """Two lanes, an agent whose sessions raise or lower value.txt by 1 (by a fixed pattern):
    each lowered candidate is ruled out by the screen with the pinned reason and never
    evaluated in full; each raised one is screened, then evaluated and kept."""
    screened_mission(repo)
    agent = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/portfolio_agent.py'} 0.5 0"
    ran = cli("run", "missions/demo", "--agent", agent, "--lanes", "2", "--max-iterations", "6",
              "--no-certify", "--run-tag", "L", cwd=repo.root)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    status = json.loads(cli("status", "missions-demo-l", "--json", cwd=repo.root).stdout)
    rows = status["iterations"][1:]
    screened = [it for it in rows if it["decision_reason"].startswith("screen: clearly worse")]
    kept = [it for it in rows if it["decision"] == "keep"]
    assert screened and kept, [(it["decision"], it["decision_reason"]) for it in rows]
    for it in screened:
        assert full_evaluations(repo, it["iteration"]) == 0
        assert f"kept commit {it['base_commit'][:7]} (" in it["decision_reason"]
    for it in kept:
        assert full_evaluations(repo, it["iteration"]) >= 1
        assert any(note.startswith("screen ") for note in it["notes"]), it
    # one screen run per candidate screened, and one of each kept commit they were compared
    # with, for both lanes (never each lane its own)
    candidates = [it for it in rows if any(n.startswith("screen ") for n in it["notes"])]
    references = {it["base_commit"] for it in candidates}
    assert marks.read_text() == "x" * (len(candidates) + len(references))
