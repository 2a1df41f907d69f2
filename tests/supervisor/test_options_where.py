"""Where a resumed or continued loop runs: a flag given now > what the run recorded > local."""

from __future__ import annotations

import pytest

from autoresearch.agents import AgentConfig
from autoresearch.contracts.loop import LoopSettings
from autoresearch.errors import ContractError
from autoresearch.supervisor.loop import LoopLimits
from autoresearch.supervisor.options import LoopPlan, Where, where_from

RAY_RUN = LoopSettings.from_dict(
    {"agent": "offline", "executor": "ray", "address": "10.0.0.5:6379"}
)
LOCAL_RUN = LoopSettings.from_dict({"agent": "offline", "executor": "local", "address": None})
OLD_RUN = LoopSettings.from_dict({"agent": "offline"})  # recorded before the executor was


@pytest.mark.parametrize(
    ("executor", "address", "recorded", "expected"),
    [
        (None, None, None, Where("local")),
        (None, None, OLD_RUN, Where("local")),
        (None, None, RAY_RUN, Where("ray", "10.0.0.5:6379")),
        (None, None, LOCAL_RUN, Where("local")),
        ("ray", None, RAY_RUN, Where("ray", "10.0.0.5:6379")),
        ("ray", None, LOCAL_RUN, Where("ray")),
        ("ray", None, None, Where("ray")),
        (None, "h:1", RAY_RUN, Where("ray", "h:1")),
        (None, "h:1", LOCAL_RUN, Where("ray", "h:1")),
        ("ray", "h:1", None, Where("ray", "h:1")),
        ("local", None, RAY_RUN, Where("local")),
    ],
)
def test_a_flag_now_wins_over_the_recorded_placement_which_wins_over_local(
    executor: str | None, address: str | None, recorded: LoopSettings | None, expected: Where
) -> None:
    assert where_from(executor, address, recorded) == expected


def test_an_address_with_the_local_executor_is_refused() -> None:
    with pytest.raises(ContractError, match="--address names a Ray cluster"):
        where_from("local", "h:1", RAY_RUN)


def test_the_placement_is_recorded_with_the_loop_and_read_back() -> None:
    loop = LoopPlan(AgentConfig("offline"), LoopLimits(), Where("ray", "h:1")).record()
    assert (loop.to_dict()["executor"], loop.to_dict()["address"]) == ("ray", "h:1")
    assert where_from(None, None, loop) == Where("ray", "h:1")
    # a continuation records over the earlier loop; without a placement it keeps the earlier
    again = LoopPlan(AgentConfig("offline"), LoopLimits(max_iterations=3)).record(loop)
    assert where_from(None, None, again) == Where("ray", "h:1")
