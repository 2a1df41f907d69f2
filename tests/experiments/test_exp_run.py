"""run: process group and timeout, whole-output parsing, tails, checks, one pending run."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from exp_helpers import cycle, init, log, run

from autoresearch.children import harness_tag
from autoresearch.errors import RefusedError
from autoresearch.experiments import RunParams, run_experiment, session_status
from autoresearch.journal import sessions
from autoresearch.journal.children import children
from autoresearch.journal.db import Journal
from helpers import GIT_ENV, Repo, pid_alive


def wait_for(predicate: object, limit: float = 10.0) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def harness_started(pidfile: Path) -> bool:
    """The slow harness has written its own pid and its child's."""
    return pidfile.exists() and len(pidfile.read_text().split()) == 2


def recorded_pgid(root: Path) -> int | None:
    """The process group the journal's child registry holds for session #1's pending run."""
    with Journal.open(root / ".autoresearch" / "journal.sqlite3") as journal:
        pending = sessions.pending_run(journal, 1)
        if pending is None:
            return None
        owner = harness_tag(1, pending.number, str(root)).owner
        registered = children(journal, owner)
    return registered[0].pgid if registered else None


def test_a_passing_run_reports_metrics_tail_and_log(session: Repo) -> None:
    session.write("mem.txt", "12\n")
    report = run(session.root)
    assert (report.run, report.status, report.exit_code) == (1, "pass", 0)
    assert report.metric == 100.0 and report.metrics == {"mem": 12.0}
    assert report.suggested_status == "keep"
    assert "has no baseline yet" in report.messages[0]
    assert report.tail == "METRIC score=100\nMETRIC mem=12\ndone"
    log_text = Path(report.log_path).read_text()
    assert log_text == "METRIC score=100\nMETRIC mem=12\ndone\n"
    assert Path(report.log_path).parent == session.root / ".autoresearch" / "sessions" / "1"
    pending = session_status(session.root).pending
    assert pending is not None and (pending.run, pending.state) == (1, "completed")


def test_metric_at_the_top_of_more_than_1_mb_of_output(session: Repo) -> None:
    session.write("big.flag", "")
    report = run(session.root)
    assert report.metric == 100.0
    assert Path(report.log_path).stat().st_size > 1_000_000
    lines = report.tail.split("\n")
    assert len(lines) == 10 and lines[-1] == "done"
    assert len(report.tail.encode()) <= 4096


def test_crash_is_an_outcome(session: Repo) -> None:
    session.write("crash.flag", "")
    report = run(session.root)
    assert (report.status, report.exit_code, report.metric) == ("fail", 3, None)
    assert report.suggested_status == "crash"
    assert report.tail == "boom"
    assert report.checks is None


def test_exit_0_without_the_primary_metric_is_a_failure(session: Repo) -> None:
    # one rule with the supervisor's `format: metric`: pass = exit 0 and the primary metric
    session.write("autoresearch.sh", "#!/bin/bash\necho 'METRIC other=1'\n")
    report = run(session.root)
    assert (report.status, report.exit_code, report.metric) == ("fail", 0, None)
    assert report.suggested_status == "crash"
    assert "printed no `METRIC score=<value>` line, so it failed" in report.messages[0]
    with pytest.raises(RefusedError, match="the benchmark did not pass"):
        log(session.root, "keep", metric=5.0)


