"""The executor kind is one enum (states.ExecutorKind): options, resume and the executors use
its members; the journal's `loop` record keeps the plain string."""

from __future__ import annotations

import json

import pytest

from autoresearch.agents import AgentConfig
from autoresearch.errors import ContractError
from autoresearch.states import ExecutorKind
from autoresearch.supervisor.executor import LocalExecutor
from autoresearch.supervisor.loop import LoopLimits
from autoresearch.supervisor.options import loop_record, where_from


def test_where_names_its_executor_by_the_enum() -> None:
    assert where_from(None, None).executor is ExecutorKind.LOCAL
    assert where_from("ray", None).executor is ExecutorKind.RAY
    assert where_from(None, None, {"executor": "ray"}).executor is ExecutorKind.RAY
    executor = LocalExecutor(1)
    try:
        assert executor.name is ExecutorKind.LOCAL
    finally:
        executor.shutdown()


def test_the_recorded_loop_keeps_the_string_and_reads_back() -> None:
    loop = loop_record(AgentConfig("offline"), LoopLimits(), where=where_from("ray", "h:1"))
    recorded = json.loads(json.dumps(loop))  # what the journal's JSON column holds
    assert (recorded["executor"], recorded["address"]) == ("ray", "h:1")
    assert where_from(None, None, recorded).executor is ExecutorKind.RAY


def test_an_unknown_recorded_executor_is_one_clear_error() -> None:
    with pytest.raises(ContractError, match=r"unknown executor 'slurm' \(one of: local, ray\)"):
        where_from(None, None, {"executor": "slurm"})
