"""Budgets over all lanes: `--budget-usd`, `--budget-tokens` and sandbox.md's `budget:` stop
`run --lanes K` with `budget exhausted (<which>)`, and the summary shows each lane's spend.
The agent is the fake `claude` CLI on PATH, which reports its cost and tokens the way claude
does (0.0125 USD and 465 tokens a session)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from helpers import Repo, cli, sandbox_text

FAKES = Path(__file__).parents[1] / "agents/fakes"
RUN_ID = "missions-demo-t1"
SESSION_USD, SESSION_TOKENS = 0.0125, 465
LANES = 2


@pytest.mark.parametrize(
    ("flags", "sandbox_budget", "which"),
    [
        (["--budget-usd", "0.03"], "", "usd"),
        # sandbox.md's keys apply; a flag overrides its own key only (usd 0.01 would stop first)
        (["--budget-usd", "1"], "budget:\n  usd: 0.01\n  tokens: 1000\n", "tokens"),
        (["--budget-tokens", "1000"], "budget:\n  tokens: 100000\n", "tokens"),
    ],
)
def test_a_budget_over_all_lanes_stops_the_run_and_each_lane_shows_its_spend(
    repo: Repo, flags: list[str], sandbox_budget: str, which: str
) -> None:
    repo.mission(sandbox=sandbox_text(extra=sandbox_budget))
    env = {"PATH": f"{FAKES}{os.pathsep}{os.environ['PATH']}"}
    done = cli("run", "missions/demo", "--agent", "claude", "--run-tag", "T1", "--json",
               "--lanes", str(LANES), "--max-iterations", "12", *flags,
               cwd=repo.root, env=env, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    reason = f"budget exhausted ({which})"
    assert (summary["status"], summary["stop_reason"]) == ("stopped", reason)
    lanes = {lane["lane"]: lane for lane in summary["lanes"]}
    assert set(lanes) == {1, 2}
    spent_usd = sum(lane["cost_usd"] or 0 for lane in lanes.values())
    spent_tokens = sum(lane["tokens"] for lane in lanes.values())
    # the lanes' spend adds up to the run's, and every lane spent its own
    assert spent_usd == pytest.approx(summary["totals"]["cost_usd"])
    totals = summary["totals"]
    assert spent_tokens == totals["input_tokens"] + totals["output_tokens"]
    # each lane's row adds up what its own sessions reported (a session the stop ended
    # reported nothing)
    status = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    reported: dict[int, list[Any]] = {1: [], 2: []}
    for it in status["iterations"][1:]:
        reported[it["agent"]["lane"]].append(it["agent"].get("cost_usd"))
    for number, lane in lanes.items():
        costs = [c for c in reported[number] if c is not None]
        assert costs and lane["iterations"] == len(reported[number])
        assert lane["cost_usd"] == pytest.approx(SESSION_USD * len(costs))
        assert lane["tokens"] == SESSION_TOKENS * len(costs)
    # the budget was reached over all lanes together, and no lane ran far past it: at most
    # the sessions that had already ended when the budget was reached were still judged
    limit, spent, per_session = {
        "usd": (0.03, spent_usd, SESSION_USD),
        "tokens": (1000, spent_tokens, SESSION_TOKENS),
    }[which]
    assert limit <= spent < limit + LANES * per_session
    table = cli("status", RUN_ID, cwd=repo.root).stdout  # the summary's rows, as a table
    for number, lane in lanes.items():
        row = next(line for line in table.splitlines() if line.startswith(f"{number}  "))
        assert f"${lane['cost_usd']:.4f}  {lane['tokens']}" in row, table
