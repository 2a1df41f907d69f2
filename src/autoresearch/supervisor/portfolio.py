"""A portfolio of agents (`run --agent A --agent B`, issue 33): which agent the next session
gets, by kept improvement per unit of cost.

A member is an agent with its model (`--model` once per `--agent`): `claude (haiku)` and
`claude (opus)` are two members, told apart by the name their sessions record
(`member_name`).

The rule is pure (`choose` over `AgentTally`s) and reads nothing but the journal's iterations,
so a resumed run re-derives the same allocation. Cost is dollars when every session reported
them, else tokens when every session reported those, else seconds (a `cmd:` agent reports
neither). Each agent gets `WARMUP` sessions first; then the agent with the highest optimistic
gain per cost (an upper confidence bound: mean gain plus a bonus that shrinks as the agent is
tried, over its mean cost) gets the session.

With lanes (`run --lanes K`, Ray), sessions in flight are not in the journal yet: each counts
for its agent as a session at that agent's mean so far (`with_in_flight`), so that two lanes
starting at once do not both warm up the same agent. The allocation is then a function of
the journal's iterations and the agents of the sessions in flight.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from autoresearch.contracts.loop import LoopSettings
from autoresearch.errors import ContractError
from autoresearch.journal import iteration_records
from autoresearch.journal.db import Journal
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.runs import RunRecord
from autoresearch.states import DecisionKind
from autoresearch.supervisor.summary import AgentShare

# `status` reads a portfolio's shares without the agent back-ends (tests/test_import_graph.py)
if TYPE_CHECKING:
    from autoresearch.agents import AgentConfig
    from autoresearch.agents.base import Agent
    from autoresearch.supervisor.handle import RunContext

_Number = TypeVar("_Number", int, float)

WARMUP = 2  # sessions each agent gets before the rule compares them
PRIOR = 3.0  # sessions' worth of the pooled mean gain every agent starts with
EXPLORE = 1.0  # the weight of the confidence bonus: lower trusts early numbers more


@dataclass(frozen=True)
class SessionCost:
    """What one session of an agent spent and gained (gain: the kept improvement, 0 when
    nothing was kept)."""

    gain: float
    seconds: float
    usd: float | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class AgentTally:
    """One agent's sessions, keeps and spend so far."""

    spec: str
    sessions: int = 0
    keeps: int = 0
    gain: float = 0.0
    seconds: float = 0.0
    usd: float | None = None  # None: some session reported no dollars
    tokens: int | None = None  # None: some session reported no tokens

    def add(self, cost: SessionCost) -> AgentTally:
        first = self.sessions == 0
        return AgentTally(
            self.spec,
            self.sessions + 1,
            self.keeps + (cost.gain > 0),
            self.gain + cost.gain,
            self.seconds + cost.seconds,
            _sum(self.usd, cost.usd, first),
            _sum(self.tokens, cost.tokens, first),
        )


def _sum(total: _Number | None, more: _Number | None, first: bool) -> _Number | None:
    """A running total that becomes unknown once one session did not report it."""
    if more is None or (total is None and not first):
        return None
    return more if total is None else total + more


def cost_unit(tallies: Sequence[AgentTally]) -> str:
    """`usd` when every session reported dollars, `tokens` when every one reported tokens,
    else `seconds`."""
    tried = [t for t in tallies if t.sessions]
    if tried and all(t.usd is not None for t in tried):
        return "usd"
    if tried and all(t.tokens is not None for t in tried):
        return "tokens"
    return "seconds"


def spent(tally: AgentTally, unit: str) -> float:
    return float({"usd": tally.usd, "tokens": tally.tokens}.get(unit, tally.seconds) or 0.0)


def choose(tallies: Sequence[AgentTally], seed: int = 0) -> int:
    """The index of the agent the next session gets: the least tried while any has had fewer
    than WARMUP sessions, then the highest optimistic gain per cost (ties: the seed's order)."""
    least = min(range(len(tallies)), key=lambda i: tallies[i].sessions)
    if tallies[least].sessions < WARMUP:
        return least
    indexes = _bounds(tallies)
    best = max(indexes)
    tied = [i for i, value in enumerate(indexes) if math.isclose(value, best)]
    total = sum(t.sessions for t in tallies)
    return tied[random.Random(seed * 1_000_003 + total).randrange(len(tied))]


