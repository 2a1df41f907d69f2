"""The Ray that autoresearch starts itself runs without the observability nobody reads in a run.

A run connects with `log_to_driver=False` and no dashboard, so what Ray's processes keep
collecting for its dashboard, its state API and its debug files costs CPU on the nodes every
second and tells no one anything: each Ray process reports its task events every second, its
metrics to the node's agent, timings of its event loop, and a raylet writes a debug dump
every 10 s. `QUIET_SYSTEM_CONFIG` turns these off, each a setting of Ray's own
(`src/ray/common/ray_config_def.h`, documented there as observability only). What a user loses
on such a Ray: `ray list tasks` and the dashboard's task and metrics views stay empty, and
`debug_state.txt` is not written. Scheduling, health checks and node-loss detection are
untouched.

A system config is fixed when a cluster's head starts, so only a Ray autoresearch starts gets
it: a cluster a user started (`--address`, RAY_ADDRESS, or the latest `ray start` on this
machine that Ray itself joins) keeps its own settings; `ray start --head --system-config`
gives it the same (docs/supervisor.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import ModuleType
from typing import Final

QUIET_SYSTEM_CONFIG: Final[Mapping[str, int | bool]] = {
    # task state events, sent by every worker and driver each second: `ray list tasks`
    "task_events_report_interval_ms": 0,
    # Ray's metrics (Prometheus export through the node's agent)
    "enable_metrics_collection": False,
    # timings of every event-loop handler (debug_state.txt, slow-handler warnings)
    "event_stats": False,
    # the raylet's and GCS's debug_state.txt, rewritten every 10 s
    "debug_dump_period_milliseconds": 0,
}


def start_local(ray: ModuleType, options: Mapping[str, object]) -> None:
    """Start Ray on this machine quiet, or join the Ray that Ray's own rules find for no
    address (RAY_ADDRESS, the latest `ray start` here) as it is: Ray refuses a system config
    for a cluster it joins, and says so before it connects."""
    if os.environ.get("RAY_ADDRESS", "").strip():
        # a cluster is named: joined as it is (a `ray://` client's server would refuse the
        # settings with a ConnectionError, not the ValueError below)
        ray.init(**options)
        return
    try:
        ray.init(**options, _system_config=dict(QUIET_SYSTEM_CONFIG))
    except ValueError as exc:
        if "_system_config" not in str(exc):
            raise
        ray.init(**options)
