"""Every view of a certified run agrees with its paired certification (#34): a real `run`
whose machine speeds up once the run starts iterating (after its baseline was read) and
slows down half-way through the certification at its end. The report's headline, status
(text and --json), MCP run_status and the summary after `run` show certify's paired change,
never the difference of the pooled means, which the speed-up inflated."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from autoresearch.journal.db import open_journal
from autoresearch.mcp.schemas import RunDetailsOutput
from autoresearch.paths import RepoPaths
from autoresearch.report.collect import run_report
from autoresearch.report.model import improvement
from autoresearch.supervisor.certify import Certification, level_moved
from autoresearch.supervisor.lifecycle import run_details
from autoresearch.supervisor.run_read import load_run
from helpers import NOISY_EVAL, Repo, cli, run_noisy
from supervisor.test_certify_at_end import AGENT, RUN

# The noisy evaluator (higher is better) on a machine whose level is 0 while the baseline is
# read at prepare, +5 from the first iteration on, and -5 from the certification's fifth
# reading on (its certify readings counted in a file of their own).
DRIFTING_EVAL = NOISY_EVAL.replace(
    "print(",
    textwrap.dedent(
        """\
        iteration = int(os.environ["AUTORESEARCH_ITERATION"])
        level = 0.0 if iteration == 0 else 8.0
        if iteration == -1:
            path = state + ".certify"
            c = int(open(path).read()) if os.path.exists(path) else 0
            open(path, "w").write(str(c + 1))
            level = 5.0 if c < 4 else -5.0
        value += level
        print("""
    ),
)


@pytest.fixture
def drifted(repo: Repo, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """A run of one iteration (value 0 → 10, truly +10) certified at its end."""
    done = run_noisy(repo, tmp_path, AGENT.replace("VALUE", "10"), "--run-tag", "E",
                     "--max-iterations", "1", eval_source=DRIFTING_EVAL)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "autoresearch: certified: improvement +" in done.stderr
    return done


def test_every_view_of_a_certified_run_shows_its_paired_change(
    repo: Repo, drifted: subprocess.CompletedProcess[str]
) -> None:
    path = RepoPaths(repo.root).run(RUN).certification
    certified = Certification.from_json(json.loads(path.read_text()))
    paired = certified.improvement
    assert paired is not None and paired.mean == pytest.approx(10, abs=2)  # the truth: +10
    with open_journal(repo.root, 5.0) as journal:
        data = run_report(journal, RepoPaths(repo.root), load_run(journal, RUN))
    # the pooled means mix the baseline's readings at level 0 with the best's at level +5
    pooled = data.best_score - data.baseline_score  # type: ignore[operator]
    assert pooled > paired.high
    headline = improvement(data)
    assert headline is not None and headline.paired
    assert headline.change == pytest.approx(paired.mean, rel=1e-12)
    assert headline.interval == paired
    # report --json's `improvement` is that figure
    report = json.loads(cli("report", RUN, "--json", cwd=repo.root).stdout)
    assert report["improvement"] == pytest.approx(paired.mean, rel=1e-12)
    # status --json, MCP run_status and the summary after `run` carry it, said to be paired
    status = json.loads(cli("status", RUN, "--json", cwd=repo.root).stdout)
    assert status["improvement"]["change"] == pytest.approx(paired.mean, rel=1e-12)
    assert status["improvement"]["paired"] is True
    mcp = RunDetailsOutput.model_validate(run_details(repo.root, RUN).to_dict())
    assert mcp.improvement == status["improvement"]
    assert f"improvement {paired.signed_text()}" in drifted.stdout
    text = cli("status", RUN, cwd=repo.root).stdout
    assert f"certified:  improvement {paired.signed_text()} (paired; better is +)\n" in text
    assert "unpaired" not in text
    # the baseline read ~5 in certify's first round and ~-5 in its last: said once, where the
    # certification is shown (the run's notes, the report's facts, `certify` itself)
    moved = level_moved(certified)
    assert moved is not None and moved.startswith("the baseline read ")
    assert f"autoresearch: {moved}" in drifted.stderr
    assert ("drift", moved) in data.facts
    again = cli("certify", RUN, "--repeats", "4", cwd=repo.root)
    assert again.returncode == 0, again.stderr
    assert f"  {moved}" in again.stdout.splitlines()


def test_an_uncertified_run_says_its_improvement_is_unpaired(repo: Repo, tmp_path: Path) -> None:
    done = run_noisy(repo, tmp_path, AGENT.replace("VALUE", "10"), "--run-tag", "E",
                     "--max-iterations", "1", "--no-certify", eval_source=DRIFTING_EVAL)  # fmt: skip
    assert done.returncode == 0, done.stderr
    status = json.loads(cli("status", RUN, "--json", cwd=repo.root).stdout)
    found = status["improvement"]
    assert found["paired"] is False and status["certified_improvement"] is None
    assert found["change"] == pytest.approx(status["best_score"] - status["baseline_score"])
    report = json.loads(cli("report", RUN, "--json", cwd=repo.root).stdout)
    assert report["improvement"] == found["change"]
    said = "(unpaired: means of readings taken at other moments; better is +)"
    shown = [line for line in done.stdout.splitlines() if line.startswith("improvement")]
    assert len(shown) == 1 and shown[0].endswith(said)
    assert (
        f"improvement: {shown[0].split(maxsplit=1)[1]}" in cli("status", RUN, cwd=repo.root).stdout
    )
    assert said in cli("report", RUN, cwd=repo.root).stdout
