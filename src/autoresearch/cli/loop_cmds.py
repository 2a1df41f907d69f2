"""`run`, `demo` and the loop continuation used by `resume`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from autoresearch.cli.common import EXIT_RECORDED_FAILURE, emit_json, warn
from autoresearch.decide import DEFAULT_MAX_AGENT_FAILURES, DEFAULT_MAX_NOOPS
from autoresearch.states import ExecutorKind

JSON_HELP = "Print one JSON object on stdout at the end (progress goes to stderr)."


def lane_options(func: Any) -> Any:
    """`run`'s parallel lanes and budgets (`resume`/`continue` override the recorded ones)."""
    for option in reversed(
        [
            click.option(
                "--lanes",
                type=click.IntRange(min=1, max=64),
                help="Agent sessions at once, each in its own worktree and lane branch; "
                "evaluations share sandbox.md's evaluation.slots (default 1).",
            ),
            click.option(
                "--executor",
                type=click.Choice([kind.value for kind in ExecutorKind]),
                help="Where sessions and evaluations run: this machine (default) or the "
                "nodes of a Ray cluster (pip install 'autoresearch[ray]'); resume/continue "
                "reuse the recorded one.",
            ),
            click.option(
                "--address",
                help="The Ray cluster to join (host:port of `ray start --head`); default: "
                "RAY_ADDRESS, else a Ray instance on this machine.",
            ),
            click.option(
                "--budget-usd",
                type=click.FloatRange(min=0, min_open=True),
                help="Stop once the agents' reported cost reaches this (all lanes).",
            ),
            click.option(
                "--budget-tokens",
                type=click.IntRange(min=1),
                help="Stop once the agents' input + output tokens reach this (all lanes).",
            ),
            click.option(
                "--budget-hours",
                type=click.FloatRange(min=0, min_open=True),
                help="Stop once this many hours have passed since the run was prepared.",
            ),
        ]
    ):
        func = option(func)
    return func


def agent_options(func: Any) -> Any:
    """`run`'s options for tuning the chosen agent (model, extra arguments, turns, seed)."""
    for option in reversed(
        [
            click.option("--model", help="Model for the agent (codex, claude, aider)."),
            click.option(
                "--agent-arg",
                "agent_args",
                multiple=True,
                help="Extra argument for the agent's command line (repeatable).",
            ),
            click.option("--max-turns", type=click.IntRange(min=1), help="claude --max-turns."),
            click.option(
                "--seed", type=int, help="Seed of the offline agent (default: tune.seed)."
            ),
        ]
    ):
        func = option(func)
    return func


@click.command()
@click.argument("mission_dir", type=click.Path(path_type=Path))
@click.option(
    "--agent",
    "agent_spec",
    required=True,
    help="codex | claude | aider | offline | cmd:<shell command>",
)
@click.option("--max-iterations", type=click.IntRange(min=1), help="Complete after N iterations.")
@click.option(
    "--max-noops",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_NOOPS,
    show_default=True,
    help="Stop after N noops in a row (0: never).",
)
@click.option(
    "--max-agent-failures",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_AGENT_FAILURES,
    show_default=True,
    help="Fail the run after N failed sessions in a row that produced nothing (0: never).",
)
@click.option(
    "--agent-timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds before a session is stopped (its work is saved as a patch).",
)
@click.option("--run-tag", help="Run tag (default: UTC YYYYMMDDTHHMMSSZ).")
@lane_options
@agent_options
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def run(ctx: click.Context, /, mission_dir: Path, agent_spec: str, **options: Any) -> None:
    """Prepare a run, then loop: agent session → artifact → evaluation → decision."""
    from autoresearch.supervisor.options import limits_from, loop_record, where_from
    from autoresearch.supervisor.prepare import prepare, uncommitted_note, unknown_key_notes

    config = _agent_config(agent_spec, options)
    _check_offline_mission(config.spec, mission_dir)
    where = where_from(options.get("executor"), options.get("address"))
    _check_executor(where)
    note = uncommitted_note(mission_dir)
    if note:
        warn(f"autoresearch: {note}")
    for line in unknown_key_notes(mission_dir):
        warn(f"autoresearch: {line}")
    limits = limits_from(options)
    loop = loop_record(config, limits, where=where)
    with prepare(mission_dir, options["run_tag"], loop=loop) as handle:
        _drive(ctx, handle, config, limits, options["as_json"], where=where)


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
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def demo(
    ctx: click.Context, directory: Path | None, iterations: int, seed: int | None, as_json: bool
) -> None:
    """Create an example repository and run the loop on it with the offline agent.

    DIRECTORY (default: a new temporary folder) must not exist or be empty. The example is a
    small SGD training script whose hyperparameters the offline agent tunes to lower the
    validation loss.
    """
    from autoresearch.agents import AgentConfig
    from autoresearch.demo import create_demo_repo
    from autoresearch.supervisor.loop import LoopLimits
    from autoresearch.supervisor.options import loop_record
    from autoresearch.supervisor.prepare import prepare

    mission_dir = create_demo_repo(directory)
    warn(f"demo repository: {mission_dir.parent.parent}")
    config = AgentConfig("offline", seed=seed)
    limits = LoopLimits(max_iterations=iterations, max_noops=5, max_agent_failures=3)
    with prepare(mission_dir, None, loop=loop_record(config, limits)) as handle:
        _drive(ctx, handle, config, limits, as_json, demo=True)


