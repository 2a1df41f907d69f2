"""A frontier run killed at any point of an iteration (the driver SIGKILLed with its group)
and resumed ends with the archive, the parents and the branch an uninterrupted run has."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sup_helpers import frontier_env, run_killed_and_resumed

from autoresearch.journal import iteration_records, search
from autoresearch.journal.db import open_journal
from autoresearch.journal.runs import get_run
from autoresearch.states import DecisionKind
from helpers import GIT_ENV, git, kill_tree, make_repo, resume_detached, sandbox_text, until

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/frontier_agent.py'}"
RULE = {"1": [5, 2], "6": [-1], "3": [-1]}
ITERATIONS = 10
RUN_ID = "missions-demo-f1"


def frontier_run(tmp: Path, failpoint: str | None) -> tuple[object, ...]:
    """Run (killed at `failpoint`, then resumed) and what it ended with, by values: the
    archive best first, each iteration's parent, the branch's value."""
    repo = make_repo(tmp / "repo")
    repo.mission(sandbox=sandbox_text(unboxed=True))
    env = frontier_env(tmp, RULE)
    argv = ["run", "missions/demo", "--agent", AGENT, "--run-tag", "F1", "--strategy",
            "frontier", "--max-iterations", str(ITERATIONS), "--no-certify", "--json"]  # fmt: skip
    done = run_killed_and_resumed(repo.root, argv, env, RUN_ID, failpoint)
    if not failpoint:
        # the live line's best is the best elite's, not the lesser child's just kept
        assert "best 3" not in done.stderr and "best 6" in done.stderr.splitlines()[-1]

    def value(commit: str) -> str:
        return git(repo.root, "show", f"{commit}:value.txt")

    with open_journal(repo.root) as journal:
        run = get_run(journal, RUN_ID)
        assert run is not None
        elites = search.elites(journal, RUN_ID)
        parents = search.parents(journal, RUN_ID)
    archive = sorted((value(e.commit), e.entered) for e in elites)
    branch = git(repo.root, "rev-parse", run.branch_name)
    assert branch == run.last_kept_commit
    return archive, {i: value(p) for i, p in parents.items()}, value(branch), run.status


# where the kill comes: a parent chosen and recorded, the reference moved but not the branch,
# a session's artifact written and not judged, an evaluation under way, a decision journaled
# and not applied (the 9th iteration is the 4th evaluation: duplicates are not evaluated)
KILLS = [
    "frontier.after_parent@4",
    "frontier.after_reference@5",
    "loop.after_agent@9",
    "step.after_evaluator@4",
    "step.after_decided@9",
]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, ...]:
    return frontier_run(tmp_path_factory.mktemp("whole"), None)


@pytest.mark.parametrize("failpoint", KILLS)
def test_a_killed_frontier_run_resumes_to_the_same_archive(
    tmp_path: Path, failpoint: str, uninterrupted: tuple[object, ...]
) -> None:
    assert frontier_run(tmp_path, failpoint) == uninterrupted
    archive = uninterrupted[0]
    assert [v for v, _ in archive] == ["1", "3", "6"]  # the lesser child is in the archive


def test_a_session_cut_by_a_kill_is_recorded_against_its_parent_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission(sandbox=sandbox_text(unboxed=True))
    gate = tmp_path / "gate"
    env = {**os.environ, **GIT_ENV, "FRONTIER_RULE": json.dumps(RULE),
           "FRONTIER_STATE": str(tmp_path / "visits.json"), "FRONTIER_LOG": str(tmp_path / "log")}  # fmt: skip
    argv = [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", AGENT,
            "--run-tag", "F1", "--strategy", "frontier", "--max-iterations", str(ITERATIONS),
            "--no-certify"]  # fmt: skip
    driver = subprocess.Popen(
        argv, cwd=repo.root, env={**env, "FRONTIER_HOLD": f"9:{gate}"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        until(Path(f"{gate}.ready").exists, 120, "session 9 started")
    finally:
        kill_tree(driver.pid, repo.root)
        driver.wait()
    resumed = resume_detached(repo.root, RUN_ID, env)
    assert resumed.returncode == 0, resumed.stderr
    with open_journal(repo.root) as journal:
        run = get_run(journal, RUN_ID)
        assert run is not None
        cut = iteration_records.get_iteration(journal, RUN_ID, 9)
        parents = search.parents(journal, RUN_ID)
        elites = search.elites(journal, RUN_ID)
    assert cut is not None and cut.decision == DecisionKind.INTERRUPTED
    assert cut.base_commit == parents[9] == run.baseline_commit  # judged against its parent
    assert run.iteration == ITERATIONS and set(parents) == set(range(1, ITERATIONS + 1))
    best = git(repo.root, "show", f"{run.last_kept_commit}:value.txt")
    assert best == "6" and git(repo.root, "rev-parse", run.branch_name) == run.last_kept_commit
    assert run.last_kept_commit in {e.commit for e in elites}
