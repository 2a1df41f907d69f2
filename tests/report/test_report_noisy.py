"""Report and finalize on a noisy run: the numbers they show are the ones `status` shows (the
baseline's calibration mean, the kept commit's confirmed mean), never a lucky first reading nor
an incumbent re-measurement pooled into the candidate."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from report_helpers import submit_and_step

from autoresearch.journal.db import open_journal
from autoresearch.noise import Interval
from autoresearch.paths import RepoPaths
from autoresearch.report.collect import run_report
from autoresearch.supervisor.estimates import text
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.review import finalize
from autoresearch.supervisor.run_read import load_run
from helpers import Repo, cli, git, run_noisy

# a `cmd:` agent that sets value.txt to 10 and hands in the commit
AGENT = textwrap.dedent(
    """\
    import json, os, subprocess
    open("value.txt", "w").write("10\\n")
    subprocess.run(["git", "commit", "-qam", "value to 10"], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as f:
        json.dump({"status": "candidate", "candidate_commit": head.stdout.strip(),
                   "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
                   "description": "value to 10", "notes": [],
                   "created_at": "2026-01-01T00:00:00Z"}, f)
    """
)
RUN = "missions-noisy-n"


def test_report_kept_table_and_finalize_show_the_numbers_status_shows(
    repo: Repo, tmp_path: Path
) -> None:
    done = run_noisy(repo, tmp_path, AGENT, "--run-tag", "N", "--max-iterations", "1", "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(cli("status", RUN, "--json", cwd=repo.root).stdout)
    assert status["counts"].get("keep") == 1
    best, baseline = status["best_score"], status["baseline_score"]
    assert status["best_interval"]["n"] >= 2  # confirmed by fresh readings

    report = json.loads(cli("report", RUN, "--json", cwd=repo.root).stdout)
    assert report["best"] == best  # not the lucky reading, nor pooled with the incumbent's
    assert report["baseline"] == baseline
    # the run was certified at its end: the improvement is its paired change, status's too
    assert status["improvement"]["paired"] is True
    assert report["improvement"] == status["improvement"]["change"]

    with open_journal(repo.root, 5.0) as journal:
        data = run_report(journal, RepoPaths(repo.root), load_run(journal, RUN))
    [kept] = data.kept
    assert (kept.score_before, kept.score_after) == (baseline, best)
    # the kept row's readings are its own commit's: no re-measurement of the baseline in them
    [row] = [r for r in data.rows if r.number == 1]
    assert min(row.readings) > 5

    result = finalize(repo.root, RUN, single=True)
    message = git(repo.root, "log", "-1", "--format=%B", result.branches[0].name)
    # each with its interval: the numbers status prints
    before = text(baseline, Interval.from_dict(status["baseline_interval"]))
    after = text(best, Interval.from_dict(status["best_interval"]))
    assert "±" in before and "±" in after
    assert f"Before: {before} (" in message and f"After: {after} (" in message
    assert f"iteration 1: {before} -> {after}" in message


def test_finalize_masks_secrets_in_every_commit_message(
    mission_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-" + "a1" * 12
    monkeypatch.setenv("MY_SERVICE_TOKEN", "hunter2-hunter2")
    root = mission_dir.parent.parent
    with prepare(mission_dir, run_tag="S") as h:
        submit_and_step(h, {"value.txt": "5\n"}, f"used {key} and hunter2-hunter2")
        run_id = h.run_id
    for single in (False, True):
        result = finalize(root, run_id, single=single, dry_run=True)
        [branch] = result.branches
        assert branch.head is not None
        message = git(root, "log", "-1", "--format=%B", branch.head)
        assert key not in message and "hunter2-hunter2" not in message, message
        assert "used [REDACTED] and [REDACTED]" in message
