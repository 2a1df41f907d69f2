"""The offline agent on a frontier run (issue 33): a session started from an elite searches
around that elite's values with the step its line of descent learnt, on a real repository."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from autoresearch.agents import AgentConfig, make_agent
from autoresearch.agents.tuning import Birth, Trial, line_of, step_size
from autoresearch.contracts.tune import tried_values
from autoresearch.journal import iteration_records, search
from autoresearch.states import DecisionKind, RunStatus
from autoresearch.supervisor.loop import LoopLimits, StopSignal, run_loop
from autoresearch.supervisor.prepare import prepare
from helpers import QuietObserver, git, make_repo

# Rastrigin in two dimensions: many local minima, so the frontier keeps several hills
EVALUATOR = """\
import math, params
x = [params.X0, params.X1]
print(f"METRIC f={10 * len(x) + sum(v * v - 10 * math.cos(2 * math.pi * v) for v in x):.10g}")
"""
SANDBOX = f"""\
---
evaluator:
  command: {sys.executable} eval.py
  format: metric
  metric: f
  direction: lower
tune:
  file: params.py
  parameters:
    X0: {{min: -5.0, max: 5.0}}
    X1: {{min: -5.0, max: 5.0}}
---
Only edit params.py.
"""
STEP = re.compile(r"^step (\S+) over (\d+) of (\d+) trials$", re.MULTILINE)


def test_a_frontier_session_gets_its_parents_line_step_and_values(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("params.py", "X0 = 1.3\nX1 = -2.2\n")
    repo.write("eval.py", EVALUATOR)
    mission = repo.mission(sandbox=SANDBOX)
    limits = LoopLimits(max_iterations=16, strategy="frontier", archive_size=4)
    with prepare(mission, run_tag="L1") as h:
        agent = make_agent(AgentConfig("offline", seed=4))
        outcome = run_loop(h, agent, limits, QuietObserver(), StopSignal())
        its = iteration_records.all_iterations(h.journal, h.run_id)
        parents = search.parents(h.journal, h.run_id)
        shown = {p: git(h.worktree, "show", f"{p}:params.py") for p in set(parents.values())}
    assert outcome.status == RunStatus.COMPLETED
    trials: list[Trial] = []
    births: dict[str, Birth] = {}
    shorter = 0
    for it in its[1:]:
        parent = parents[it.iteration]
        assert it.agent is not None and it.agent.log_file is not None
        log = Path(it.agent.log_file).read_text()
        line = line_of(trials, births, parent)
        assert STEP.findall(log) == [(f"{step_size(line):.6g}", str(len(line)), str(len(trials)))]
        incumbent = json.loads(log.splitlines()[0].removeprefix("incumbent "))
        assert [f"X{i} = {incumbent[f'X{i}']}" for i in (0, 1)] == shown[parent].splitlines()
        shorter += step_size(line) != step_size(trials)
        values = tried_values(it.artifact_notes)
        assert values is not None and it.decision is not None
        trials.append(Trial(values, it.decision, it.base_commit, it.iteration))
        if it.decision == DecisionKind.KEEP and it.kept_commit and it.base_commit:
            births[it.kept_commit] = Birth(it.kept_commit, it.base_commit, it.iteration)
    assert shorter > 0  # some session branched off and searched with its own line's step
