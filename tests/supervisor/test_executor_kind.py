"""The executor kind is one enum (states.ExecutorKind): options, resume and the executors use
its members; the journal's `loop` record keeps the plain string."""

from __future__ import annotations

import json

import pytest

from autoresearch.agents import AgentConfig
from autoresearch.contracts.loop import LoopSettings
from autoresearch.errors import ContractError
from autoresearch.states import ExecutorKind
from autoresearch.supervisor.executor import LocalExecutor
from autoresearch.supervisor.loop import LoopLimits
from autoresearch.supervisor.options import LoopPlan, where_from


def test_where_names_its_executor_by_the_enum() -> None:
    assert where_from(None, None).executor is ExecutorKind.LOCAL
    assert where_from("ray", None).executor is ExecutorKind.RAY
    assert where_from(None, None, LoopSettings(executor="ray")).executor is ExecutorKind.RAY
    executor = LocalExecutor(1)
    try:
        assert executor.name is ExecutorKind.LOCAL
    finally:
        executor.shutdown()


def test_the_recorded_loop_keeps_the_string_and_reads_back() -> None:
    loop = LoopPlan(AgentConfig("offline"), LoopLimits(), where_from("ray", "h:1")).record()
    recorded = json.loads(json.dumps(loop.to_dict()))  # what the journal's JSON column holds
    assert (recorded["executor"], recorded["address"]) == ("ray", "h:1")
    again = LoopSettings.from_dict(recorded)
    assert where_from(None, None, again).executor is ExecutorKind.RAY


def test_an_unknown_recorded_executor_is_one_clear_error() -> None:
    with pytest.raises(ContractError, match=r"unknown executor 'slurm' \(one of: local, ray\)"):
        where_from(None, None, LoopSettings(executor="slurm"))
