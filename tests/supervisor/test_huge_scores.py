"""Scores of any finite magnitude never crash a run, a view, the report or certify: a score
or metric beyond ±1e100 is refused where the evaluator's output is read (not comparable)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autoresearch.contracts.evaluator_output import (
    MAX_MAGNITUDE,
    metric_verdict,
    msg_too_large,
    parse_json_verdict,
)
from helpers import Repo, cli, sandbox_text

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"
RUN_ID = "missions-demo-t1"

# the baseline scores 1; iteration 1 prints 1e308, iteration 2 -1e308, certify's readings 2
HUGE_EVAL = (
    "import json, os\n"
    "it = os.environ.get('AUTORESEARCH_ITERATION', '-1')\n"
    "score = {'0': 1.0, '1': 1e308, '2': -1e308}.get(it, 2.0)\n"
    "print(json.dumps({'pass': True, 'score': score}))\n"
)


@pytest.mark.parametrize(
    ("stdout", "score", "error"),
    [
        ('{"pass": true, "score": 1e100}', 1e100, None),
        ('{"pass": true, "score": -1e100}', -1e100, None),
        ('{"pass": true, "score": 1e308}', None, msg_too_large("score", 1e308)),
        ('{"pass": true, "score": -1.5e101}', None, msg_too_large("score", -1.5e101)),
    ],
)
def test_json_scores_beyond_the_bound_are_refused(
    stdout: str, score: float | None, error: str | None
) -> None:
    verdict = parse_json_verdict(stdout)
    assert (verdict.score, verdict.parse_error) == (score, error)


def test_metric_beyond_the_bound_is_refused_and_a_side_metric_dropped() -> None:
    ok = metric_verdict({"loss": 2.0, "huge": 1e200}, "loss", 0)
    assert ok.passed is True and ok.metrics == {"loss": 2.0}
    refused = metric_verdict({"loss": -1e300}, "loss", 0)
    assert refused.passed is None and refused.parse_error == msg_too_large("loss", -1e300)
    assert MAX_MAGNITUDE == 1e100


def test_a_run_of_huge_scores_ends_normally_and_every_view_works(repo: Repo) -> None:
    repo.write("scripts/huge.py", HUGE_EVAL)
    repo.mission(sandbox=sandbox_text("python3 scripts/huge.py"))
    done = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1", "--max-iterations", "2",
        cwd=repo.root, env={"FAKE_PLAN": "improve,worse"},  # two trees: no duplicate
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for args in (("status", RUN_ID), ("status", RUN_ID, "--json"), ("report", RUN_ID)):
        shown = cli(*args, cwd=repo.root)
        assert shown.returncode == 0, (args, shown.stderr)
    ledger = (repo.root / ".autoresearch/runs" / RUN_ID / "iteration-ledger.json").read_text()
    assert ledger.count("beyond \u00b11e+100: not comparable") == 2, ledger
    certified = cli("certify", RUN_ID, "--repeats", "2", cwd=repo.root)
    assert certified.returncode in (0, 2), certified.stderr
    assert "Traceback" not in certified.stderr and "internal error" not in certified.stderr
