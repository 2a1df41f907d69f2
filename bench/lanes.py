"""Benchmark: throughput of `run --lanes K` with a sleep-bound agent and evaluator.

    python3 dev.py bench --only lanes          (or: .venv/bin/python bench/lanes.py)

A `cmd:` agent sleeps `agent` seconds, adds a file and commits (lanes never conflict); the
evaluator sleeps `evaluate` seconds. For K = 1, 2, 4 lanes on this machine, each given the same
wall-clock work per lane, it prints iterations per minute and the ratio to one lane (the target
while agents dominate: >= 0.9·K), beside the loop without lanes. A second part makes the
evaluator dominate with one evaluation slot and checks from the evaluators' own timestamps that
no two evaluations ever overlapped. A third runs the same K = 1, 2, 4 with `--executor ray` on a
two-node Ray cluster started on this machine (when ray is installed), a fourth times
`autoresearch demo --lanes 1` and `--lanes 4` from start to end, in pairs one after the other
(`--demo-pairs`; the sleep-bound part runs `--rounds` times in turn, medians). Nothing here
is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import cluster_cpu  # bench/cluster_cpu.py
import targets  # bench/targets.py: the targets, printed together at the end

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
# the evaluator notes its machine: on Ray the node's folder (each node of the bench's cluster
# has its own), so that overlaps are counted per node, where slots count
EVALUATOR = """\
import glob, json, os, time
start = time.time()
time.sleep(float(os.environ["BENCH_EVAL_SECONDS"]))
machine = os.environ.get("AUTORESEARCH_RAY_DIR") or "local"
with open(os.environ["BENCH_EVAL_LOG"], "a") as f:
    f.write(f"{start} {time.time()} {machine}\\n")
print(json.dumps({"pass": True, "score": len(glob.glob("bonus-*.txt"))}))
"""
# the agent: note when it started, sleep, add a file of its own, commit, write the artifact
AGENT = (
    'cmd:date +%s.%N >> "$BENCH_AGENT_LOG" && sleep "$BENCH_AGENT_SECONDS" && '
    'f="bonus-$AUTORESEARCH_LANE-$AUTORESEARCH_ITERATION.txt"'
    ' && echo x > "$f" && git add "$f" && git commit -qm "add $f" && printf '
    '\'{"status": "candidate", "candidate_commit": "%s", "base_commit": "%s", '
    '"description": "add a file", "notes": [], "created_at": "2026-01-01T00:00:00Z"}\' '
    '"$(git rev-parse HEAD)" "$AUTORESEARCH_BASE_COMMIT" > "$AUTORESEARCH_CANDIDATE_FILE"'
)
SANDBOX = """---
evaluator:
  command: {python} eval.py
  format: json
evaluation:
  slots: 1
---
bench
"""


def _sh(cwd: Path, *args: str) -> None:
    subprocess.run(args, cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def _repo(root: Path) -> Path:
    root.mkdir(parents=True)
    _sh(root, "git", "init", "-q", "-b", "main")
    (root / "eval.py").write_text(EVALUATOR)
    (root / "mission.md").write_text("Add files.\n")
    # the exact interpreter: a `python3` on PATH may be a version manager's shim that takes
    # longer to start than the evaluator runs
    (root / "sandbox.md").write_text(SANDBOX.format(python=shlex.quote(sys.executable)))
    _sh(root, "git", "add", "-A")
    _sh(root, "git", "commit", "-q", "-m", "bench mission")
    return root


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def run_once(
    work: Path,
    name: str,
    lanes: int,
    iterations: int,
    agent: float,
    evaluate: float,
    extra: tuple[str, ...] = (),
    log: Path | None = None,
    agent_log: Path | None = None,
) -> dict[str, float]:
    """One `autoresearch run` (lanes 0: the loop without lanes); iterations per minute from the
    first session's start to the last decision (prepare, the baseline and the executor's
    start-up left out; `startup` is the time from the baseline's decision to that start), the
    number of evaluations that started before an earlier one on the same machine (Ray: node)
    ended, `overlaps` (with one slot: a violation), and those on different nodes, `across`
    (legal: slots count per node)."""
    root = _repo(work / name)
    log = log or work / f"{name}.evals"
    agent_log = agent_log or work / f"{name}.agents"
    log.write_text("")
    agent_log.write_text("")
    env = {**os.environ, **GIT_ENV, "BENCH_AGENT_SECONDS": str(agent),
           "BENCH_EVAL_SECONDS": str(evaluate), "BENCH_EVAL_LOG": str(log),
           "BENCH_AGENT_LOG": str(agent_log)}  # fmt: skip
    # unboxed: the agent and the evaluator note their start times in logs outside the repository
    argv = [sys.executable, "-m", "autoresearch", "run", ".", "--agent", AGENT, "--json",
            "--max-iterations", str(iterations), "--max-noops", "0",
            "--sandbox", "none"]  # fmt: skip
    if lanes:
        argv += ["--lanes", str(lanes), *extra]
    with cluster_cpu.Sampler() as sampler:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True,
                              check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"bench run failed: {done.stderr[-2000:]}")
    summary = json.loads(done.stdout)
    ledger = json.loads(Path(summary["ledger_file"]).read_text())
    its = ledger["entries"]  # the baseline first
    first = min(float(line) for line in agent_log.read_text().split())
    last = _stamp(its[-1]["created_at"])
    wall = last - first
    spans = [line.split() for line in log.read_text().splitlines()]
    overlaps, across = count_overlaps([(float(s), float(e), where) for s, e, where in spans])
    row = {"per_minute": 60 * (len(its) - 1) / wall, "wall": wall,
           "startup": first - _stamp(its[0]["created_at"]),
           "evaluations": len(spans) - 1, "overlaps": overlaps, "across": across}  # fmt: skip
    return row | cpu_row(sampler.between(first, last), len(its) - 1)


def cpu_row(spent: cluster_cpu.Split, iterations: int) -> dict[str, float]:
    """CPU ms per iteration of every process of the run and its cluster, from the first
    session's start to the last decision (`cpu_ms`), and by what spent it (`cpu <label>`)."""
    row = {f"cpu {name}": 1000 * value / iterations for name, value in spent.items() if value}
    return {"cpu_ms": sum(row.values()), **row}


