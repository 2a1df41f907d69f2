"""A portfolio of agents (issue 33) on real git repositories with two `cmd:` agents: the
one that keeps more per second gets the sessions after the warm-up; resume re-derives it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from autoresearch.agents import AgentConfig, make_agent
from autoresearch.journal import iteration_records
from autoresearch.supervisor.loop import LoopLimits, StopSignal, run_loop
from autoresearch.supervisor.portfolio import WARMUP, Portfolio, recorded_name
from autoresearch.supervisor.prepare import prepare
from helpers import QuietObserver, cli, make_repo, sandbox_text

FAKE = Path(__file__).parent / "fakes/portfolio_agent.py"
# each session sleeps the same 0.2 s: a session's cost is its seconds, and without a floor
# a loaded machine's start-up jitter (0.05–1 s) decided which agent looked cheaper
GOOD = f"cmd:{sys.executable} {FAKE} 1.0 0.2"
BAD = f"cmd:{sys.executable} {FAKE} 0.0 0.2"


def portfolio() -> Portfolio:
    return Portfolio((AgentConfig(BAD), AgentConfig(GOOD)), make_agent, seed=0)


def test_the_agent_that_keeps_gets_the_sessions_after_the_warm_up(tmp_path: Path) -> None:
    mission = make_repo(tmp_path / "repo").mission(sandbox=sandbox_text(unboxed=True))
    with prepare(mission, run_tag="P1") as h:
        first = make_agent(AgentConfig(BAD))
        limits = LoopLimits(max_iterations=10)
        run_loop(h, first, limits, QuietObserver(), StopSignal(), portfolio=portfolio())
        its = iteration_records.all_iterations(h.journal, h.run_id)[1:]
    names = [it.agent.agent if it.agent else None for it in its]
    warm = 2 * WARMUP
    assert sorted(names[:warm]) == sorted([recorded_name(BAD)] * 2 + [recorded_name(GOOD)] * 2)
    # a `cmd:` agent's cost is its seconds, which a loaded machine moves: the exploration term
    # may give the agent that never keeps one more try, never most of them
    assert names[warm:].count(recorded_name(GOOD)) >= 10 - warm - 1, names


def test_a_continued_run_keeps_its_portfolio_and_re_derives_the_allocation(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission(sandbox=sandbox_text(unboxed=True))
    ran = cli("run", "missions/demo", "--agent", BAD, "--agent", GOOD, "--max-iterations", "3",
              "--no-certify", "--run-tag", "P2", cwd=repo.root)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    again = cli("continue", "missions-demo-p2", "--max-iterations", "8", "--no-certify",
                cwd=repo.root)  # fmt: skip
    assert again.returncode == 0, again.stderr
    shown = json.loads(cli("status", "missions-demo-p2", "--json", cwd=repo.root).stdout)
    names = [(row.get("agent") or {}).get("agent") for row in shown["iterations"][1:]]
    assert len(names) == 8
    # not warmed up again on continue (that would be WARMUP more); the exploration term, on
    # costs in seconds a loaded machine moves, may give it one more try
    bad = names.count(recorded_name(BAD))
    assert WARMUP <= bad <= WARMUP + 1, names
    # status (and --json) show each agent's sessions, keeps and spend, in the order given
    shares = [(a["agent"], a["sessions"], a["keeps"]) for a in shown["agents"]]
    assert shares == [(BAD, bad, 0), (GOOD, 8 - bad, 8 - bad)]
    assert all(a["seconds"] > 0 and a["cost_usd"] is None for a in shown["agents"])
    text = cli("status", "missions-demo-p2", cwd=repo.root).stdout
    assert "sessions  keeps" in text and f"{8 - bad}  " in text


def test_a_portfolio_naming_a_missing_agent_is_refused_before_anything_is_prepared(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    repo.mission(sandbox=sandbox_text(unboxed=True))
    for extra, message in (
        (["--agent", "nosuch"], "unknown agent"),
        (["--agent", GOOD], "given twice in the portfolio"),
    ):
        done = cli("run", "missions/demo", "--agent", GOOD, *extra, cwd=repo.root)
        assert done.returncode != 0
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not (repo.root / ".autoresearch/worktrees").exists()
