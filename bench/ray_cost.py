"""Benchmark: what a task costs on the Ray executor beside the local one, in one run.

    python3 dev.py bench --only ray          (or: .venv/bin/python bench/ray_cost.py)

A real Ray cluster on this machine (a head and a second node, as the tests start it) runs the
same agent sessions (a `cmd:` agent that commits one line) and evaluations (a shell evaluator)
one at a time as `LocalExecutor` runs them in threads. Printed per kind: the median wall time
per task on each executor, Ray's added cost (ray − local) and the ratio; the first Ray task of
a run (it ships the repository's history as a bundle) is reported on its own, and so is the
executor's start (it connects and starts every node's workers).

`--reference SRC` (another build's src/, e.g. `git archive main src | tar -x -C DIR`; may
be given more than once) runs an A/B: each of `--rounds` rounds measures those builds and then
this one, each in its own process and on its own cluster, and prints the added cost of each
side by side with the load before each round. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import targets  # bench/targets.py: the targets, printed together at the end

from autoresearch import git
from autoresearch.agents import AgentConfig
from autoresearch.supervisor.executor import AgentTask, EvaluationTask, Executor, LocalExecutor
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare

SANDBOX = """---
evaluator:
  command: echo METRIC loss=$(cat value.txt)
  format: metric
  metric: loss
  direction: lower
---
bench
"""
# a session that changes one file and commits it: a bundle goes each way
AGENT = AgentConfig(
    "cmd:echo $AUTORESEARCH_ITERATION >> notes.txt && git add notes.txt && "
    "git -c user.name=bench -c user.email=bench@example.com commit -qm note"
)


def make_mission(root: Path) -> Path:
    root.mkdir(parents=True)
    git.init_repo(root)
    (root / "value.txt").write_text("5\n")
    (root / "missions/bench").mkdir(parents=True)
    (root / "missions/bench/mission.md").write_text("bench\n")
    (root / "missions/bench/sandbox.md").write_text(SANDBOX)
    git.commit_all(root, "bench")
    return root / "missions/bench"


def agent_task(h: RunHandle, n: int, scratch: Path) -> AgentTask:
    return AgentTask(
        run_id=h.run_id, lane=1, iteration=n, base_commit=h.run.last_kept_commit or "",
        worktree=h.worktree, branch=h.run.branch_name, instructions_file=h.paths.instructions,
        candidate_file=h.paths.candidate, log_path=scratch / f"agent-{n}.log",
        leftover_patch=scratch / f"leftover-{n}.patch", agent=AGENT, timeout=60,
        sandbox=h.run.sandbox,
    )  # fmt: skip


def evaluation_task(h: RunHandle, n: int, scratch: Path) -> EvaluationTask:
    return EvaluationTask(
        run_id=h.run_id, lane=1, iteration=n, commit=h.run.last_kept_commit or "",
        tree=h.worktree, relative_dir=h.run.sandbox.relative_dir,
        evaluator=h.evaluator, log_path=scratch / f"eval-{n}.log",
    )  # fmt: skip


def timed(submit: Callable[[], Future[Any]]) -> float:
    t0 = time.perf_counter()
    submit().result(timeout=300)
    return time.perf_counter() - t0


def measure(ex: Executor, h: RunHandle, scratch: Path, count: int) -> dict[str, list[float]]:
    """Wall seconds per task, one at a time; the session's commit is reset away after each."""
    base = h.run.last_kept_commit or ""
    out: dict[str, list[float]] = {"agent": [], "evaluation": []}
    for n in range(1, count + 1):
        agent, evaluation = agent_task(h, n, scratch), evaluation_task(h, n, scratch)
        out["agent"].append(timed(lambda: ex.submit_agent(agent, threading.Event(), _no)))  # noqa: B023
        git.checkout_branch_at(h.worktree, h.run.branch_name, base)
        out["evaluation"].append(
            timed(lambda: ex.submit_evaluation(evaluation, threading.Event(), _no))  # noqa: B023
        )
    return out


def _no(pgid: int) -> None:
    pass


def start_cluster(
    base: Path, log_monitor: bool = True, system_config: dict[str, Any] | None = None
) -> Any:
    """A head and a second node of 2 CPUs each; without the head's log monitor when
    `log_monitor` is False (`ray start --include-log-monitor=False`: a run sets
    `log_to_driver=False`, so nobody reads what it forwards; ~6 CPU ms a second idle); the
    head started with `system_config` (`ray start --head --system-config`; the nodes get it
    from the head), by default the one a run gives a Ray it starts itself."""
    from ray.cluster_utils import Cluster

    os.environ.update(RAY_TMPDIR=str(base), RAY_USAGE_STATS_ENABLED="0")
    head: dict[str, Any] = {"num_cpus": 2, "include_dashboard": False}
    head["_system_config"] = system_config_of(None) if system_config is None else system_config
    if not log_monitor:
        head["include_log_monitor"] = False  # the second node never starts one
    cluster = Cluster(initialize_head=True, head_node_args=head)
    cluster.add_node(num_cpus=2, env_vars={"AUTORESEARCH_RAY_DIR": str(base / "node-b")})
    cluster.wait_for_nodes()
    return cluster


# a build's QUIET_SYSTEM_CONFIG, read in a process that imports that build (none before it had one)
SYSTEM_CONFIG = """import json
try:
    from autoresearch.supervisor.ray_quiet import QUIET_SYSTEM_CONFIG as config
except ImportError:
    config = {}
print(json.dumps(dict(config)))
"""