def count_overlaps(spans: list[tuple[float, float, str]]) -> tuple[int, int]:
    """(evaluations that started before an earlier one on their machine ended, evaluations
    that overlapped only ones on other machines) of (start, end, machine) spans."""
    same = across = 0
    latest: dict[str, float] = {}  # machine -> the latest end so far
    for start, end, where in sorted(spans):
        if start < latest.get(where, float("-inf")):
            same += 1
        elif any(start < t for w, t in latest.items() if w != where):
            across += 1
        latest[where] = max(latest.get(where, float("-inf")), end)
    return same, across


HEADER = (
    f"{'lanes':>10} {'iter/min':>9} {'ratio':>6} {'target':>7} {'overlaps':>9} {'across':>7} "
    f"{'start s':>9} {'CPU ms/it':>10}"
)
OVERLAPS = (
    "overlaps: evaluations that started while another ran on the same machine (on Ray: the "
    "same node), a violation of one slot; across: ones that overlapped only evaluations on "
    "other nodes (allowed: slots count per node)"
)


def _table(rows: dict[int, dict[str, float]], one: float) -> None:
    for k, row in rows.items():
        print(f"{k:>10} {row['per_minute']:9.1f} {row['per_minute'] / one:6.2f} "
              f"{0.9 * k:7.1f} {row['overlaps']:9d} {row['across']:7d} "
              f"{row['startup']:9.2f} {row['cpu_ms']:10.0f}")  # fmt: skip


