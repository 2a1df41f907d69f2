"""The kill grace (AUTORESEARCH_KILL_GRACE_SECONDS) is the one time every stop of a process
group the tool started gives it between SIGTERM and SIGKILL.

The stops themselves are never weakened to be tested: the decisions are table-tested, and one
real process that needs 2.5 s after SIGTERM to save its state is stopped by the recovery
paths (resume's stray reaping, a job stop) under a 4 s grace."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch import children, evaluate, proc, settings
from autoresearch.contracts.evaluator_spec import EvaluatorSpec
from autoresearch.journal.db import Journal
from autoresearch.states import EvalFormat
from autoresearch.supervisor.executor import EvaluationTask

VARIABLE = settings.ENV_KILL_GRACE


def _grace_default(function: Callable[..., object], name: str = "grace") -> float:
    """What `function` gives a stop when its caller names no grace."""
    return proc.stop_grace(inspect.signature(function).parameters[name].default)


def _task_grace(tmp: Path) -> float:
    spec = EvaluatorSpec(command="true", format=EvalFormat.JSON)
    task = EvaluationTask(
        run_id="r", lane=1, iteration=1, commit="c", tree=tmp, relative_dir=".",
        evaluator=spec, log_path=tmp / "log",
    )  # fmt: skip
    return task.grace_seconds


# Each way a group the tool started is stopped, and the grace it gets when its caller names
# none: resume's stray reaping (record.reap_strays), a job stop (worker/liveness), an
# abandoned experiment run (experiments/ledger) all reap; a job's runner is a stale group
# (worker/jobs._stop_runner); a timeout stops a supervised child or an evaluator, also a
# lane's (EvaluationTask, shipped to a Ray node).
STOP_PATHS: dict[str, Callable[[Path], float]] = {
    "reap (resume strays, job stop, abandoned exp run)": lambda _: _grace_default(children.reap),
    "stale group (a job's runner)": lambda _: _grace_default(proc.kill_stale_group),
    "marked groups (a Ray node's reaper, watcher)": lambda _: _grace_default(proc.kill_marked),
    "timeout of a supervised child": lambda t: (
        proc.SupervisedSpec([], t, {}, t / "l").grace_seconds
    ),
    "timeout of an evaluator": lambda _: _grace_default(evaluate.run_evaluator, "grace_seconds"),
    "timeout of a lane's evaluator": _task_grace,
}


@pytest.mark.parametrize("path", STOP_PATHS)
def test_every_stop_path_gives_the_user_s_grace(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, "4")
    assert STOP_PATHS[path](tmp_path) == 4.0


SAVER = """\
import pathlib, signal, sys, time
def save(*_):
    time.sleep(2.5)  # longer than the 2 s the recovery stops used to give
    pathlib.Path(sys.argv[1]).write_text("saved")
    raise SystemExit(0)
signal.signal(signal.SIGTERM, save)
print("ready", flush=True)
time.sleep(60)
"""


def _saver(env: dict[str, str], saved: Path) -> subprocess.Popen[str]:
    """A process in its own group (as every child of a driver or job) that saves its state
    2.5 s after SIGTERM; returns once its handler is in place."""
    child = subprocess.Popen(
        [sys.executable, "-c", SAVER, str(saved)],
        env={**os.environ, **env},
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


def _resume_strays(journal: Journal, child: subprocess.Popen[str], tag: children.ChildTag) -> None:
    children.register(journal, tag, child.pid, "agent")
    children.reap(journal, tag)  # as record.reap_strays and liveness.stop_processes call it


def _job_runner(journal: Journal, child: subprocess.Popen[str], tag: children.ChildTag) -> None:
    proc.kill_stale_group(child.pid, tag.marker)  # as worker/jobs._stop_runner calls it


RECOVERY_STOPS = {
    "resume's stray reaping": (_resume_strays, "run"),
    "a job stop": (_resume_strays, "job"),
    "a job's runner": (_job_runner, "job"),
}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("stop", RECOVERY_STOPS)
def test_a_recovery_stop_gives_a_process_the_grace_to_save_its_state(
    stop: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, "4")
    stopper, kind = RECOVERY_STOPS[stop]
    unique = uuid.uuid4().hex
    tag = children.run_tag(unique, tmp_path) if kind == "run" else children.job_tag(unique)
    saved = tmp_path / "saved.txt"
    child = _saver(tag.env(), saved)
    try:
        with Journal.open(tmp_path / "journal.sqlite3") as journal:
            started = time.monotonic()
            stopper(journal, child, tag)
        took = time.monotonic() - started
        child.wait(timeout=10)
    finally:
        child.kill()
        child.wait()
    assert (child.returncode, saved.is_file()) == (0, True), f"stopped after {took:.1f} s"
