"""Trackers (issue 38): `run --tracker mlflow` mirrors each iteration (a step: score, kept, the
decision and lineage as tags) and the run's end into a real local MLflow store, read back here
with MLflow's own client; a resumed run adds its steps without repeating any; a failing
tracker is named once and the run goes on; a run without one never imports MLflow."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from autoresearch.contracts.tune import tried_note
from autoresearch.errors import ContractError
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.states import DecisionKind, IterationKind, IterationState, KeepPolicy
from autoresearch.tracking import (
    Mirror,
    TrackedEnd,
    TrackedIteration,
    TrackedRun,
    check_uri,
    tracked_iteration,
)
from helpers import GIT_ENV, Repo, cli, kill_tree, resume_detached, until

if TYPE_CHECKING:
    import mlflow

# imported where a test reads the store: at the top every xdist worker paid MLflow's import
# (~1 s of CPU) while collecting, also those that run no test of this file
pytestmark = pytest.mark.skipif(find_spec("mlflow") is None, reason="MLflow is not installed")

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'agents/fakes/cmd_agent.py'}"
RUN_ID = "missions-demo-t1"


def _run(repo: Repo, *args: str, plan: str = "improve,worse,improve") -> str:
    done = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1", "--no-certify",
        "--tracker", "mlflow", *args, cwd=repo.root, env={"FAKE_PLAN": plan}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr


def _store(repo: Repo) -> mlflow.MlflowClient:
    import mlflow

    db = repo.root / ".autoresearch/tracking/mlflow.db"
    assert db.exists()
    return mlflow.MlflowClient(tracking_uri=f"sqlite:///{db}", registry_uri=db.parent.as_uri())


def _only_run(client: mlflow.MlflowClient) -> mlflow.entities.Run:
    experiment = client.get_experiment_by_name("autoresearch/missions-demo")
    found = client.search_runs([experiment.experiment_id])
    assert len(found) == 1
    return found[0]


def _steps(client: mlflow.MlflowClient, run_id: str, key: str) -> list[tuple[int, float]]:
    return sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))


def test_a_run_is_mirrored_into_a_local_mlflow_store(repo: Repo, mission_dir: Path) -> None:
    err = _run(repo, "--max-iterations", "3")
    client = _store(repo)
    run = _only_run(client)
    assert run.info.run_name == RUN_ID and run.info.status == "FINISHED"
    assert run.data.tags["autoresearch.run_id"] == RUN_ID
    assert run.data.tags["autoresearch.status"] == "completed"
    assert run.data.params["keep_policy"] == "score_improvement"
    # one step per iteration, the baseline step 0: value.txt 1 → 2 (keep) → 1.5 (discard) → 3
    assert _steps(client, run.info.run_id, "kept") == [(0, 0.0), (1, 1.0), (2, 0.0), (3, 1.0)]
    assert _steps(client, run.info.run_id, "score") == [(0, 1.0), (1, 2.0), (2, 1.5), (3, 3.0)]
    tags = run.data.tags
    assert [tags[f"iteration.{n}.decision"] for n in range(4)] == [
        "baseline", "keep", "discard", "keep"
    ]  # fmt: skip
    assert tags["iteration.3.parent"] == tags["iteration.1.commit"]
    assert run.data.metrics["best_score"] == 3.0
    db = repo.root / ".autoresearch/tracking/mlflow.db"
    assert f"tracker mlflow: mirroring each iteration into sqlite:///{db}" in err


def test_lanes_are_mirrored_with_their_lane(repo: Repo, mission_dir: Path) -> None:
    _run(repo, "--max-iterations", "2", "--lanes", "2", plan="improve")
    client = _store(repo)
    run = _only_run(client)
    assert [s for s, _ in _steps(client, run.info.run_id, "kept")] == [0, 1, 2]
    assert {run.data.tags[f"iteration.{n}.lane"] for n in (1, 2)} <= {"1", "2"}


def test_a_continued_run_adds_its_steps_once(repo: Repo, mission_dir: Path) -> None:
    _run(repo, "--max-iterations", "2")
    done = cli("continue", RUN_ID, "--max-iterations", "+1", cwd=repo.root,
               env={"FAKE_PLAN": "improve,worse,improve"}, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    client = _store(repo)
    run = _only_run(client)  # the same MLflow run, its tracker recorded with the run
    assert [s for s, _ in _steps(client, run.info.run_id, "kept")] == [0, 1, 2, 3]
    # `--tracker none` turns the recorded tracker off: the store gets no step 4
    done = cli("continue", RUN_ID, "--max-iterations", "+1", "--tracker", "none",
               cwd=repo.root, env={"FAKE_PLAN": "improve"}, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "tracker mlflow" not in done.stderr
    assert [s for s, _ in _steps(client, run.info.run_id, "kept")] == [0, 1, 2, 3]


def test_a_run_killed_mid_way_is_caught_up_on_resume_without_a_repeated_step(
    repo: Repo, mission_dir: Path
) -> None:
    env = {**os.environ, **GIT_ENV, "FAKE_PLAN": "improve,hang,improve"}
    driver = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "run", "missions/demo", "--agent", CMD_AGENT,
         "--run-tag", "T1", "--no-certify", "--max-iterations", "3", "--tracker", "mlflow"],
        cwd=repo.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    started = repo.root / ".autoresearch/worktrees" / RUN_ID / ".autoresearch/agent-2.started"
    until(started.exists, 120, "the second session started")
    kill_tree(driver.pid, repo.root)
    driver.wait(timeout=30)
    done = resume_detached(repo.root, RUN_ID, env={"FAKE_PLAN": "improve,improve,improve"})
    assert done.returncode == 0, done.stderr
    client = _store(repo)
    run = _only_run(client)
    assert [s for s, _ in _steps(client, run.info.run_id, "kept")] == [0, 1, 2, 3]
    assert run.data.tags["iteration.2.decision"] == "interrupted"


def test_a_failing_tracker_is_named_once_and_the_run_goes_on(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    err = _run(repo, "--max-iterations", "2", "--tracker-uri", f"sqlite:///{blocker}/m.db")
    # said where it mirrors, then that it failed: once
    assert err.count("tracker mlflow failed") == 1, err
    assert "Traceback" not in err


def test_an_unknown_tracker_is_refused_before_the_run_exists(repo: Repo, mission_dir: Path) -> None:
    done = cli("run", "missions/demo", "--agent", CMD_AGENT, "--tracker", "nope", cwd=repo.root)
    assert done.returncode != 0
    assert "unknown tracker 'nope' (installed: mlflow" in done.stderr
    assert not (repo.root / ".autoresearch/runs").exists()


@pytest.mark.parametrize(
    ("uri", "refused"),
    [
        (None, False),
        ("sqlite:////tmp/m.db", False),
        ("https://mlflow.example.com", False),
        ("https://ann@mlflow.example.com", False),  # a user name is no secret
        ("https://ann:hunter2@mlflow.example.com", True),
    ],
)
def test_a_tracker_uri_with_a_password_is_refused(uri: str | None, refused: bool) -> None:
    if not refused:
        check_uri(uri)
        return
    with pytest.raises(ContractError) as info:
        check_uri(uri)
    assert "hunter2" not in str(info.value) and "ann:***@" in str(info.value)


def test_a_run_without_a_tracker_imports_no_mlflow() -> None:
    probe = "import sys, autoresearch.supervisor.drive; print('mlflow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


# --- the mirror itself, over trackers of the test's own -------------------------------------


@dataclass
class Recorder:
    """A tracker that holds `holds` iterations already and records what it is sent."""

    holds: int = -1
    fail: bool = False
    location: str = "memory"
    steps: list[int] = field(default_factory=list)
    ends: int = 0

    def open(self, run: TrackedRun) -> int:
        return self.holds

    def log_iteration(self, step: TrackedIteration) -> None:
        if self.fail:
            raise OSError("disk full")
        self.steps.append(step.iteration)

    def log_end(self, end: TrackedEnd) -> None:
        self.ends += 1


def _iteration(n: int, decision: DecisionKind = DecisionKind.KEEP) -> IterationRecord:
    kind = IterationKind.BASELINE if n == 0 else IterationKind.ITERATION
    return IterationRecord(
        "r", n, kind, IterationState.APPLIED, KeepPolicy.SCORE_IMPROVEMENT, "t", "t",
        base_commit="a", candidate_commit="b", decision=decision, decision_reason="why",
        artifact_notes=[tried_note({"lr": 0.5})],
    )  # fmt: skip


def _reader(rows: list[IterationRecord]) -> object:
    def after(n: int) -> Iterable[IterationRecord]:
        return [r for r in rows if r.iteration > n]

    return after


def test_the_mirror_sends_only_what_a_tracker_lacks_and_drops_a_failing_one() -> None:
    rows = [_iteration(n) for n in range(4)]
    behind, ahead, broken = Recorder(), Recorder(holds=2), Recorder(fail=True)
    notes: list[str] = []
    mirror = Mirror({"a": behind, "b": ahead, "c": broken}, notes.append)
    run = TrackedRun("r", "m")
    mirror.sync(run, _reader(rows[:2]))  # type: ignore[arg-type]
    mirror.sync(run, _reader(rows))  # type: ignore[arg-type]
    mirror.end(run, TrackedEnd({}, {}), _reader(rows))  # type: ignore[arg-type]
    assert behind.steps == [0, 1, 2, 3] and ahead.steps == [3]
    assert (behind.ends, ahead.ends, broken.ends) == (1, 1, 0)
    assert len(notes) == 1 and notes[0].startswith("tracker c failed") and "disk full" in notes[0]


def test_an_iteration_step_holds_its_numbers_and_lineage() -> None:
    step = tracked_iteration(_iteration(2, DecisionKind.DISCARD))
    assert step.iteration == 2
    assert (step.metrics["kept"], step.metrics["tried.lr"]) == (0.0, 0.5)
    assert (step.tags["decision"], step.tags["parent"], step.tags["commit"]) == (
        "discard", "a", "b"
    )  # fmt: skip