def on_ray(work: Path, per_lane: int, agent: float, evaluate: float, rounds: int = 1,
           reference: Path | None = None,
           log_monitor: bool = True) -> list[targets.Verdict]:  # fmt: skip
    """K = 1, 2, 4 with `--executor ray` on a head and a second node of 2 CPUs each, and one
    local lane beside them, `rounds` times in turn (medians, and each round's ratios, to one
    Ray lane and to one local lane: the issue's target is 4 Ray lanes >= 3.6x one local
    lane). With a `reference` (the src/ folder of another build, e.g. `git archive main |
    tar -x -C DIR`), each round runs it and then this build, each on a fresh cluster whose
    workers import it, its head started with the system config that build gives a Ray it
    starts itself (`ray_quiet.QUIET_SYSTEM_CONFIG`; Ray's defaults before it had one): an
    A/B side by side under the same load. Each run's CPU per
    iteration is summed over every process of the run and the cluster (`cluster_cpu`)."""
    try:
        import ray_cost  # bench/ray_cost.py: the cluster the tests start
    except ImportError:
        return []
    # Ray tasks see the environment the nodes started with: the agent's and evaluator's
    # settings and one evaluation log for every Ray run (emptied before each)
    log, agent_log = work / "ray.evals", work / "ray.agents"
    os.environ.update(GIT_ENV, BENCH_AGENT_SECONDS=str(agent), BENCH_EVAL_SECONDS=str(evaluate),
                      BENCH_EVAL_LOG=str(log), BENCH_AGENT_LOG=str(agent_log),
                      AUTORESEARCH_RAY_DIR=str(work / "ray-head"))  # fmt: skip
    builds: dict[str, str | None] = {"this build": None}
    if reference is not None:
        builds = {f"reference {reference}": str(reference.resolve()), "this build": None}
    runs: dict[str, dict[int, list[dict[str, float]]]] = {n: {1: [], 2: [], 4: []} for n in builds}
    local: list[dict[str, float]] = []
    idle: dict[str, list[cluster_cpu.Split]] = {n: [] for n in builds}
    loads = []
    before = os.environ.get("PYTHONPATH")
    try:
        for r in range(rounds):
            loads.append(_load())
            _python_path(None, before)
            local.append(run_once(work, f"local{r}", 1, per_lane, agent, evaluate))
            for b, (name, src) in enumerate(builds.items()):
                _python_path(src, before)  # the driver's and every node's workers'
                try:
                    cluster = ray_cost.start_cluster(work / f"ray{r}-{b}", log_monitor,
                                                     ray_cost.system_config_of(src))  # fmt: skip
                except ImportError:
                    print("\nlanes on Ray: skipped (pip install 'autoresearch[ray]')")
                    return []
                try:
                    idle[name].append(idle_cpu(IDLE_SECONDS))
                    extra = ("--executor", "ray", "--address", str(cluster.address))
                    for k, found in runs[name].items():
                        found.append(run_once(work, f"ray{r}-{b}-{k}", k, per_lane * k, agent,
                                              evaluate, extra, log, agent_log))  # fmt: skip
                finally:
                    cluster.shutdown()
    finally:
        _python_path(before, None)
    _ray_report(runs, local, idle, rounds)
    print("load before each round: " + "; ".join(loads))
    mine = runs["this build"]
    return [
        *(targets.at_least(f"{k} Ray lanes / 1 Ray lane (median of rounds)",
                           _median_ratio(mine[1], mine[k]), 0.9 * k) for k in (2, 4)),
        targets.at_least("4 Ray lanes / 1 local lane (median of rounds)",
                         _median_ratio(local, mine[4]), 3.6),
    ]  # fmt: skip


IDLE_SECONDS = 5.0


def idle_cpu(seconds: float) -> cluster_cpu.Split:
    """CPU ms per second of every process of a cluster just started, by label."""
    cluster_cpu.reap_orphans()
    before = cluster_cpu.snapshot()
    time.sleep(seconds)
    spent = cluster_cpu.spent([before, cluster_cpu.snapshot()])
    return {name: 1000 * v / seconds for name, v in spent.items()}


def _ray_report(
    runs: dict[str, dict[int, list[dict[str, float]]]],
    local: list[dict[str, float]],
    idle: dict[str, list[cluster_cpu.Split]],
    rounds: int,
) -> None:
    one_local = _median_row(local)
    print(f"\nlanes on a two-node Ray cluster on this machine (--executor ray), same agent "
          f"and evaluator, one slot per node, {rounds} round(s); ratio to one lane on "
          f"Ray")  # fmt: skip
    print(OVERLAPS)
    print(f"one local lane: {one_local['per_minute']:.1f} iter/min, "
          f"{one_local['cpu_ms']:.0f} CPU ms per iteration (median round)")  # fmt: skip
    for name, found_k in runs.items():
        if len(runs) > 1:
            print(f"-- {name}")
        print(HEADER)
        rows = {k: _median_row(found) for k, found in found_k.items()}
        _table(rows, rows[1]["per_minute"])
        for k in (2, 4):
            _ratios(f"Ray {k} lanes / 1 Ray lane", found_k[1], found_k[k])
            _ratios(f"Ray {k} lanes / 1 local lane", local, found_k[k])
        _cpu_split(rows, one_local)
        _idle_split(idle[name])


def _each_ratio(base: list[dict[str, float]], over: list[dict[str, float]]) -> list[float]:
    """Round by round: the throughput of `over` over that of `base`."""
    return [b["per_minute"] / a["per_minute"] for a, b in zip(base, over, strict=True)]


def _median_ratio(base: list[dict[str, float]], over: list[dict[str, float]]) -> float:
    """The median of `_each_ratio`, as `_ratios` prints it (of an even count of rounds the
    mean of the middle two: the better one alone would flatter a verdict)."""
    return statistics.median(_each_ratio(base, over))


def _ratios(what: str, base: list[dict[str, float]], over: list[dict[str, float]]) -> None:
    each = _each_ratio(base, over)
    print(f"{what}, round by round: " + ", ".join(f"{x:.2f}" for x in each)
          + f" (median {_median_ratio(base, over):.2f})")  # fmt: skip