def system_config_of(src: str | None) -> dict[str, Any]:
    """The system config the build in `src` (None: this one) gives a Ray it starts itself:
    the bench starts each build's cluster as that build would start its own."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-c", SYSTEM_CONFIG], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    config: dict[str, Any] = json.loads(done.stdout)
    return config


Figures = dict[str, Any]  # one build's measurement, as `--json` prints it


ADDED_TARGET_MS = 300.0  # issue 36: <= 0.3 s added per agent task and per evaluation


def run(count: int) -> list[targets.Verdict]:
    """Print this build's added cost per task; its verdicts on the issue's target."""
    figures = measure_build(count)
    report(figures, count)
    return [
        targets.at_most(f"Ray's added time per {kind} task (median)", added_ms(figures, kind),
                        ADDED_TARGET_MS, " ms")
        for kind in ("agent", "evaluation")
    ]  # fmt: skip


def measure_build(count: int) -> Figures:
    """This build's tasks on both executors: the times of each kind, the first Ray task's and
    the executor's start."""
    os.environ["AUTORESEARCH_RAY_DIR"] = ""
    from autoresearch.supervisor.ray_executor import RayExecutor

    with tempfile.TemporaryDirectory(prefix="ar-bench-ray-", dir="/tmp") as tmp:
        base = Path(tmp)
        os.environ["AUTORESEARCH_RAY_DIR"] = str(base / "head")
        h = prepare(make_mission(base / "repo"), run_tag="ray-bench")
        scratch = base / "logs"
        scratch.mkdir()
        local = LocalExecutor(1, 1)
        try:
            here = measure(local, h, scratch, count)
        finally:
            local.shutdown()
        cluster = start_cluster(base / "ray")
        try:
            t0 = time.perf_counter()
            ray_ex = RayExecutor(cluster.address)  # connects and warms the nodes' workers
            started = time.perf_counter() - t0
            try:
                first = measure(ray_ex, h, scratch, 1)
                there = measure(ray_ex, h, scratch, count)
            finally:
                ray_ex.shutdown()
        finally:
            cluster.shutdown()
            h.close()
            shutil.rmtree(base, ignore_errors=True)
    return {"here": here, "there": there, "first": first, "started": started}


def added_ms(figures: Figures, kind: str) -> float:
    """Ray's median time for a task of `kind` less the local executor's, in ms."""
    here, there = figures["here"][kind], figures["there"][kind]
    return float(statistics.median(there) - statistics.median(here)) * 1000


def report(figures: Figures, count: int) -> None:
    here, there, first = figures["here"], figures["there"], figures["first"]
    print(f"\nRay's added cost per task ({count} tasks of each kind, one at a time; "
          "reference: LocalExecutor in the same run)")  # fmt: skip
    print(f"{'task':<12} {'local ms':>9} {'ray ms':>9} {'added ms':>9} {'ray/local':>10} "
          f"{'first ray ms':>13}")  # fmt: skip
    for kind in ("agent", "evaluation"):
        lo = statistics.median(here[kind]) * 1000
        ra = statistics.median(there[kind]) * 1000
        print(f"{kind:<12} {lo:>9.0f} {ra:>9.0f} {ra - lo:>9.0f} {ra / lo:>10.2f} "
              f"{first[kind][0] * 1000:>13.0f}")  # fmt: skip
    print(f"executor start (connect, every node's workers warmed): {figures['started']:.2f} s")


def build_figures(src: Path | None, count: int) -> Figures:
    """One build's figures from a process of its own that imports it from `src` (None: this
    build): the driver and every node's workers (they inherit PYTHONPATH)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(src.resolve()), env.get("PYTHONPATH")) if p
        )
    argv = [sys.executable, __file__, "--tasks", str(count), "--json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench run failed: {done.stderr[-2000:]}")
    figures: Figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def compare(references: list[Path], count: int, rounds: int) -> None:
    """The reference builds and this one in turn, `rounds` times: Ray's added ms per task
    of each build, round by round, with the load before each round, then the medians."""
    builds: dict[str, Path | None] = {f"ref {i}": ref for i, ref in enumerate(references, 1)}
    builds["this build"] = None
    added: dict[str, dict[str, list[float]]] = {b: {"agent": [], "evaluation": []} for b in builds}
    print(f"A/B: Ray's added ms per task (ray - local, medians of {count})")
    for i, ref in enumerate(references, 1):
        print(f"ref {i}: {ref}")
    print(
        f"{'round':>5} {'load':>15} "
        + " ".join(f"{b + ' ' + k:>26}" for b in builds for k in ("agent", "evaluation"))
    )
    for r in range(1, rounds + 1):
        load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        for build, src in builds.items():
            figures = build_figures(src, count)
            for kind in ("agent", "evaluation"):
                added[build][kind].append(added_ms(figures, kind))
        row = [f"{added[b][k][-1]:>26.0f}" for b in builds for k in ("agent", "evaluation")]
        print(f"{r:>5} {load:>15} " + " ".join(row))
    medians = [
        f"{statistics.median(added[b][k]):>26.0f}" for b in builds for k in ("agent", "evaluation")
    ]
    print(f"{'median':>21} " + " ".join(medians))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20, help="tasks of each kind")
    parser.add_argument("--reference", type=Path, action="append", help="another build's src/")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds (with --reference)")
    parser.add_argument("--json", action="store_true", help="print this build's figures as JSON")
    args = parser.parse_args()
    if args.reference:
        compare(args.reference, args.tasks, args.rounds)
    elif args.json:
        print(json.dumps(measure_build(args.tasks)))
    else:
        run(args.tasks)


if __name__ == "__main__":
    main()
