"""A portfolio of agents with lanes (issue 33): each lane's session gets the agent the rule
chooses over the journal and the sessions still in flight; on a real repository with two
`cmd:` agents, the one that keeps gets the sessions once both were tried."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from autoresearch.supervisor.portfolio import (
    WARMUP,
    AgentTally,
    choose,
    recorded_name,
    with_in_flight,
)
from helpers import cli, make_repo, sandbox_text

FAKE = Path(__file__).parent / "fakes/portfolio_agent.py"
# the same 0.2 s a session: a session's cost is its seconds (tests/supervisor/test_portfolio.py)
GOOD = f"cmd:{sys.executable} {FAKE} 1.0 0.2"
BAD = f"cmd:{sys.executable} {FAKE} 0.0 0.2"


def test_sessions_in_flight_count_as_tried_at_their_agents_mean() -> None:
    bad, good = AgentTally("bad"), AgentTally("good", 3, 3, 3.0, 3.0)
    # two lanes starting at once: the second does not warm up the agent the first got
    assert choose(with_in_flight([bad, AgentTally("good")], [0, 0])) == 0
    assert choose(with_in_flight([bad, AgentTally("good")], [1, 0])) == 1
    counted = with_in_flight([bad, good], [2, 1])
    # an untried agent's sessions in flight are taken at the pooled mean, a tried one's at
    # its own: neither flattered nor buried
    assert counted[0] == AgentTally("bad", 2, 2, 2.0, 2.0)
    assert counted[1] == AgentTally("good", 4, 4, 4.0, 4.0)
    assert with_in_flight([bad, good], [0, 0]) == [bad, good]


def test_lanes_give_the_sessions_to_the_agent_that_keeps(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission(sandbox=sandbox_text(unboxed=True))
    ran = cli("run", "missions/demo", "--agent", BAD, "--agent", GOOD, "--lanes", "2",
              "--max-iterations", "12", "--no-certify", "--run-tag", "PL", cwd=repo.root)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    shown = json.loads(cli("status", "missions-demo-pl", "--json", cwd=repo.root).stdout)
    names = [(row.get("agent") or {}).get("agent") for row in shown["iterations"][1:]]
    assert len(names) == 12
    bad = names.count(recorded_name(BAD))
    # both warmed up, then the one that keeps gets the sessions (a replay conflict between
    # two lanes of the good agent is a discard: its keep rate is below 1, but far above 0)
    assert WARMUP <= bad <= WARMUP + 2, names
    shares = {a["agent"]: (a["sessions"], a["keeps"]) for a in shown["agents"]}
    assert shares[BAD] == (bad, 0) and shares[GOOD][0] == 12 - bad and shares[GOOD][1] > 0