def _cpu_split(rows: dict[int, dict[str, float]], local: dict[str, float]) -> None:
    """CPU ms per iteration by what spent it: one local lane and K Ray lanes (median rounds)."""
    columns = {"local 1": local, **{f"ray {k}": row for k, row in rows.items()}}
    names = sorted({key for row in columns.values() for key in row if key.startswith("cpu ")},
                   key=lambda key: -max(row.get(key, 0.0) for row in columns.values()))  # fmt: skip
    print("CPU ms per iteration, first session to last decision, by process (median round):")
    print(f"{'':>44}" + "".join(f"{c:>9}" for c in columns))
    for key in [n for n in names if max(abs(r.get(n, 0.0)) for r in columns.values()) >= 5]:
        print(f"{key[4:]:>44}" + "".join(f"{r.get(key, 0.0):9.0f}" for r in columns.values()))
    print(f"{'all':>44}" + "".join(f"{r['cpu_ms']:9.0f}" for r in columns.values()))


def _idle_split(found: list[cluster_cpu.Split]) -> None:
    """The cluster's own CPU, just started and idle, ms per second by process (the median of
    the rounds' totals)."""
    middle = sorted(found, key=lambda c: sum(c.values()))[len(found) // 2]
    top = sorted(middle.items(), key=lambda item: -item[1])
    parts = ", ".join(f"{n} {v:.0f}" for n, v in top if v >= 1)
    print(f"idle cluster CPU, ms/s over {IDLE_SECONDS:g} s: {sum(middle.values()):.0f} ({parts})")


def _python_path(src: str | None, rest: str | None) -> None:
    """Import autoresearch from `src` (None: this build) in the processes started from now."""
    value = os.pathsep.join(p for p in (src, rest) if p)
    if value:
        os.environ["PYTHONPATH"] = value
    else:
        os.environ.pop("PYTHONPATH", None)


def demo_once(work: Path, lanes: int) -> tuple[float, float, int]:
    """`autoresearch demo --lanes K` (its default 30 iterations): wall seconds of the whole
    command, the best loss, the readings started (one a keep made stale and stopped counts)."""
    target = work / f"demo{lanes}"
    argv = [sys.executable, "-m", "autoresearch", "demo", str(target), "--lanes", str(lanes),
            "--json"]  # fmt: skip
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=work, env={**os.environ, **GIT_ENV}, capture_output=True,
                          text=True, check=False)  # fmt: skip
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"bench demo failed: {done.stderr[-2000:]}")
    summary = json.loads(done.stdout)
    readings = len(list(target.glob(".autoresearch/runs/*/lanes/*/logs/*-evaluator-*.log")))
    return wall, float(summary["last_kept_score"]), readings


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def sleep_bound(
    work: Path, per_lane: int, agent: float, evaluate: float, rounds: int
) -> list[targets.Verdict]:
    """K = 1, 2, 4 and the loop without lanes side by side, `rounds` times in turn (the load
    of a shared machine drifts): each row is that K's median round, the ratio that of the
    medians, and each round's own 4-lane ratio is printed too."""
    print(f"\nlanes: agent sleeps {agent:g} s, evaluator {evaluate:g} s, one evaluation slot, "
          f"{per_lane} iterations per lane, {rounds} round(s)")  # fmt: skip
    runs: dict[int, list[dict[str, float]]] = {0: [], 1: [], 2: [], 4: []}
    for r in range(rounds):
        for k, found in runs.items():
            found.append(run_once(work, f"r{r}-lanes{k}", k, per_lane * max(k, 1), agent,
                                  evaluate))  # fmt: skip
    rows = {k: _median_row(found) for k, found in runs.items()}
    plain = rows.pop(0)
    one = rows[1]["per_minute"]
    print(OVERLAPS)
    print(HEADER)
    print(f"{'no lanes':>10} {plain['per_minute']:9.1f} {plain['per_minute'] / one:6.2f} "
          f"{'':>7} {plain['overlaps']:9d} {plain['across']:7d} "
          f"{plain['startup']:9.2f} {plain['cpu_ms']:10.0f}")  # fmt: skip
    _table(rows, one)
    each = [b["per_minute"] / a["per_minute"] for a, b in zip(runs[1], runs[4], strict=True)]
    print("4 lanes / 1 lane, round by round: " + ", ".join(f"{x:.2f}" for x in each))
    busy = run_once(work, "evalbound", 4, 12, agent / 4, max(evaluate, agent / 2))
    print(f"evaluator-bound, 4 lanes, 1 slot: {busy['evaluations']:.0f} evaluations, "
          f"{busy['overlaps']:.0f} overlapping, {busy['per_minute']:.1f} iter/min "
          f"(one slot allows at most {60 / max(evaluate, agent / 2):.1f})")  # fmt: skip
    return [
        targets.at_least(f"{k} local lanes / 1 local lane (median of rounds)",
                         _median_ratio(runs[1], runs[k]), 0.9 * k)
        for k in (2, 4)
    ]  # fmt: skip


