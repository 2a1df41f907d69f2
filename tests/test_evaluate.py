"""Running an evaluator as a real process: statuses, timeouts, process groups, output caps."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from autoresearch.contracts.evaluator_output import Verdict as EvalVerdict
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.evaluate import (
    build_record,
    evaluator_env,
    outcome_state,
    process_state,
    run_evaluator,
)
from autoresearch.proc import SupervisedOutcome, SupervisedSpec, killed_by_sweep, run_supervised
from autoresearch.states import EvalStatus, ProcessState
from helpers import pid_alive, until


def run(tmp_path: Path, command: str, fmt: str = "json", timeout: float = 30, **kw):
    spec = EvaluatorSpec(command=command, format=fmt, timeout_seconds=timeout, **kw)
    env = evaluator_env("run-x", 4, tmp_path)
    return run_evaluator(spec, tmp_path, env, tmp_path / "logs" / "eval.log", grace_seconds=0.5)


def test_pass_with_score_and_env(tmp_path: Path) -> None:
    cmd = (
        'echo "id=$AUTORESEARCH_RUN_ID it=$AUTORESEARCH_ITERATION wt=$AUTORESEARCH_WORKTREE" >&2;'
        ' echo \'{"pass": true, "score": 0.75, "note": "hi"}\''
    )
    rec = run(tmp_path, cmd)
    d = rec.to_dict()
    assert (d["status"], d["pass"], d["score"], d["exit_code"]) == ("pass", True, 0.75, 0)
    assert d["output"] == {"note": "hi"}
    assert f"id=run-x it=4 wt={tmp_path}" in d["stderr"]
    assert d["timed_out"] is False and "parse_error" not in d
    assert Path(d["log_file"]).read_text().count("0.75") == 1
    assert set(d) >= {"command", "ran_at", "duration_ms", "stdout", "stderr", "log_file"}


def test_fail_is_fail(tmp_path: Path) -> None:
    d = run(tmp_path, 'echo \'{"pass": false, "score": 2}\'').to_dict()
    assert (d["status"], d["pass"], d["score"]) == ("fail", False, 2)


def test_nonzero_exit_with_valid_json_is_error(tmp_path: Path) -> None:
    d = run(tmp_path, 'echo \'{"pass": true, "score": 2}\'; exit 4').to_dict()
    assert (d["status"], d["exit_code"]) == ("error", 4)
    assert "pass" not in d and "score" not in d


def test_parse_error_is_error(tmp_path: Path) -> None:
    d = run(tmp_path, "echo hello").to_dict()
    assert d["status"] == "error"
    assert d["parse_error"].startswith("Evaluator output must be valid JSON")


def test_missing_command_is_error(tmp_path: Path) -> None:
    d = run(tmp_path, "definitely-not-a-command-xyz").to_dict()
    assert (d["status"], d["exit_code"]) == ("error", 127)


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    script = tmp_path / "hang.sh"
    script.write_text(
        "#!/bin/sh\n"
        "trap '' TERM\n"  # the leader ignores SIGTERM
        "sleep 60 & echo $! > child.pid\n"
        "echo $$ > leader.pid\n"
        "wait\n"
    )
    t0 = time.monotonic()
    d = run(tmp_path, f"sh {script}", timeout=1).to_dict()
    assert time.monotonic() - t0 < 10
    assert d["status"] == "error" and d["timed_out"] is True
    for name in ("child.pid", "leader.pid"):
        pid = int((tmp_path / name).read_text())
        assert not pid_alive(pid), f"{name} survived the timeout"


def test_background_children_do_not_outlive_a_normal_exit(tmp_path: Path) -> None:
    cmd = "sleep 60 >/dev/null 2>&1 & echo $! > bg.pid; echo '{\"pass\": true}'"
    d = run(tmp_path, cmd).to_dict()
    assert d["status"] == "pass"
    background = int((tmp_path / "bg.pid").read_text())
    until(lambda: not pid_alive(background), 10, "the background child's end")


def test_output_is_capped_in_the_record_but_whole_in_the_log(tmp_path: Path) -> None:
    cmd = "head -c 3000000 /dev/zero | tr '\\0' 'a'; echo; echo '{\"pass\": true, \"score\": 1}'"
    rec = run(tmp_path, cmd)
    assert rec.status == "pass" and rec.score == 1
    assert len(rec.stdout) <= 64 * 1024
    assert Path(rec.log_file).stat().st_size > 3_000_000


def test_metric_format(tmp_path: Path) -> None:
    cmd = "echo 'METRIC loss=0.25'; echo 'METRIC time_s=3' >&2"
    d = run(tmp_path, cmd, fmt="metric", metric="loss").to_dict()
    assert (d["status"], d["pass"], d["score"]) == ("pass", True, 0.25)
    assert d["metrics"] == {"loss": 0.25, "time_s": 3.0}
    missing = run(tmp_path, "echo 'METRIC other=1'", fmt="metric", metric="loss").to_dict()
    assert missing["status"] == "error"
    assert missing["parse_error"] == "Evaluator output must include a METRIC loss=<number> line."
    crashed = run(tmp_path, "echo 'METRIC loss=1'; exit 2", fmt="metric", metric="loss")
    assert crashed.status == "error"


@pytest.mark.parametrize("stdin_probe", ["cat"])
def test_stdin_is_closed(tmp_path: Path, stdin_probe: str) -> None:
    d = run(tmp_path, f"{stdin_probe}; echo '{{\"pass\": true}}'", timeout=5).to_dict()
    assert d["status"] == "pass" and d["timed_out"] is False


def test_an_evaluator_that_closes_its_output_early_is_not_killed(tmp_path: Path) -> None:
    cmd = "exec >/dev/null 2>&1; sleep 0.5; echo done > finished.txt"
    d = run(tmp_path, cmd, timeout=10).to_dict()
    assert (tmp_path / "finished.txt").read_text() == "done\n"
    assert d["exit_code"] == 0 and d["timed_out"] is False


# --- the one classification of how a process ended (pure, table-tested) -------------------

OK = SupervisedOutcome(started_at="t", duration_ms=5, exit_code=0)


@pytest.mark.parametrize(
    ("outcome", "state"),
    [
        (OK, ProcessState.PASS),
        (replace(OK, exit_code=1), ProcessState.FAIL),
        (replace(OK, exit_code=-9), ProcessState.FAIL),
        (replace(OK, exit_code=None), ProcessState.ERROR),  # no exit code: nothing known
        (replace(OK, exit_code=None, spawn_error="no such file"), ProcessState.ERROR),
        (replace(OK, exit_code=None, timed_out=True), ProcessState.TIMEOUT),
        (replace(OK, exit_code=-15, timed_out=True, cancelled=True), ProcessState.CANCELLED),
        (replace(OK, cancelled=True), ProcessState.CANCELLED),
    ],
)
def test_how_a_process_ended(outcome: SupervisedOutcome, state: ProcessState) -> None:
    assert outcome_state(outcome) is state
    args = (outcome.timed_out, outcome.spawn_error, outcome.exit_code, outcome.cancelled)
    assert process_state(*args) is state


SPEC = EvaluatorSpec(command="true", format="json", timeout_seconds=5)


@pytest.mark.parametrize(
    ("outcome", "verdict", "status"),
    [
        (OK, EvalVerdict(True, 1.0), EvalStatus.PASS),
        (OK, EvalVerdict(False, 1.0), EvalStatus.FAIL),
        (OK, EvalVerdict(None, parse_error="not json"), EvalStatus.ERROR),
        (replace(OK, exit_code=2), EvalVerdict(True, 1.0), EvalStatus.ERROR),
        (replace(OK, exit_code=None, timed_out=True), EvalVerdict(True, 1.0), EvalStatus.ERROR),
        (replace(OK, exit_code=None, spawn_error="x"), EvalVerdict(True, 1.0), EvalStatus.ERROR),
        # A cancelled evaluation is rolled back by its caller; its status is how it ended.
        (replace(OK, cancelled=True), EvalVerdict(True, 1.0), EvalStatus.PASS),
    ],
)
def test_record_status_from_the_process_and_the_verdict(
    outcome: SupervisedOutcome, verdict: EvalVerdict, status: EvalStatus
) -> None:
    record = build_record(SPEC, outcome, verdict)
    assert record.status is status and record.cancelled == outcome.cancelled
    if status is EvalStatus.ERROR:
        assert "score" not in record.to_dict() and "pass" not in record.to_dict()


@pytest.mark.parametrize(
    ("returncode", "swept"),
    [(-9, True), (-15, True), (-2, True), (-1, True), (-11, False), (-6, False), (0, False),
     (1, False), (137, False), (None, False)],
)  # fmt: skip
def test_which_exits_a_whole_tree_kill_may_have_caused(returncode: int | None, swept: bool) -> None:
    assert killed_by_sweep(returncode) is swept


def _killed_by_sigkill(tmp_path: Path, should_cancel: Callable[[], bool] | None, settle: float):
    spec = SupervisedSpec(
        argv=["sh", "-c", "kill -9 $$"], cwd=tmp_path, env=os.environ,
        log_path=tmp_path / "log", should_cancel=should_cancel, settle_seconds=settle,
    )  # fmt: skip
    t0 = time.monotonic()
    return run_supervised(spec), time.monotonic() - t0


def test_a_child_killed_by_a_signal_is_reported_after_the_settle_delay(tmp_path: Path) -> None:
    outcome, took = _killed_by_sigkill(tmp_path, None, 0.6)
    assert outcome.exit_code == -9 and not outcome.cancelled  # a driver that lives: a verdict
    assert took >= 0.6


def test_a_stop_asked_for_while_it_settles_makes_the_kill_no_verdict(tmp_path: Path) -> None:
    asked = time.monotonic() + 0.2  # the driver's own SIGTERM arrives a moment later
    outcome, took = _killed_by_sigkill(tmp_path, lambda: time.monotonic() >= asked, 5.0)
    assert outcome.cancelled and took < 4.0


def test_a_child_that_crashes_is_reported_at_once(tmp_path: Path) -> None:
    spec = SupervisedSpec(
        argv=["sh", "-c", "kill -SEGV $$"], cwd=tmp_path, env=os.environ,
        log_path=tmp_path / "log", settle_seconds=5.0,
    )  # fmt: skip
    t0 = time.monotonic()
    outcome = run_supervised(spec)
    assert outcome.exit_code == -11 and time.monotonic() - t0 < 4.0
