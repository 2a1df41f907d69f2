"""The live line of `autoresearch run`: why a discard, descriptions cut to the terminal, what runs."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from autoresearch.cli.progress import decision_text
from helpers import Repo, cli, sandbox_text

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'agents/fakes/cmd_agent.py'}"
LONG = "tighten the inner loop of the tokenizer so that every batch " * 3
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.mark.parametrize(
    ("decision", "evaluator", "reason", "expected"),
    [
        ("discard", {"status": "fail", "timed_out": False}, "x", "discard (fail)"),
        ("discard", {"status": "error", "timed_out": True}, "x", "discard (timeout)"),
        ("discard", {"status": "error", "timed_out": False}, "x", "discard (error)"),
        ("discard", {"status": "pass", "timed_out": False}, "x", "discard"),  # not better
        # never measured: the pinned reason
        ("discard", None, "replay conflict", "discard (replay conflict)"),
        ("discard", None, "harness changed", "discard (harness changed)"),
        ("discard", None, None, "discard"),
        ("keep", {"status": "pass"}, "x", "keep"),
        ("noop", None, "candidate made no change", "noop"),
        ("ambiguous", {"status": "pass"}, "x", "ambiguous"),
    ],
)
def test_decision_text(
    decision: str, evaluator: dict[str, Any] | None, reason: str | None, expected: str
) -> None:
    assert decision_text(decision, evaluator, reason) == expected


def run(repo: Repo, plan: str, **env: str) -> list[str]:
    repo.mission(sandbox=sandbox_text(extra="  timeout_seconds: 1\n"))
    iterations = str(len(plan.split(",")))
    done = cli("run", "missions/demo", "--agent", CMD_AGENT, "--max-iterations", iterations,
               cwd=repo.root, env={"FAKE_PLAN": plan, "FAKE_DESCRIPTION": LONG, "COLUMNS": "100",
                                   **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return ANSI.sub("", done.stderr).replace("\r", "\n").splitlines()


def test_a_discard_says_why_and_descriptions_fit_the_terminal(repo: Repo) -> None:
    lines = run(repo, "improve,eval:fail,eval:hang,evalcrash,worse")
    rows = {int(line.split()[0]): line for line in lines if re.match(r"\s+\d+\s", line)}
    assert [rows[i].split()[1] for i in range(1, 6)] == ["keep", *["discard"] * 4]
    assert "discard (fail)" in rows[2] and "discard (timeout)" in rows[3]
    assert "discard (error)" in rows[4]
    assert "(" not in rows[5].split("best")[0]  # measured and worse: nothing to explain
    for row in rows.values():  # no terminal: no width to fit, a bounded description
        assert row.endswith("…") and LONG[:120] not in row and LONG[:100] in row, row


def test_the_spinner_says_whether_the_agent_or_the_evaluator_runs(repo: Repo) -> None:
    # FORCE_COLOR makes rich treat the pipe as a terminal: the spinner is drawn
    lines = run(repo, "improve", FORCE_COLOR="1")
    assert any("iteration 1: agent cmd running…" in line for line in lines)
    assert any("iteration 1: evaluator running…" in line for line in lines)
    (row,) = [line for line in lines if re.match(r"\s+1\s+keep", line)]
    assert len(row) == 100 and row.endswith("…")  # cut to the terminal's width


def test_a_continued_run_names_its_baseline_not_its_best(repo: Repo) -> None:
    # the header once printed the last kept score as the baseline of a resumed run
    lines = run(repo, "improve")
    (base,) = [line for line in lines if line.strip().startswith("baseline ")]
    run_id = json.loads(cli("status", "--json", cwd=repo.root).stdout)["runs"][0]["run_id"]
    done = cli("continue", run_id, "--max-iterations", "+1", "--agent", CMD_AGENT,
               cwd=repo.root, env={"FAKE_PLAN": "worse"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    later = ANSI.sub("", done.stderr).splitlines()
    assert [line for line in later if line.strip().startswith("baseline ")] == [base]
    (best,) = [line.split()[-1] for line in later if line.strip().startswith("best so far ")]
    status = cli("status", "--json", cwd=repo.root).stdout
    assert best != base.split()[1] and best in status