def _bounds(tallies: Sequence[AgentTally]) -> list[float]:
    """Each agent's mean gain plus its confidence bonus, over its mean cost; gains are scaled
    by the best mean gain and costs by the dearest mean cost, so the units never matter."""
    unit = cost_unit(tallies)
    total = sum(t.sessions for t in tallies)
    pooled = sum(t.gain for t in tallies) / total
    # shrunk toward the pooled mean: two unlucky warm-up sessions do not bury an agent
    gains = [(t.gain + PRIOR * pooled) / (t.sessions + PRIOR) for t in tallies]
    costs = [spent(t, unit) / t.sessions for t in tallies]
    top_gain, top_cost = max(gains) or 1.0, max(costs) or 1.0
    return [
        (gain / top_gain + EXPLORE * math.sqrt(math.log(total) / t.sessions))
        / max(cost / top_cost, 0.01)  # a free session is not infinitely good
        for t, gain, cost in zip(tallies, gains, costs, strict=True)
    ]


def recorded_name(spec: str) -> str:
    """The agent name a session of `spec` records (`cmd:` without the space after it)."""
    from autoresearch.agents import COMMAND_PREFIX, is_command

    if is_command(spec):
        return COMMAND_PREFIX + spec.strip().removeprefix(COMMAND_PREFIX).strip()
    return spec.strip()


def member_name(spec: str, model: str | None) -> str:
    """A portfolio member's name, which its sessions record: the agent's, with its model
    (`claude (haiku)`), so that one agent with two models is two members."""
    name = recorded_name(spec)
    return f"{name} ({model})" if model else name


def member_models(loop: LoopSettings) -> tuple[str | None, ...]:
    """Each portfolio agent's model: `--model` given once per agent, in order, else once for
    the first agent only (as before models were paired)."""
    if loop.models:
        return tuple(loop.models)
    return tuple(loop.model if i == 0 else None for i in range(len(loop.agents or ())))


def member_index(specs: Sequence[str], models: Sequence[str | None]) -> dict[str, int]:
    """The member each recorded agent name counts for: its member name, or its plain name
    when only one member runs that agent (sessions recorded before members had names)."""
    plain = [recorded_name(spec) for spec in specs]
    index = {name: i for i, name in enumerate(plain) if plain.count(name) == 1}
    index.update({member_name(s, m): i for i, (s, m) in enumerate(zip(specs, models, strict=True))})
    return index


def tallies_of(
    specs: Sequence[str],
    iterations: Iterable[IterationRecord],
    models: Sequence[str | None] = (),
) -> list[AgentTally]:
    """Each portfolio member's tally over a run's iterations (`models`: each member's, none
    when not given; sessions of other agents, e.g. before the run became a portfolio, count
    for none)."""
    models = tuple(models) or (None,) * len(specs)
    names = member_index(specs, models)
    tallies = [AgentTally(_shown(s, m)) for s, m in zip(specs, models, strict=True)]
    last_kept: float | None = None
    for it in iterations:
        score = it.evaluator.score if it.evaluator is not None else None
        gain = _gain(it, last_kept, score)
        if it.decision == DecisionKind.KEEP or it.iteration == 0:
            last_kept = score if isinstance(score, (int, float)) else last_kept
        index = names.get(it.agent.agent or "") if it.agent is not None else None
        if index is not None and it.agent is not None:
            usage = it.agent.usage
            tokens = _tokens(usage.input_tokens, usage.output_tokens)
            seconds = (it.agent.duration_ms or 0) / 1000
            tallies[index] = tallies[index].add(SessionCost(gain, seconds, usage.cost_usd, tokens))
    return tallies


def _shown(spec: str, model: str | None) -> str:
    """A member as status and the summary show it: the spec as given, with its model."""
    return f"{spec} ({model})" if model else spec


def _gain(it: IterationRecord, last_kept: float | None, score: float | None) -> float:
    """A kept session's improvement over the score kept before it (1 where scores cannot be
    compared: a keep is worth something)."""
    if it.iteration == 0 or it.decision != DecisionKind.KEEP:
        return 0.0
    if score is None or last_kept is None:
        return 1.0
    return abs(float(score) - float(last_kept)) or 1e-9


def _tokens(inp: int | None, out: int | None) -> int | None:
    return None if inp is None and out is None else (inp or 0) + (out or 0)


