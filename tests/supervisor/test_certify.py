"""certify end to end through the CLI: interleaved re-measurement, recorded, resumable."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sup_helpers import submit_and_step
from test_noisy_keeps import NOISY_EVAL

from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli, sandbox_text


def certify_rows(repo: Repo) -> list[tuple[str, int]]:
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        return list(
            conn.execute(
                "SELECT commit_sha, iteration FROM evaluations WHERE role = 'certify' ORDER BY id"
            )
        )
    finally:
        conn.close()


def test_certify_reports_the_improvement_with_an_interval_and_resumes(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo.write("scripts/noisy.py", NOISY_EVAL)
    repo.write("value.txt", "0\n")
    with prepare(repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py")), run_tag="C") as h:
        run_id, baseline = h.run_id, h.run.baseline_commit
        kept = submit_and_step(h, {"value.txt": "10\n"})
        assert kept.decision == "keep"
    done = cli("certify", run_id, "--repeats", "3", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["baseline"]["commit"] == baseline
    assert report["final"]["commit"] == kept.candidate_commit
    assert len(report["baseline"]["readings"]) == len(report["final"]["readings"]) == 3
    improvement = report["improvement"]
    assert improvement["low"] < 10 < improvement["high"] and improvement["low"] > 0
    assert report["significant"] is True
    rows = certify_rows(repo)
    # interleaved: baseline, final, baseline, final …; no iteration of the run
    assert [c for c, _ in rows] == [baseline, kept.candidate_commit] * 3
    assert {i for _, i in rows} == {-1}

    # resumable: what is recorded counts, only the missing readings are taken
    more = cli("certify", run_id, "--repeats", "4", cwd=repo.root)
    assert more.returncode == 0, more.stderr
    assert len(certify_rows(repo)) == 8
    assert "improvement" in more.stdout and "significant" in more.stdout

    unknown = cli("certify", "nope", cwd=repo.root)
    assert unknown.returncode == 2 and unknown.stderr.startswith("autoresearch:")
