"""Honest numbers (trust.md): every view of a supervised run reports a commit at the mean of its
unselected readings with a 95 % interval and n – status (text and --json), the end-of-run
summary, the live progress lines, manifest.json, results.tsv, the report and the review
evidence – checked against the readings in the journal, on a real `autoresearch run` with a
`cmd:` agent and a noisy evaluator; a deterministic evaluator's views show no interval."""

from __future__ import annotations

import json
import math
import sqlite3
import statistics
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autoresearch.noise import t_quantile
from autoresearch.scale import block_spread
from helpers import Repo, cli, git, run_noisy

# a `cmd:` agent: iteration 1 sets value.txt to 10 (a clear gain), 2 to 10.3 (about the same),
# 3 to 20 (another clear gain)
AGENT = textwrap.dedent(
    """\
    import json, os, subprocess
    value = {"1": "10", "2": "10.3", "3": "20"}[os.environ["AUTORESEARCH_ITERATION"]]
    open("value.txt", "w").write(value + "\\n")
    subprocess.run(["git", "commit", "-qam", "value to " + value], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    with open(os.environ["AUTORESEARCH_CANDIDATE_FILE"], "w") as f:
        json.dump({"status": "candidate", "candidate_commit": head.stdout.strip(),
                   "base_commit": os.environ["AUTORESEARCH_BASE_COMMIT"],
                   "description": "value to " + value, "notes": [],
                   "created_at": "2026-01-01T00:00:00Z"}, f)
    """
)
RUN = "missions-noisy-h"
# the readings that stand for a commit: never those that won its keep (selected for luck)
REFERENCE = {"baseline", "incumbent", "confirm"}


class Journal:
    """The journal's readings, read with plain SQL: the expected numbers come from here."""

    def __init__(self, root: Path) -> None:
        conn = sqlite3.connect(root / ".autoresearch" / "journal.sqlite3")
        try:
            self.rows = list(
                conn.execute(
                    "SELECT iteration, role, commit_sha, score FROM evaluations WHERE run_id = ? "
                    "AND status = 'pass' AND score IS NOT NULL ORDER BY id",
                    (RUN,),
                )
            )
            self.iterations = {
                i: (kind, decision, base, cand, kept)
                for i, kind, decision, base, cand, kept in conn.execute(
                    "SELECT iteration, kind, decision, base_commit, candidate_commit, "
                    "kept_commit FROM iterations WHERE run_id = ?",
                    (RUN,),
                )
            }
        finally:
            conn.close()

    def commit_of(self, iteration: int) -> str:
        kind, _, base, candidate, _ = self.iterations[iteration]
        return str(base if kind == "baseline" else candidate)

    def scores(self, commit: str, through: int | None = None) -> list[float]:
        mine = [(role, s) for i, role, c, s in self.rows if c == commit and (through is None or i <= through)]  # fmt: skip
        return [s for role, s in mine if role in REFERENCE] or [s for _, s in mine]

    def sd(self) -> tuple[float, int]:
        """The spread within blocks: each commit's readings of one iteration (scale.py)."""
        blocks: dict[tuple[str, int], list[float]] = {}
        for iteration, _, commit, score in self.rows:
            blocks.setdefault((commit, iteration), []).append(score)
        spread = block_spread(blocks.values())
        return spread.sd, spread.df

    def expected(self, commit: str) -> tuple[float, float, int]:
        """(mean, half-width of the 95 % interval, n) of a commit now."""
        scores = self.scores(commit)
        sd, df = self.sd()
        half = t_quantile(0.975, df) * sd / math.sqrt(len(scores))
        return statistics.fmean(scores), half, len(scores)


def shown(mean: float, half: float, n: int) -> str:
    """How a text view prints it: two significant digits of the half-width, the mean to match."""
    decimals = max(1 - math.floor(math.log10(half)), 0)
    return f"{mean:.{decimals}f} ± {half:.{decimals}f} (n={n})"


def same(interval: dict[str, Any], expected: tuple[float, float, int]) -> bool:
    mean, half, n = expected
    return (
        interval["n"] == n
        and interval["mean"] == pytest.approx(mean, rel=1e-12)
        and (interval["high"] - interval["low"]) / 2 == pytest.approx(half, rel=1e-3)
    )


@pytest.fixture
def noisy_run(repo: Repo, tmp_path: Path) -> tuple[Repo, dict[str, Any], str]:
    # --no-certify: the live lines are checked against the journal's readings as the loop
    # left them (an end-of-run certification adds readings to the pooled spread afterwards)
    args = ("--run-tag", "H", "--max-iterations", "3", "--json", "--no-certify")
    done = run_noisy(repo, tmp_path, AGENT, *args, timeout=600)
    assert done.returncode == 0, done.stderr
    return repo, json.loads(done.stdout), done.stderr