def with_in_flight(tallies: Sequence[AgentTally], in_flight: Sequence[int]) -> list[AgentTally]:
    """The tallies with `in_flight[i]` sessions of agent i still running counted in, each
    at that agent's mean so far (at the mean of all agents' sessions while it has none): an
    unfinished session neither flatters nor buries its agent, but it is counted as tried."""
    pooled = _pooled(tallies)
    out = []
    for tally, running in zip(tallies, in_flight, strict=True):
        mean = _mean(tally if tally.sessions else pooled)
        for _ in range(running):
            tally = tally.add(mean)
        out.append(tally)
    return out


def _pooled(tallies: Sequence[AgentTally]) -> AgentTally:
    pooled = AgentTally("")
    for tally in (t for t in tallies if t.sessions):
        pooled = AgentTally(
            "", pooled.sessions + tally.sessions, 0, pooled.gain + tally.gain,
            pooled.seconds + tally.seconds, _sum(pooled.usd, tally.usd, not pooled.sessions),
            _sum(pooled.tokens, tally.tokens, not pooled.sessions),
        )  # fmt: skip
    return pooled


def _mean(tally: AgentTally) -> SessionCost:
    n = tally.sessions
    if not n:
        return SessionCost(0.0, 0.0)
    usd = tally.usd / n if tally.usd is not None else None
    tokens = round(tally.tokens / n) if tally.tokens is not None else None
    return SessionCost(tally.gain / n, tally.seconds / n, usd, tokens)


def check_portfolio(
    specs: Sequence[str], models: Sequence[str] | None = None, first: str | None = None
) -> None:
    """Refuse a portfolio that cannot run before anything is prepared: `--model` given
    neither once (`first`, the first agent's) nor once per agent (`models`), or the same
    agent with the same model twice."""
    if models and len(models) != len(specs):
        raise ContractError(msg_models(len(models), len(specs)))
    if len(specs) < 2:
        return
    loop = LoopSettings(agents=tuple(specs), model=first, models=tuple(models or ()) or None)
    names = [member_name(s, m) for s, m in zip(specs, member_models(loop), strict=True)]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise ContractError(
            f"agent {twice} is given twice in the portfolio: give each once"
            " (the same agent again needs a different --model)"
        )


def msg_models(models: int, agents: int) -> str:
    return (
        f"--model is given {models} times for {agents} --agent: give it once (the first"
        " agent's) or once per --agent, in order"
    )


def agent_shares(journal: Journal, run: RunRecord) -> list[AgentShare]:
    """What status and the summary show of a portfolio run: each member's sessions, keeps and
    spend, in the order given (none for a run with one agent)."""
    loop = run.loop
    if loop is None or not loop.agents or len(loop.agents) < 2:
        return []
    every = iteration_records.all_iterations(journal, run.run_id)
    return [
        AgentShare(t.spec, t.sessions, t.keeps, t.usd, t.tokens, round(t.seconds, 3))
        for t in tallies_of(loop.agents, every, member_models(loop))
    ]


class Portfolio:
    """The members of a portfolio run (one `AgentConfig` each, its `member` its name), built
    once; `agent_for` re-reads the journal (cheap: one query per session) and applies
    `choose`. A lane's session is shipped to its executor with its member's config
    (`config_for`)."""

    def __init__(
        self, configs: Sequence[AgentConfig], build: Callable[[AgentConfig], Agent], seed: int
    ) -> None:
        self.configs = tuple(configs)
        self.agents = [build(config) for config in self.configs]
        self.seed = seed

    def agent_for(self, h: RunContext) -> Agent:
        return self.agents[self.choice(h, ())]

    def config_for(self, h: RunContext, in_flight: Sequence[AgentConfig]) -> AgentConfig:
        """The config of the member a lane's next session gets, with the sessions of
        `in_flight` (their members' configs) running."""
        return self.configs[self.choice(h, in_flight)]

    def choice(self, h: RunContext, in_flight: Sequence[AgentConfig]) -> int:
        specs = [config.spec for config in self.configs]
        models = [config.model for config in self.configs]
        tallies = tallies_of(specs, iteration_records.all_iterations(h.journal, h.run_id), models)
        running = [sum(1 for config in in_flight if config == own) for own in self.configs]
        return choose(with_in_flight(tallies, running), self.seed)