def _median_row(found: list[dict[str, float]]) -> dict[str, float]:
    row = dict(sorted(found, key=lambda x: x["per_minute"])[len(found) // 2])
    row["overlaps"] = max(x["overlaps"] for x in found)  # an overlap in any round shows
    row["across"] = max(x["across"] for x in found)
    return row


def demo_pairs(work: Path, pairs: int) -> list[targets.Verdict]:
    """`demo --lanes 1` then `--lanes 4`, `pairs` times: a ratio means something only between
    neighbours on a shared machine; each pair's ratio, the load before it, the median."""
    print("\nautoresearch demo --lanes K (mission tune-sgd-lanes, 30 iterations, 2 slots)")
    print(f"{'pair':>4} {'--lanes 1':>10} {'--lanes 4':>10} {'ratio':>6} {'readings':>9}  load")
    ratios = []
    for n in range(1, pairs + 1):
        load, folder = _load(), work / f"pair{n}"
        folder.mkdir()
        one, _, r1 = demo_once(folder, 1)
        four, _, r4 = demo_once(folder, 4)
        ratios.append(one / four)
        print(f"{n:>4} {one:9.1f}s {four:9.1f}s {one / four:6.2f} {r1:>4}/{r4:<4}  {load}")
    ratios.sort()
    print(f"median {ratios[len(ratios) // 2]:.2f}x over {pairs} pair(s) "
          f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f})")  # fmt: skip
    # "measurably faster": in every pair, not only in the middle one
    return [targets.at_least("demo --lanes 4 speed-up over --lanes 1, slowest pair",
                             ratios[0], 1.0)]  # fmt: skip


def run(per_lane: int = 6, agent: float = 2.0, evaluate: float = 0.05, demo: bool = True,
        rounds: int = 3, pairs: int = 3, sleep: bool = True, ray: bool = True,
        ray_rounds: int = 3, reference: Path | None = None,
        log_monitor: bool = True) -> list[targets.Verdict]:  # fmt: skip
    """Print the parts asked for; this build's verdicts on the issue's targets."""
    verdicts: list[targets.Verdict] = []
    work = Path(tempfile.mkdtemp(prefix="ar-bench-lanes-", dir="/tmp"))  # short socket paths
    cluster_cpu.become_subreaper()  # a detached watcher's CPU is counted: it ends here
    try:
        print(f"load average {_load()}")
        if sleep:
            verdicts += sleep_bound(work, per_lane, agent, evaluate, rounds)
        if ray:
            verdicts += on_ray(work, per_lane, agent, evaluate, ray_rounds, reference, log_monitor)
        if demo:
            verdicts += demo_pairs(work, pairs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations per lane")
    parser.add_argument("--no-demo", action="store_true", help="leave out the demo's timing")
    parser.add_argument("--only-demo", action="store_true", help="only the demo's timing")
    parser.add_argument("--agent", type=float, default=2.0, help="seconds each session sleeps")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of K = 1, 2, 4 (medians)")
    parser.add_argument("--demo-pairs", type=int, default=3, help="demo --lanes 1/4 pairs")
    parser.add_argument("--only-ray", action="store_true", help="only the Ray part")
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray part")
    parser.add_argument("--ray-rounds", type=int, default=3, help="rounds of K = 1, 2, 4 on Ray")
    parser.add_argument("--reference", type=Path, help="another build's src/: the Ray part "
                        "runs it and this build in turn, each round (A/B)")  # fmt: skip
    parser.add_argument("--no-log-monitor", action="store_true",
                        help="Ray clusters without the head's log monitor "
                        "(ray start --include-log-monitor=False)")  # fmt: skip
    args = parser.parse_args()
    only = args.only_demo or args.only_ray
    verdicts = run(per_lane=3 if args.quick else 6, agent=args.agent,
        demo=not args.no_demo and not args.only_ray, rounds=max(1, args.rounds),
        pairs=max(1, args.demo_pairs), sleep=not only, ray=not args.only_demo and not args.no_ray,
        ray_rounds=max(1, args.ray_rounds), reference=args.reference,
        log_monitor=not args.no_log_monitor)  # fmt: skip
    targets.print_verdicts(verdicts)


if __name__ == "__main__":
    main()
