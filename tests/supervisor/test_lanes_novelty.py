"""Novelty in lanes (issue 33): a lane asks step's rule before it spends a reading, so a
candidate whose tree the run already measured is never measured again there either."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from helpers import Repo, cli, sandbox_text

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"
RUN_ID = "missions-demo-t1"


def test_a_lane_never_measures_a_duplicate(repo: Repo, tmp_path: Path) -> None:
    """Every session proposes the same worse tree (value 0.5; a discard resets the lane): a
    session that starts after one of them was judged proposes a duplicate, which the
    evaluator (it appends what it measures to `count`) never sees."""
    count = tmp_path / "evaluations.txt"
    command = f'"cat value.txt >> {count} && python3 scripts/eval.py"'
    repo.mission(sandbox=sandbox_text(command=command, unboxed=True))  # `count` is outside
    done = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1", "--json",
        "--lanes", "2", "--max-iterations", "4", cwd=repo.root,
        env={"FAKE_PLAN": "worse,worse,worse,worse"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    rows = shown["iterations"][1:]
    duplicates = [it for it in rows if str(it["decision_reason"]).startswith("duplicate of")]
    assert len(rows) == 4 and duplicates, rows
    assert all(it["evaluator"] is None for it in duplicates)
    measured = count.read_text().splitlines()
    # the candidates measured are exactly those with an evaluation: none read for a duplicate
    assert measured.count("0.5") == sum(it["evaluator"] is not None for it in rows), measured
