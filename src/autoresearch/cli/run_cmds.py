"""Supervisor commands: check, prepare, step, resume, stop, status, rebaseline, run, demo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from autoresearch.cli import render
from autoresearch.cli.common import (
    EXIT_RECORDED_FAILURE,
    emit_json,
    repo_root,
    warn,
    warn_baseline,
)

JSON_HELP = "Print one JSON object on stdout (logs go to stderr)."


def register(app: click.Group) -> None:
    for command in (check, prepare, step, resume, stop, status, rebaseline):
        app.add_command(command)
    from autoresearch.cli.loop_cmds import demo, run

    app.add_command(run)
    app.add_command(demo)


@click.command()
@click.argument("mission_dir", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def check(mission_dir: Path, as_json: bool) -> None:
    """Validate MISSION_DIR and print the parsed contract."""
    from autoresearch.errors import ContractError
    from autoresearch.mission import load_mission, mission_problems

    mission = load_mission(mission_dir)
    problems = mission_problems(mission)
    if problems:
        raise ContractError("; ".join(problems))
    if as_json:
        emit_json(mission.to_dict())
    else:
        render.mission(mission.to_dict())


@click.command()
@click.argument("mission_dir", type=click.Path(path_type=Path))
@click.option("--run-tag", help="Run tag (default: UTC YYYYMMDDTHHMMSSZ).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def prepare(mission_dir: Path, run_tag: str | None, as_json: bool) -> None:
    """Create the run's branch and worktree, run the baseline, write the run files."""
    from autoresearch.journal.views import manifest
    from autoresearch.supervisor.lifecycle import baseline_evaluation
    from autoresearch.supervisor.prepare import prepare as do_prepare

    with do_prepare(mission_dir, run_tag) as handle:
        data = manifest(handle.run, handle.repo)
        baseline = baseline_evaluation(handle)
    warn_baseline(data, baseline)
    if as_json:
        emit_json(data)
    else:
        render.prepared(data, baseline)


@click.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def step(ctx: click.Context, run_id: str, as_json: bool) -> None:
    """Process the run's candidate.json once (one decision)."""
    from autoresearch.supervisor.lifecycle import open_run
    from autoresearch.supervisor.step import step as do_step

    with open_run(repo_root(ctx), run_id) as handle:
        result = do_step(handle)
    if as_json:
        emit_json(result.to_dict())
    else:
        render.step_result(result.to_dict())
    if result.decision == "error":
        warn(f"autoresearch: run failed: {result.stop_reason}")
        ctx.exit(EXIT_RECORDED_FAILURE)


@click.command()
@click.argument("run_id")
@click.option("--agent", "agent_spec", help="Agent to continue with (default: the recorded one).")
@click.option("--max-iterations", type=click.IntRange(min=0), help="Stop after N iterations.")
@click.option("--agent-timeout", type=click.FloatRange(min=0, min_open=True))
@click.option(
    "--save-dirty",
    is_flag=True,
    help="Save uncommitted worktree changes as a patch under the run's logs, then clean.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def resume(
    ctx: click.Context,
    run_id: str,
    agent_spec: str | None,
    max_iterations: int | None,
    agent_timeout: float | None,
    save_dirty: bool,
    as_json: bool,
) -> None:
    """Re-check and re-arm a run; continue the loop with the given or recorded agent.

    With no agent (none given, none recorded) or --max-iterations 0 it only re-arms.
    """
    from autoresearch.agents import require_installed, validate_spec
    from autoresearch.cli.loop_cmds import continue_loop
    from autoresearch.journal.views import manifest
    from autoresearch.supervisor.lifecycle import resume as do_resume

    if agent_spec is not None:
        # refuse before anything is re-armed or recorded
        require_installed(validate_spec(agent_spec))
    outcome = do_resume(repo_root(ctx), run_id, save_dirty=save_dirty)
    with outcome.handle as handle:
        for note in outcome.notes:
            warn(f"autoresearch: {note}")
        if outcome.pending_artifact:
            warn("autoresearch: candidate.json holds an unprocessed session artifact")
        recorded = handle.run.loop or {}
        spec = agent_spec or recorded.get("agent")
        if spec and max_iterations != 0:
            continue_loop(ctx, handle, spec, max_iterations, agent_timeout, as_json)
            return
        data = manifest(handle.run, handle.repo)
    if as_json:
        emit_json(data)
    else:
        render.resumed(data, outcome.pending_artifact)


@click.command()
@click.argument("run_id", required=False)
@click.option("--reason", help="Kept as the run's stop_note (stop_reason is `operator stop`).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def stop(ctx: click.Context, run_id: str | None, reason: str | None, as_json: bool) -> None:
    """Finalize a run as stopped (`operator stop`); a live driver is asked to stop.

    The driver ends its agent session (saving the work), lets an evaluation in progress
    finish, then records the run as stopped.
    """
    from autoresearch.supervisor import report
    from autoresearch.supervisor.lifecycle import stop as do_stop

    outcome = do_stop(repo_root(ctx), run_id, reason)
    if as_json:
        emit_json(outcome.__dict__)
    else:
        click.echo(
            report.stop(outcome.run_id, outcome.stop_reason, outcome.note, outcome.requested)
        )


@click.command()
@click.argument("run_id", required=False)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def status(ctx: click.Context, run_id: str | None, as_json: bool) -> None:
    """All runs, or one run with its iterations."""
    from autoresearch.supervisor.lifecycle import list_runs, run_details

    root = repo_root(ctx)
    if run_id is None:
        data: dict[str, Any] = {"repo_root": str(root), "runs": list_runs(root)}
        emit_json(data) if as_json else render.run_list(data["runs"])
        return
    details = run_details(root, run_id)
    emit_json(details) if as_json else render.run_details(details)


@click.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def rebaseline(ctx: click.Context, run_id: str, as_json: bool) -> None:
    """Re-run the baseline on the worktree HEAD (only before the first iteration)."""
    from autoresearch.journal.views import manifest
    from autoresearch.supervisor.lifecycle import open_run
    from autoresearch.supervisor.prepare import rebaseline as do_rebaseline

    with open_run(repo_root(ctx), run_id) as handle:
        evaluation = do_rebaseline(handle)
        data = manifest(handle.run, handle.repo)
    warn_baseline(data, evaluation)
    if as_json:
        emit_json(data)
    else:
        render.prepared(data, evaluation)