def continue_loop(ctx: click.Context, handle: Any, spec: str, given: dict[str, Any]) -> None:
    """Drive a re-armed run on: each option given wins over the recorded one.

    `--json` prints the manifest (as `resume --json` always does) with the loop summary
    under `loop`.
    """
    from autoresearch.agents import require_installed, validate_spec
    from autoresearch.supervisor.lifecycle import record_loop_options
    from autoresearch.supervisor.options import loop_record, resumed_loop, where_from

    require_installed(validate_spec(spec))
    where = where_from(given.get("executor"), given.get("address"), handle.run.loop)
    _check_executor(where)
    config, limits = resumed_loop(handle.run.loop, spec, given)
    record_loop_options(handle, loop_record(config, limits, handle.run.loop, where))
    _drive(
        ctx, handle, config, limits, bool(given.get("as_json")), with_manifest=True,
        where=where,
    )  # fmt: skip


def _check_executor(where: Any) -> None:
    """Refuse `--executor ray` without Ray before anything is prepared."""
    if where.executor == ExecutorKind.RAY:
        from autoresearch.supervisor.ray_executor import import_ray

        import_ray()


def _agent_config(spec: str, options: dict[str, Any]) -> Any:
    from autoresearch.agents import AgentConfig, require_installed, validate_spec

    require_installed(validate_spec(spec))
    return AgentConfig(
        spec=validate_spec(spec),
        model=options.get("model"),
        args=tuple(options.get("agent_args") or ()),
        max_turns=options.get("max_turns"),
        seed=options.get("seed"),
    )


def _check_offline_mission(spec: str, mission_dir: Path) -> None:
    if spec != "offline":
        return
    from autoresearch.errors import ContractError
    from autoresearch.mission import load_mission

    if load_mission(mission_dir).sandbox.tune is None:
        raise ContractError(
            "the offline agent needs a `tune:` block in sandbox.md naming the numeric "
            "parameters to tune (see README: Write your own mission)"
        )


def _drive(
    ctx: click.Context,
    handle: Any,
    config: Any,
    limits: Any,
    as_json: bool,
    demo: bool = False,
    with_manifest: bool = False,
    where: Any = None,
) -> None:
    from autoresearch.agents import make_agent
    from autoresearch.cli import render
    from autoresearch.cli.progress import ProgressPrinter
    from autoresearch.journal.views import manifest
    from autoresearch.signals import first_signal_stops
    from autoresearch.supervisor.lanes import run_lanes
    from autoresearch.supervisor.lifecycle import baseline_and_best, run_summary
    from autoresearch.supervisor.loop import (
        StopSignal,
        refuse_without_comparable_baseline,
        run_loop,
    )

    refuse_without_comparable_baseline(handle)  # before the header: no session will start
    printer = ProgressPrinter(handle.run.direction, *baseline_and_best(handle))
    printer.header(handle.run_id, config.spec, handle.run.worktree_path, limits.lanes)
    stop = StopSignal()
    try:
        with first_signal_stops(lambda name: _stopping(stop, name)):
            executor = None
            if where is not None and where.executor == ExecutorKind.RAY:
                from dataclasses import replace

                from autoresearch.supervisor.ray_executor import for_run

                executor = for_run(handle, where.address)
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
        emit_json(
            {**manifest(handle.run, handle.repo), "loop": summary} if with_manifest else summary
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
