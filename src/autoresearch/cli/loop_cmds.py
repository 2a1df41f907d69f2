"""`run`, `demo` and the loop continuation used by `resume`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from autoresearch.cli.common import (
    EXIT_RECORDED_FAILURE,
    agent_options,
    emit_json,
    lane_options,
    limit_options,
    loop_settings,
    warn,
)
from autoresearch.states import ExecutorKind

if TYPE_CHECKING:
    from autoresearch.contracts.loop import LoopSettings
    from autoresearch.supervisor.executor import Executor
    from autoresearch.supervisor.options import LoopPlan

JSON_HELP = "Print one JSON object on stdout at the end (progress goes to stderr)."


@click.command()
@click.argument("mission_dir", type=click.Path(path_type=Path))
@limit_options(resumed=False)
@click.option("--run-tag", help="Run tag (default: UTC YYYYMMDDTHHMMSSZ).")
@lane_options
@agent_options
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def run(ctx: click.Context, /, mission_dir: Path, **options: Any) -> None:
    """Prepare a run, then loop: agent session → artifact → evaluation → decision."""
    from autoresearch.supervisor.executor import measure_through
    from autoresearch.supervisor.options import new_loop
    from autoresearch.supervisor.prepare import prepare, uncommitted_note, unknown_key_notes

    plan = new_loop(loop_settings(options, options["max_iterations"]), mission_dir)
    note = uncommitted_note(mission_dir)
    if note:
        warn(f"autoresearch: {note}")
    for line in unknown_key_notes(mission_dir):
        warn(f"autoresearch: {line}")
    executor = _checked_executor(plan, mission_dir)  # a refusal leaves no run behind
    try:
        measure = measure_through(executor) if executor is not None else None
        tag = options["run_tag"]
        with prepare(mission_dir, tag, loop=plan.record(), measure_with=measure) as handle:
            _drive(ctx, handle, plan, options["as_json"], executor=executor)
    finally:
        if executor is not None:
            executor.shutdown()


def _checked_executor(plan: LoopPlan, mission_dir: Path) -> Executor | None:
    """A Ray run's executor, connected and checked before the run exists: the baseline is
    measured through it, where every candidate is."""
    if plan.where is None or plan.where.executor != ExecutorKind.RAY:
        return None
    from autoresearch.supervisor.ray_executor import for_mission

    return for_mission(mission_dir, plan.where.address, max(1, plan.limits.lanes))


@click.command()
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@click.option(
    "--iterations",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="Iterations the offline agent runs.",
)
@click.option("--seed", type=int, help="Seed of the offline agent (default: the mission's).")
@click.option(
    "--lanes",
    type=click.IntRange(min=1, max=64),
    help="Sessions at once, on the mission tune-sgd-lanes: the same job with a bigger "
    "compute budget, each lane tuning its own share of the hyperparameters, two readings "
    "at once (its evaluation.slots: the loss times nothing).",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def demo(
    ctx: click.Context,
    directory: Path | None,
    iterations: int,
    seed: int | None,
    lanes: int | None,
    as_json: bool,
) -> None:
    """Create an example repository and run the loop on it with the offline agent.

    DIRECTORY (default: a new temporary folder) must not exist or be empty. The example is a
    small SGD training script whose hyperparameters the offline agent tunes to lower the
    validation loss. --iterations counts over all lanes.
    """
    from autoresearch.agents import AgentConfig
    from autoresearch.demo import DEMO_MISSION, LANES_MISSION, create_demo_repo
    from autoresearch.supervisor.loop import LoopLimits
    from autoresearch.supervisor.options import LoopPlan
    from autoresearch.supervisor.prepare import prepare

    mission_dir = create_demo_repo(directory, LANES_MISSION if lanes else DEMO_MISSION)
    warn(f"demo repository: {mission_dir.parent.parent}")
    limits = LoopLimits(
        max_iterations=iterations, max_noops=5, max_agent_failures=3, lanes=lanes or 0
    )
    plan = LoopPlan(AgentConfig("offline", seed=seed), limits)
    with prepare(mission_dir, None, loop=plan.record()) as handle:
        _drive(ctx, handle, plan, as_json, demo=True)


def continue_loop(ctx: click.Context, handle: Any, given: LoopSettings, as_json: bool) -> None:
    """Drive a re-armed run on: each option given wins over the recorded one.

    `--json` prints the manifest (as `resume --json` always does) with the loop summary
    under `loop`.
    """
    from autoresearch.supervisor.lifecycle import record_loop_options
    from autoresearch.supervisor.options import resumed_loop

    plan = resumed_loop(handle.run.loop, given)
    record_loop_options(handle, plan.record(handle.run.loop))
    _drive(ctx, handle, plan, as_json, with_manifest=True)


def _drive(
    ctx: click.Context,
    handle: Any,
    plan: LoopPlan,
    as_json: bool,
    demo: bool = False,
    with_manifest: bool = False,
    executor: Executor | None = None,
) -> None:
    from autoresearch.agents import make_agent
    from autoresearch.cli import render
    from autoresearch.cli.progress import ProgressPrinter
    from autoresearch.signals import first_signal_stops
    from autoresearch.supervisor.estimates import interval_dict, manifest
    from autoresearch.supervisor.lanes import run_lanes
    from autoresearch.supervisor.lifecycle import baseline_and_best, run_summary
    from autoresearch.supervisor.loop import (
        StopSignal,
        refuse_without_comparable_baseline,
        run_loop,
    )

    config, limits, where = plan.config, plan.limits, plan.where
    refuse_without_comparable_baseline(handle)  # before the header: no session will start
    head = baseline_and_best(handle)
    printer = ProgressPrinter(
        handle.run.direction, head.baseline, head.best,
        interval_dict(head.baseline_interval), interval_dict(head.best_interval),
    )  # fmt: skip
    printer.header(handle.run_id, config.spec, handle.run.worktree_path, limits.lanes)
    stop = StopSignal()
    # The policy holds until the command's last write: a second signal while the summary and
    # the report are written still interrupts at once (exit 130), never SIGTERM's default.
    with first_signal_stops(lambda name: _stopping(stop, name)):
        try:
            if executor is None and where is not None and where.executor == ExecutorKind.RAY:
                from autoresearch.supervisor.ray_executor import for_run

                executor = for_run(handle, where.address, max(1, limits.lanes))
            if executor is not None:  # a Ray run has lanes
                from dataclasses import replace

                limits = replace(limits, lanes=max(1, limits.lanes))
            if limits.lanes:
                outcome = run_lanes(handle, config, limits, executor, printer, stop)
            else:
                outcome = run_loop(handle, make_agent(config), limits, printer, stop)
        finally:
            printer.close()
        summary = run_summary(handle, outcome.sessions, outcome.interrupted)
        _write_report(handle)
        if as_json:
            data = summary.to_dict()
            emit_json(
                {**manifest(handle.journal, handle.run, handle.repo), "loop": data}
                if with_manifest
                else data
            )
        else:
            render.loop_summary(summary, demo=demo)
    if outcome.interrupted:
        warn(
            f"autoresearch: interrupted; the run is resumable: autoresearch resume {handle.run_id}"
        )
    if outcome.status == "failed":
        note = handle.run.stop_note
        warn(f"autoresearch: run failed: {outcome.stop_reason}" + (f": {note}" if note else ""))
        ctx.exit(EXIT_RECORDED_FAILURE)


def _write_report(handle: Any) -> None:
    """The summary points to the report: build it (a failure is a warning, never the run's)."""
    from autoresearch.errors import AutoresearchError
    from autoresearch.report import build_run_report

    try:
        result = build_run_report(handle.repo.repo_root, handle.run_id)
    except AutoresearchError as exc:
        warn(f"autoresearch: report not written: {exc.message}")
        return
    if result.warning:
        warn(f"autoresearch: {result.warning}")


def _stopping(stop: Any, name: str) -> None:
    stop.set(name)
    warn("autoresearch: stopping the current session (Ctrl-C again to abort at once)")