def test_every_view_reports_the_incumbents_mean_with_its_interval(
    noisy_run: tuple[Repo, dict[str, Any], str],
) -> None:
    repo, summary, progress = noisy_run
    j = Journal(repo.root)
    run_dir = repo.root / ".autoresearch" / "runs" / RUN
    manifest = json.loads((run_dir / "manifest.json").read_text())
    baseline, kept = manifest["baseline_commit"], manifest["last_kept_commit"]
    assert kept != baseline  # value 10 against 0, sd 1: kept
    base_x, best_x = j.expected(baseline), j.expected(kept)
    assert base_x[2] >= 3  # the calibration readings at least

    # manifest.json: last_kept_score is the kept mean (as before); its interval is additive
    assert manifest["last_kept_score"] == pytest.approx(best_x[0], rel=1e-12)
    assert same(manifest["last_kept_interval"], best_x)

    # the end-of-run summary (run --json) and status --json agree with the readings
    status = json.loads(cli("status", RUN, "--json", cwd=repo.root).stdout)
    for view in (summary, status):
        assert view["best_score"] == pytest.approx(best_x[0], rel=1e-12)
        assert view["baseline_score"] == pytest.approx(base_x[0], rel=1e-12)
        assert same(view["best_interval"], best_x) and same(view["baseline_interval"], base_x)
    # each row: its commit's mean now, never its first (lucky) reading
    for entry in status["iterations"]:
        commit = j.commit_of(entry["iteration"])
        assert same(entry["estimate"], j.expected(commit)), entry["iteration"]

    # status text: the header and every row print mean ± half-width (n)
    text = cli("status", RUN, cwd=repo.root).stdout
    assert f"baseline:   {shown(*base_x)}   best: {shown(*best_x)}   " in text
    for entry in status["iterations"]:
        row = next(r for r in text.splitlines() if r.startswith(f"{entry['iteration']}  "))
        assert shown(*j.expected(j.commit_of(entry["iteration"]))) in row
    listing = cli("status", cwd=repo.root).stdout
    assert shown(*base_x) in listing and shown(*best_x) in listing

    # results.tsv, an append-only log: each row at its commit's mean as of its decision
    tsv = Path(manifest["results_file"]).read_text().splitlines()
    assert tsv[0] == "iteration\tcommit\tpass\tscore\tstatus\tdescription"
    for line in tsv[1:]:
        cells = line.split("\t")
        iteration = int(cells[0])
        expected = statistics.fmean(j.scores(j.commit_of(iteration), through=iteration))
        assert float(cells[3]) == pytest.approx(expected, rel=1e-12), line

    # the live progress: the best after a keep is the kept mean, not the winning reading
    last_keep = max(i for i, it in j.iterations.items() if it[1] == "keep")
    keep_commit = j.commit_of(last_keep)
    assert keep_commit == kept
    line = next(r for r in progress.splitlines() if r.lstrip().startswith(f"{last_keep}  keep"))
    if last_keep == max(j.iterations):  # nothing measured since: the spread is today's
        assert f"best {shown(*j.expected(kept))}" in line
    assert f"(n={j.expected(kept)[2]})" in line

    # the report (JSON, its printed lines, the HTML page) shows the same numbers
    report = json.loads(cli("report", RUN, "--json", cwd=repo.root).stdout)
    assert report["best"] == pytest.approx(best_x[0], rel=1e-12)
    assert report["baseline"] == pytest.approx(base_x[0], rel=1e-12)
    assert same(report["best_interval"], best_x) and same(report["baseline_interval"], base_x)
    assert report["improvement"] == pytest.approx(best_x[0] - base_x[0])
    lines = cli("report", RUN, cwd=repo.root).stdout
    assert f"{shown(*base_x)} → {shown(*best_x)}" in lines
    page = Path(report["report_file"]).read_text()
    assert f"{shown(*base_x)} → {shown(*best_x)}".replace("-", "−") in page

    # the review branch's evidence: before and after, with their intervals
    done = cli("finalize", RUN, "--single", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    branch = json.loads(done.stdout)["branches"][0]["name"]
    message = git(repo.root, "log", "-1", "--format=%B", branch)
    assert f"Before: {shown(*base_x)} (" in message
    assert f"After: {shown(*best_x)} (" in message


def test_a_deterministic_evaluators_views_show_plain_numbers(repo: Repo, tmp_path: Path) -> None:
    """Zero spread: each commit's value is its reading exactly, printed as before (no ±)."""
    args = ("--run-tag", "H", "--max-iterations", "2")
    done = run_noisy(repo, tmp_path, AGENT, *args, env={"NOISE_SD": "0"}, value="0.1")
    assert done.returncode == 0, done.stderr
    # 3 readings of 0.1 average to 0.10000000000000002 with fsum / n: the value is 0.1
    assert "baseline     0.1\n" in done.stdout and "best         10.3 (higher" in done.stdout
    assert "±" not in done.stdout + done.stderr
    status = json.loads(cli("status", RUN, "--json", cwd=repo.root).stdout)
    assert (status["baseline_score"], status["best_score"]) == (0.1, 10.3)
    assert status["baseline_interval"]["n"] == 3
    assert status["baseline_interval"]["low"] == status["baseline_interval"]["high"]
    text = cli("status", RUN, cwd=repo.root).stdout
    assert "baseline:   0.1   best: 10.3   " in text and "±" not in text
    rows = [r.split()[:4] for r in text.splitlines()[-3:]]
    assert rows == [["0", "baseline", "pass", "0.1"], ["1", "keep", "pass", "10"],
                    ["2", "keep", "pass", "10.3"]]  # fmt: skip
    tsv = (repo.root / ".autoresearch" / "worktrees" / RUN / "results.tsv").read_text()
    assert tsv.splitlines()[1].split("\t")[3] == "0.1" and "±" not in tsv
    report = cli("report", RUN, cwd=repo.root).stdout
    assert "0.1 → 10.3" in report and "±" not in report
    manifest = json.loads(
        (repo.root / ".autoresearch" / "runs" / RUN / "manifest.json").read_text()
    )
    kept = manifest["last_kept_interval"]
    assert kept["low"] == kept["high"] == manifest["last_kept_score"] == 10.3
