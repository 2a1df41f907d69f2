"""Plateaus (issue 33): the pure rule and what counts as a significant improvement under each
keep policy, the settings and their refusals, and `stop` / `explore` on real git repositories
with a `cmd:` agent that never improves, alone and in lanes."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from autoresearch.agents import AgentConfig, make_agent
from autoresearch.contracts.loop import LoopSettings
from autoresearch.contracts.sandbox import Plateau, parse_sandbox
from autoresearch.errors import ContractError
from autoresearch.journal import iteration_records
from autoresearch.states import DecisionKind, OnPlateau, RunStatus
from autoresearch.supervisor.lanes import run_lanes
from autoresearch.supervisor.loop import LoopLimits, LoopOutcome, StopSignal, run_loop
from autoresearch.supervisor.options import resumed_loop
from autoresearch.supervisor.plateau import (
    DEFAULT_ON_PLATEAU,
    DEFAULT_PLATEAU,
    PlateauRule,
    counts_from,
    improves,
    msg_plateau,
    rule_of,
)
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.strategy import Greedy, SearchStrategy, SearchView, Start
from helpers import make_repo, sandbox_text

FLAT_AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/flat_agent.py'}"
K, D, A, N = DecisionKind.KEEP, DecisionKind.DISCARD, DecisionKind.AMBIGUOUS, DecisionKind.NOOP
E = DecisionKind.ERROR


# What a significant improvement is under each keep policy: the policy's own keep, nothing
# else. score_improvement keeps a better score (by noise.min_effect when set); noise-aware, a
# difference beyond the noise (within it: ambiguous, no improvement); pass_only knows no
# score, so acceptance (a passing candidate, kept) is its only progress.
@pytest.mark.parametrize(
    ("policy", "decision", "significant"),
    [
        ("score_improvement", K, True),  # better than the incumbent
        ("score_improvement", D, False),  # not better (or by less than min_effect)
        ("noise-aware score_improvement", K, True),  # better beyond the noise
        ("noise-aware score_improvement", A, False),  # within the noise: no improvement
        ("noise-aware score_improvement", D, False),
        ("pass_only", K, True),  # it passed: the policy's only progress
        ("pass_only", D, False),  # it failed
        ("any", N, False),  # no candidate
        ("any", E, False),  # the evaluator broke
        ("any", DecisionKind.ABORT, False),
        ("any", DecisionKind.INTERRUPTED, False),
    ],
)
def test_a_significant_improvement_is_the_keep_policys_keep(
    policy: str, decision: DecisionKind, significant: bool
) -> None:
    assert improves(decision) is significant, policy


@pytest.mark.parametrize(
    ("n", "newest_first", "reached"),
    [
        (3, [D, D, D], True),  # N in a row without a keep
        (3, [D, A, N], True),  # ambiguous and noop are no improvement either
        (3, [D, D], False),  # fewer than N counted (since the start, a continue, an explore)
        (3, [D, D, K], False),  # a keep within the last N
        (3, [K, D, D, D], False),  # the newest is a keep
        (3, [D, D, D, K], True),  # the keep is older than the window
        (1, [D], True),
        (1, [K], False),
        (3, [], False),
    ],
)
def test_a_plateau_is_n_iterations_in_a_row_without_an_improvement(
    n: int, newest_first: list[DecisionKind], reached: bool
) -> None:
    assert PlateauRule(n, OnPlateau.STOP).reached(newest_first) is reached


@pytest.mark.parametrize(
    ("given", "frozen", "rule"),
    [
        ((None, None), Plateau(), PlateauRule(DEFAULT_PLATEAU, DEFAULT_ON_PLATEAU)),
        ((None, None), Plateau(7, OnPlateau.ASK), PlateauRule(7, OnPlateau.ASK)),
        ((5, "stop"), Plateau(7, OnPlateau.ASK), PlateauRule(5, OnPlateau.STOP)),  # flags win
        ((5, None), Plateau(None, OnPlateau.ASK), PlateauRule(5, OnPlateau.ASK)),
    ],
)
def test_flags_win_over_sandbox_md_over_the_defaults(
    given: tuple[int | None, str | None], frozen: Plateau, rule: PlateauRule
) -> None:
    assert rule_of(*given, frozen) == rule


def test_the_default_is_20_iterations_then_explore() -> None:
    assert (DEFAULT_PLATEAU, DEFAULT_ON_PLATEAU) == (20, OnPlateau.EXPLORE)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ((0, None), "--plateau must be a positive whole number of iterations, not 0"),
        ((-3, None), "--plateau must be a positive whole number of iterations, not -3"),
        ((None, "wait"), "--on-plateau must be one of: explore, stop, ask (not wait)"),
    ],
)
def test_bad_flags_are_refused_in_one_line(
    given: tuple[int | None, str | None], message: str
) -> None:
    with pytest.raises(ContractError) as err:
        rule_of(*given, Plateau())
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("search", "message"),
    [
        ("  plateau: 0\n", "search.plateau must be a positive whole number of iterations."),
        ("  plateau: 2.5\n", "search.plateau must be a positive whole number of iterations."),
        ("  on_plateau: later\n", "search.on_plateau must be one of: explore, stop, ask."),
    ],
)
def test_bad_sandbox_md_settings_are_refused(search: str, message: str) -> None:
    text = sandbox_text(extra=f"search:\n{search}", unboxed=True)
    with pytest.raises(ContractError) as err:
        parse_sandbox(text)
    assert str(err.value) == f"sandbox.md frontmatter {message}"


def test_sandbox_md_sets_the_plateau() -> None:
    text = sandbox_text(extra="search:\n  plateau: 4\n  on_plateau: stop\n", unboxed=True)
    assert parse_sandbox(text).plateau == Plateau(4, OnPlateau.STOP)
    assert parse_sandbox(sandbox_text(unboxed=True)).plateau == Plateau()


def test_the_stop_reason_is_pinned() -> None:
    assert msg_plateau(12) == "plateau (no significant improvement in 12 iterations)"


class _Quiet:
    def __init__(self) -> None:
        self.notes: list[str] = []

    def session_started(self, iteration: int, lane: int = 0) -> None: ...

    def evaluation_started(self, iteration: int, lane: int = 0) -> None: ...

    def step_recorded(self, result: Any, agent: Any, lane: int = 0) -> None: ...

    def note(self, message: str) -> None:
        self.notes.append(message)

    def lanes_changed(self, lanes: Any) -> None: ...


@dataclass(frozen=True)
class _Watching(Greedy):
    """Greedy that notes, per session it starts, whether the run was exploring."""

    seen: list[bool] = field(default_factory=list)

    def start(self, view: SearchView, lane: int) -> Start:
        self.seen.append(view.exploring)
        return super().start(view, lane)


def _flat_run(
    tmp: Path, limits: LoopLimits, strategy: SearchStrategy | None = None
) -> tuple[LoopOutcome, list[DecisionKind], _Quiet]:
    repo = make_repo(tmp / "repo")
    mission = repo.mission(sandbox=sandbox_text(unboxed=True))
    quiet = _Quiet()
    with prepare(mission, run_tag="flat") as h:
        if limits.lanes:
            agent_config = AgentConfig(FLAT_AGENT)
            outcome = run_lanes(h, agent_config, limits, None, quiet, StopSignal(), strategy)
        else:
            agent = make_agent(AgentConfig(FLAT_AGENT))
            outcome = run_loop(h, agent, limits, quiet, StopSignal(), strategy)
        decisions = [
            it.decision
            for it in iteration_records.all_iterations(h.journal, h.run_id)
            if it.iteration
        ]
    return outcome, [DecisionKind(d) for d in decisions if d], quiet


def test_stop_ends_a_run_that_never_improves_after_n_iterations(tmp_path: Path) -> None:
    limits = LoopLimits(max_iterations=30, plateau=3, on_plateau="stop")
    outcome, decisions, _ = _flat_run(tmp_path, limits)
    assert (outcome.status, outcome.stop_reason) == (RunStatus.COMPLETED, msg_plateau(3))
    assert decisions == [D, D, D]  # three evaluations, not thirty


def test_stop_over_lanes_counts_the_runs_iterations(tmp_path: Path) -> None:
    limits = LoopLimits(max_iterations=30, plateau=4, on_plateau="stop", lanes=2)
    outcome, decisions, _ = _flat_run(tmp_path, limits)
    assert (outcome.status, outcome.stop_reason) == (RunStatus.COMPLETED, msg_plateau(4))
    # the sessions in flight when the plateau is reached finish and are judged
    assert 4 <= len(decisions) <= 4 + 1 and set(decisions) == {D}


def test_explore_tells_the_next_sessions_and_counts_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "sessions.log"
    monkeypatch.setenv("FLAT_LOG", str(log))
    limits = LoopLimits(max_iterations=7, plateau=3, on_plateau="explore")
    watching = _Watching()
    outcome, _, quiet = _flat_run(tmp_path, limits, watching)
    assert (outcome.status, outcome.stop_reason) == (
        RunStatus.COMPLETED,
        "max iterations reached (7)",
    )
    told = [line.split() for line in log.read_text().splitlines()]
    # sessions 1-3 make the plateau; 4 onward are told; the count restarts at 3, so the next
    # plateau is after 6 (the note stays until something is kept)
    assert told == [
        ["1", "-"], ["2", "-"], ["3", "-"], ["4", "explore"], ["5", "explore"],
        ["6", "explore"], ["7", "explore"],
    ]  # fmt: skip
    # a strategy with several parents would start sessions 4-7 from others: the view says so
    assert watching.seen == [False] * 3 + [True] * 4
    explored = [n for n in quiet.notes if n.startswith(msg_plateau(3))]
    assert len(explored) == 2  # after iteration 3 and after iteration 6


def test_explore_over_lanes_reaches_the_lanes_next_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "sessions.log"
    monkeypatch.setenv("FLAT_LOG", str(log))
    limits = LoopLimits(max_iterations=7, plateau=3, on_plateau="explore", lanes=2)
    outcome, decisions, _ = _flat_run(tmp_path, limits)
    assert outcome.stop_reason == "max iterations reached (7)" and len(decisions) == 7
    told = [line.split()[1] for line in log.read_text().splitlines()]
    # the first three judged make the plateau (one more may have started meanwhile); every
    # session started after it is told
    first = told.index("explore")
    assert first >= 3 and set(told[first:]) == {"explore"} and len(told) == 7


def test_a_resume_keeps_the_plateaus_state_and_takes_new_settings() -> None:
    recorded = LoopSettings(agent="cmd:true", plateau=5, on_plateau="ask", plateau_from=9)
    recorded = replace(recorded, paused="paused: …", counts_from=4)
    plan = resumed_loop(recorded, LoopSettings(agent="cmd:true", plateau=8))
    assert (plan.limits.plateau, plan.limits.on_plateau) == (8, "ask")
    again = plan.record(recorded)
    assert (again.plateau, again.on_plateau) == (8, "ask")
    assert (again.plateau_from, again.paused, again.counts_from) == (9, "paused: …", 4)
    assert counts_from(again) == 9
    stored = LoopSettings(agent="cmd:true").to_dict()
    assert not {"plateau", "on_plateau", "plateau_from", "paused"} & set(stored)  # as before