def test_timeout_kills_the_whole_process_group(session: Repo, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    session.write("slow.flag", "")
    os.environ["PIDFILE"] = str(pidfile)
    try:
        t0 = time.monotonic()
        report = run(session.root, timeout_seconds=1)
        elapsed = time.monotonic() - t0
    finally:
        del os.environ["PIDFILE"]
    assert report.status == "timeout" and report.timed_out
    assert report.suggested_status == "crash"
    assert elapsed < 6  # timeout 1 s + grace 0.5 s + drain, never the 30 s sleep
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2 and not any(pid_alive(p) for p in pids)


def test_progress_is_reported_about_once_per_second(session: Repo) -> None:
    session.write(
        "autoresearch.sh",
        "#!/bin/bash\nfor i in 1 2 3 4; do echo step $i; sleep 0.4; done\necho METRIC score=1\n",
    )
    calls: list[tuple[float, str]] = []
    report = run_experiment(
        session.root, RunParams(), on_progress=lambda t, line: calls.append((t, line))
    )
    assert report.metric == 1.0
    # no upper count: a loaded machine stretches the 1.6 s harness, and the spacing below is
    # what bounds the rate whatever the load
    assert len(calls) >= 1
    assert all(b[0] - a[0] >= 0.9 for a, b in itertools.pairwise(calls))
    assert calls[0][1].startswith("step ")


def test_checks_run_after_a_passing_benchmark(checked: Repo) -> None:
    report = run(checked.root)
    assert report.checks is not None
    assert report.checks.state == "pass" and report.checks.tail == "checks ok"
    assert Path(report.checks.log_file).name == "run-0001-checks.log"
    log(checked.root, "keep", "baseline")
    checked.write("broken.flag", "")
    checked.write("value.txt", "50\n")
    failed = run(checked.root)
    assert failed.status == "pass" and failed.metric == 50.0
    assert failed.checks is not None and failed.checks.state == "fail"
    assert failed.checks.tail == "1 test failed"
    assert failed.suggested_status == "checks_failed"
    with pytest.raises(RefusedError, match="the checks failed"):
        log(checked.root, "keep", "faster but broken")
    log(checked.root, "checks_failed", "faster but broken")
    assert not (checked.root / "broken.flag").exists()  # reverted with the rest


def test_checks_are_skipped_when_the_benchmark_fails(checked: Repo) -> None:
    checked.write("crash.flag", "")
    report = run(checked.root)
    assert report.status == "fail" and report.checks is None


def test_checks_have_their_own_timeout(checked: Repo) -> None:
    checked.write("autoresearch.checks.sh", "#!/bin/bash\nsleep 20\n")
    t0 = time.monotonic()
    report = run(checked.root, checks_timeout_seconds=0.5)
    assert time.monotonic() - t0 < 6
    assert report.status == "pass"
    assert report.checks is not None and report.checks.state == "timeout"


def test_a_new_run_abandons_the_unlogged_one_and_says_so(session: Repo) -> None:
    run(session.root)
    second = run(session.root)
    assert second.run == 2 and second.abandoned_run == 1
    assert "abandoned run #1 (completed, never logged)" in second.messages
    pending = session_status(session.root).pending
    assert pending is not None and pending.run == 2


def test_max_iterations_stops_the_session(repo: Repo) -> None:
    init(repo.root, max_iterations=2)
    cycle(repo, "100", "keep", "baseline")
    last = cycle(repo, "90", "keep", "better")
    assert last.max_reached
    assert "Maximum experiments reached (2). The session accepts no more runs." in last.messages
    with pytest.raises(RefusedError, match=r"^Maximum experiments reached \(2\)\. "):
        run(repo.root)
    status = session_status(repo.root)
    assert status.progress.to_dict() == {"logged": 2, "max": 2, "reached": True}


def test_a_killed_exp_run_is_abandoned_and_its_processes_stopped(
    session: Repo, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    session.write("slow.flag", "")
    env = {**os.environ, **GIT_ENV, "PIDFILE": str(pidfile)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "exp", "run"],
        cwd=session.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    # Both harness processes run, and the driver has recorded their group: that write races
    # with the harness's own start, so waiting for the pidfile alone is not enough under load.
    wait_for(lambda: harness_started(pidfile) and recorded_pgid(session.root) is not None)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    pids = [int(p) for p in pidfile.read_text().split()]
    assert all(pid_alive(p) for p in pids)  # the harness outlived its driver
    pending = session_status(session.root).pending
    assert pending is not None and pending.state == "interrupted"
    with pytest.raises(RefusedError, match="run #1 never completed"):
        log(session.root, "crash", "killed")
    (session.root / "slow.flag").unlink()
    report = run(session.root)
    assert "abandoned run #1 (interrupted before it completed)" in report.messages
    wait_for(lambda: not any(pid_alive(p) for p in pids), limit=5)
    assert report.run == 2 and report.metric == 100.0


def test_runs_need_a_session(repo: Repo) -> None:
    from autoresearch.errors import NotFoundError

    with pytest.raises(NotFoundError, match="no active experiment session on branch main: write"):
        run(repo.root)


def test_command_is_run_with_bash_in_the_session_directory(session: Repo) -> None:
    script = textwrap.dedent(
        """\
        [[ -n "$BASH_VERSION" ]] && echo "METRIC score=$(pwd | wc -c)"
        read -t 1 line && echo "stdin was open"
        true
        """
    )
    session.write("bench.sh", script)
    init(session.root, command="source bench.sh")
    report = run(session.root)
    assert report.metric == float(len(str(session.root)) + 1)
    assert "stdin was open" not in report.tail


def test_a_cancelled_run_stops_its_harness_and_is_abandoned(
    session: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    session.write("slow.flag", "")
    t0 = time.monotonic()
    report = run_experiment(
        session.root, RunParams(), should_cancel=lambda: harness_started(pidfile)
    )
    assert time.monotonic() - t0 < 10  # never the harness's 30 s sleep
    assert (report.run, report.status, report.suggested_status) == (1, "cancelled", "none")
    assert any("run #1 was cancelled" in m for m in report.messages)
    assert not any(pid_alive(int(p)) for p in pidfile.read_text().split())
    assert session_status(session.root).pending is None  # nothing waits for a log
    with pytest.raises(RefusedError, match="no pending run"):
        log(session.root, "crash", "cancelled")
    (session.root / "slow.flag").unlink()
    second = run(session.root)
    assert (second.run, second.status, second.abandoned_run) == (2, "pass", None)


def test_a_run_cancelled_during_its_checks_is_abandoned(checked: Repo, tmp_path: Path) -> None:
    started = tmp_path / "checks-started"
    checked.write("autoresearch.checks.sh", f"#!/bin/bash\ntouch {started}\nsleep 30\n")
    report = run_experiment(checked.root, RunParams(), should_cancel=started.exists)
    assert report.status == "cancelled"
    assert report.checks is not None and report.checks.state == "cancelled"
    assert session_status(checked.root).pending is None


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_exp_run_and_records_the_run_as_cancelled(
    session: Repo, tmp_path: Path, sig: signal.Signals
) -> None:
    pidfile = tmp_path / "pids"
    session.write("slow.flag", "")
    env = {**os.environ, **GIT_ENV, "PIDFILE": str(pidfile)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "exp", "run", "--json"],
        cwd=session.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: harness_started(pidfile))
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert json.loads(out)["status"] == "cancelled"
    assert not any(pid_alive(int(p)) for p in pidfile.read_text().split())
    assert session_status(session.root).pending is None
