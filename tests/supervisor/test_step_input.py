"""What a step is handed (supervisor/step_input.StepInput): a reading taken already answers
the policy's first request of one, a forced decision is recorded without evaluation."""

from __future__ import annotations

from sup_helpers import submit

from autoresearch.decide import replay_conflict
from autoresearch.evaluate import EvaluationRecord
from autoresearch.states import EvalStatus
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.step import step
from autoresearch.supervisor.step_input import StepInput


def reading(score: float) -> EvaluationRecord:
    return EvaluationRecord(
        command="taken elsewhere", format="json", ran_at="", duration_ms=0,
        status=EvalStatus.PASS, passed=True, score=score, exit_code=0, timed_out=False,
        stdout="", stderr="", log_file="",
    )  # fmt: skip


def test_a_reading_handed_over_is_the_candidates_own(run: RunHandle) -> None:
    submit(run, {"value.txt": "3\n"})  # the evaluator would score it 3
    result = step(run, StepInput(("a lane's note",), reading=reading(40.0)))
    assert (result.decision, result.last_kept_score) == ("keep", 40.0)
    assert result.evaluator is not None and result.evaluator.command == "taken elsewhere"
    assert "a lane's note" in result.notes


def test_a_forced_decision_is_recorded_without_evaluation(run: RunHandle) -> None:
    kept = run.run.last_kept_commit
    submit(run, {"value.txt": "9\n"})
    result = step(run, StepInput(forced=replay_conflict("f" * 40, "a conflict")))
    assert (result.decision, result.evaluator, result.last_kept_commit) == (
        "discard", None, kept,
    )  # fmt: skip
    assert run.paths.evaluator_log(result.iteration).exists() is False
