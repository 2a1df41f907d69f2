"""The certification at the end of `run` (#34): a noisy run that kept a change re-measures its
baseline and final commit in interleaved pairs before the summary and the report are written,
and the report's improvement is that paired one; `--no-certify` (recorded with the run), a
deterministic evaluator or a run that kept nothing: no certification at all."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from autoresearch.contracts.loop import LoopSettings
from autoresearch.journal.db import open_journal
from autoresearch.noise import Interval
from autoresearch.paths import RepoPaths
from autoresearch.report.collect import run_report
from autoresearch.report.model import improvement
from autoresearch.supervisor.options import resumed_loop
from autoresearch.supervisor.run_read import load_run
from helpers import GIT_ENV, NOISY_EVAL, Repo, run_noisy, sandbox_text, until

# a `cmd:` agent that sets value.txt to VALUE and hands in the commit
AGENT = textwrap.dedent(
    """\
    import json, os, subprocess
    open("value.txt", "w").write("VALUE\\n")
    subprocess.run(["git", "commit", "-qam", "value to VALUE"], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as f:
        json.dump({"status": "candidate", "candidate_commit": head.stdout.strip(),
                   "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
                   "description": "value to VALUE", "notes": [],
                   "created_at": "2026-01-01T00:00:00Z"}, f)
    """
)
RUN = "missions-noisy-e"
ARGS = ("--run-tag", "E", "--max-iterations", "1", "--json")


def certify_rows(repo: Repo) -> list[tuple[str, int]]:
    conn = sqlite3.connect(repo.root / ".autoresearch" / "journal.sqlite3")
    try:
        sql = "SELECT commit_sha, iteration FROM evaluations WHERE role = 'certify' ORDER BY id"
        return list(conn.execute(sql))
    finally:
        conn.close()


def test_a_noisy_run_that_keeps_is_certified_before_its_summary_and_report(
    repo: Repo, tmp_path: Path
) -> None:
    done = run_noisy(repo, tmp_path, AGENT.replace("VALUE", "10"), *ARGS[:-1])  # text
    assert done.returncode == 0, done.stderr
    with open_journal(repo.root, 5.0) as journal:
        run = load_run(journal, RUN)
    baseline, final = run.baseline_commit, run.last_kept_commit
    assert final is not None and final != baseline
    # 4 pairs of the baseline and the final commit read in turn, recorded, no iteration's
    rows = certify_rows(repo)
    assert [c for c, _ in rows] == [baseline, final, final, baseline] * 2  # in turn
    assert {i for _, i in rows} == {-1}
    assert "autoresearch: certifying: " in done.stderr
    assert "(8 evaluations; --no-certify skips this)" in done.stderr
    assert "autoresearch: certified: improvement +" in done.stderr
    # said before the summary is written: the report it points to already has it
    certification = json.loads(RepoPaths(repo.root).run(RUN).certification.read_text())
    assert certification["repeats"] == 4 and certification["significant"] is True
    certified = Interval.from_dict(certification["improvement"])
    with open_journal(repo.root, 5.0) as journal:
        data = run_report(journal, RepoPaths(repo.root), load_run(journal, RUN))
    headline = improvement(data)  # higher is better: the sign is certify's
    assert headline is not None and headline.paired and headline.interval is not None
    assert headline.change == pytest.approx(certified.mean, rel=1e-12)
    assert headline.interval.half_width == pytest.approx(certified.half_width)
    assert ("certified", certified_line(certification)) in data.facts
    # the summary shows it under the best
    assert f"\ncertified    {certified_line(certification)}\n" in done.stdout


def certified_line(certification: dict[str, object]) -> str:
    from autoresearch.supervisor.certify import Certification, certification_lines

    return certification_lines(Certification.from_json(certification))[0]


@pytest.mark.parametrize(
    ("value", "extra", "env"),
    [
        ("10", ("--no-certify",), {}),  # turned off
        ("10", (), {"NOISE_SD": "0"}),  # a deterministic evaluator: nothing to add
        ("-10", (), {}),  # nothing kept: the final commit is the baseline
    ],
    ids=["no-certify", "deterministic", "no-keep"],
)
def test_no_certification_when_off_deterministic_or_nothing_kept(
    repo: Repo, tmp_path: Path, value: str, extra: tuple[str, ...], env: dict[str, str]
) -> None:
    done = run_noisy(repo, tmp_path, AGENT.replace("VALUE", value), *ARGS, *extra, env=env)
    assert done.returncode == 0, done.stderr
    assert certify_rows(repo) == []
    assert "autoresearch: certif" not in done.stderr
    assert not RepoPaths(repo.root).run(RUN).certification.exists()


def test_no_certify_is_recorded_and_a_resume_keeps_it_unless_told() -> None:
    off = LoopSettings(agent="cmd:true", certify=False)
    assert off.to_dict()["certify"] is False
    assert "certify" not in LoopSettings(agent="cmd:true").to_dict()  # stored as before
    given = LoopSettings(agent="cmd:true")
    assert resumed_loop(off, given).certify is False
    assert resumed_loop(off, replace(given, certify=True)).certify is True
    assert resumed_loop(None, given).certify is True
    assert resumed_loop(off, given).record(off).certify is False
    assert "certify" not in resumed_loop(off, replace(given, certify=True)).record(off).to_dict()


# the noisy evaluator, slow while it certifies (iteration -1), saying so in a marker file
SLOW_AT_CERTIFY = NOISY_EVAL + textwrap.dedent(
    """\
    import time
    if os.environ["AUTORESEARCH_ITERATION"] == "-1":
        open(os.environ["CERTIFY_MARK"], "a").write("x")
        time.sleep(1)
    """
)


def test_a_first_ctrl_c_while_certifying_stops_it_and_the_run_stays_completed(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("scripts/noisy.py", SLOW_AT_CERTIFY)
    repo.write("value.txt", "0\n")
    repo.mission("missions/noisy", sandbox=sandbox_text("python3 scripts/noisy.py", unboxed=True))
    (tmp_path / "agent.py").write_text(AGENT.replace("VALUE", "10"))
    mark = tmp_path / "certifying"
    env = {**os.environ, **GIT_ENV, "NOISE_STATE": str(tmp_path / "n"), "CERTIFY_MARK": str(mark)}
    agent = f"cmd:{sys.executable} {tmp_path / 'agent.py'}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoresearch", "run", "missions/noisy", "--agent", agent, *ARGS],
        cwd=repo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    until(mark.exists, 60, "the certification started")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err  # the run completed; only its certification stopped
    assert "certification stopped; the run is as it was" in err
    assert json.loads(out)["status"] == "completed"
    assert 1 <= len(certify_rows(repo)) < 8  # the readings taken stay: certify resumes
    assert not RepoPaths(repo.root).run(RUN).certification.exists()
