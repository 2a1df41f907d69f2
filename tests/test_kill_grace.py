"""The kill grace (AUTORESEARCH_KILL_GRACE_SECONDS) is the one time every stop of a process
group the tool started gives it between SIGTERM and SIGKILL, and a value that is not a finite
number >= 0 is refused in one line naming the variable.

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
from autoresearch.errors import ContractError
from autoresearch.journal.db import Journal
from autoresearch.states import EvalFormat
from autoresearch.supervisor import drive
from autoresearch.supervisor.executor import EvaluationTask
from helpers import cli, make_repo

VARIABLE = settings.ENV_KILL_GRACE


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", 3.0),  # unset: the default
        ("   ", 3.0),
        ("0", 0.0),  # SIGKILL at once is a choice
        ("4", 4.0),
        (" 2.5 ", 2.5),
        ("1e1", 10.0),
        ("inf", None),  # a stop that never SIGKILLs; OverflowError in a sleep
        ("-inf", None),
        ("nan", None),
        ("-1", None),
        ("ten", None),
        ("3s", None),
    ],
)
def test_the_grace_is_a_finite_number_of_seconds_or_refused(
    raw: str, expected: float | None
) -> None:
    if expected is not None:
        assert settings.parse_seconds(VARIABLE, raw, 3.0) == expected
        return
    with pytest.raises(ContractError) as refused:
        settings.parse_seconds(VARIABLE, raw, 3.0)
    message = str(refused.value)
    assert VARIABLE in message and repr(raw.strip()) in message and "\n" not in message


def test_a_bad_grace_is_refused_where_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, "inf")
    with pytest.raises(ContractError, match=VARIABLE):
        settings.kill_grace()
    with pytest.raises(ContractError, match=VARIABLE):
        proc.stop_grace(None)
    assert proc.stop_grace(0.0) == 0.0  # an explicit grace (the second Ctrl-C's) reads nothing


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


def test_a_command_refuses_a_bad_grace_before_it_runs_anything(tmp_path: Path) -> None:
    """`check --try` (its evaluator's timeout), `job start` (its detached runner's stops) and
    `mcp` (its tools' stops) refuse in one line; no job is queued."""
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    bad = {VARIABLE: "inf"}
    line = f"autoresearch: {VARIABLE} must be a finite number of seconds >= 0, not 'inf'"
    tried = cli("check", "missions/demo", "--try", cwd=repo.root, env=bad)
    job = cli("job", "start", "Set VALUE to 2.", "--agent", "cmd:true", cwd=repo.root, env=bad)
    listed = cli("job", "list", cwd=repo.root)
    served = cli("mcp", cwd=repo.root, env=bad, timeout=60)
    assert (tried.returncode, tried.stderr.splitlines()[-1]) == (2, line)
    assert (job.returncode, job.stderr.splitlines()[-1]) == (2, line)
    assert (served.returncode, served.stderr.strip()) == (2, line)  # before any handshake
    assert listed.stdout.strip() == "no jobs"


def test_resume_and_continue_refuse_a_bad_grace_before_re_arming(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # re-arming reaps a crashed driver's strays with the grace: `continue` reopened the run
    # before it was refused
    monkeypatch.setenv(VARIABLE, "-1")
    with pytest.raises(ContractError, match=VARIABLE):
        drive.iteration_limit(None, "+1")


# The other seconds and counts read from the environment stay lenient (a value that is not a
# finite number >= 0 is taken as unset), but inf and nan no longer pass as numbers: they
# reached a sleep, SQLite's busy timeout or int() as an OverflowError or a wait without end.
LENIENT: dict[str, tuple[str, Callable[[], float]]] = {
    "journal timeout": (settings.ENV_JOURNAL_TIMEOUT, settings.journal_timeout),
    "signal settle": (settings.ENV_SIGNAL_SETTLE, settings.signal_settle),
    "worker max jobs": (settings.ENV_WORKER_MAX_JOBS, settings.worker_max_jobs),
}


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "-1", "ten"])
@pytest.mark.parametrize("setting", LENIENT)
def test_a_lenient_setting_takes_a_non_finite_value_as_unset(
    setting: str, raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, read = LENIENT[setting]
    monkeypatch.delenv(name, raising=False)
    default = read()
    monkeypatch.setenv(name, raw)
    assert read() == default
