"""Supervisor commands: check, prepare, step, resume, stop, rebaseline, certify, … (`status`
is cli/status_cmd.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from autoresearch.api import DecisionKind, LoopSettings
from autoresearch.cli import render
from autoresearch.cli.common import (
    EXIT_RECORDED_FAILURE,
    EXIT_REFUSED,
    emit_json,
    repo_root,
    stacked,
    warn,
    warn_baseline,
)
from autoresearch.cli.options import (
    agent_options,
    lane_options,
    limit_options,
    loop_settings,
    sandbox_option,
)

JSON_HELP = "Print one JSON object on stdout (logs go to stderr)."


@click.command()
@click.argument("mission_dir", type=click.Path(path_type=Path))
@click.option(
    "--try",
    "try_it",
    is_flag=True,
    help="Also run the evaluator once on HEAD in a scratch checkout (nothing is recorded) and "
    "say what it read and what would trip a run.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def check(ctx: click.Context, mission_dir: Path, try_it: bool, as_json: bool) -> None:
    """Validate MISSION_DIR and print the parsed contract (--try: and run its evaluator once)."""
    from autoresearch.api import ContractError, load_mission, mission_problems

    mission = load_mission(mission_dir)
    problems = mission_problems(mission)
    if problems:
        raise ContractError("; ".join(problems))
    if not try_it:
        emit_json(mission.to_dict()) if as_json else render.mission(mission)
        return
    from autoresearch.api import try_mission

    if not as_json:
        render.mission(mission)
        warn("autoresearch: running the evaluator once on HEAD in a scratch checkout …")
    trial = try_mission(mission_dir)
    emit_json({**mission.to_dict(), "try": trial.to_dict()}) if as_json else render.trial(trial)
    if not trial.ok:
        ctx.exit(EXIT_REFUSED)


@click.command()
@click.argument("mission_dir", type=click.Path(path_type=Path))
@click.option("--run-tag", help="Run tag (default: UTC YYYYMMDDTHHMMSSZ).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@sandbox_option
def prepare(mission_dir: Path, run_tag: str | None, as_json: bool, sandbox: str | None) -> None:
    """Create the run's branch and worktree, run the baseline, write the run files."""
    from autoresearch.api import (
        baseline_evaluation,
        check_sandbox,
        manifest,
        mission_notes,
        mission_sandbox,
    )
    from autoresearch.api import prepare as do_prepare

    note = check_sandbox(sandbox, mission_sandbox(mission_dir))  # refused before anything
    for line in (*mission_notes(mission_dir), *([note] if note else [])):
        warn(f"autoresearch: {line}")
    loop = LoopSettings(sandbox=sandbox) if sandbox else None  # resume keeps it
    with do_prepare(mission_dir, run_tag, loop=loop) as handle:
        data = manifest(handle.journal, handle.run, handle.repo)
        baseline = baseline_evaluation(handle.context)
    warn_baseline(data, baseline)
    if as_json:
        emit_json(data.to_dict())
    else:
        render.prepared(data, baseline)


@click.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def step(ctx: click.Context, run_id: str, as_json: bool) -> None:
    """Process the run's candidate.json once (one decision)."""
    from autoresearch.api import open_run, refuse_unwritten
    from autoresearch.api import step as do_step

    with open_run(repo_root(ctx), run_id) as handle:
        refuse_unwritten(handle.context)
        result = do_step(handle)
    if as_json:
        emit_json(result.to_dict())
    else:
        render.step_result(result)
    if result.decision == DecisionKind.ERROR:
        warn(f"autoresearch: run failed: {result.stop_reason}")
        ctx.exit(EXIT_RECORDED_FAILURE)


resume_options = stacked(
    limit_options(resumed=True),
    click.option(
        "--save-dirty",
        is_flag=True,
        help="Save uncommitted worktree changes as a patch under the run's logs, then "
        "clean the worktree (the way past autoresearch_reset_requires_clean_worktree).",
    ),
    click.option(
        "--runtime",
        "runtime",
        multiple=True,
        metavar="PATTERN",
        help="Allow untracked files matching PATTERN in this run's worktree (a file "
        "the evaluator writes); repeatable. The evaluator contract stays frozen.",
    ),
    click.option("--json", "as_json", is_flag=True, help=JSON_HELP),
    lane_options,
    agent_options,
)  # the options `resume` and `continue` share: each one given replaces the recorded one


@click.command()
@click.argument("run_id")
@resume_options
@click.pass_context
def resume(ctx: click.Context, /, run_id: str, **options: Any) -> None:
    """Re-check and re-arm a running run; continue its loop with the given or recorded agent.

    With no agent (none given, none recorded) or --max-iterations 0 it only re-arms. A
    stopped or completed run is continued with `autoresearch continue`.
    """
    _resume(ctx, run_id, options, reopen=False)


@click.command(name="continue")
@click.argument("run_id")
@resume_options
@click.pass_context
def continue_(ctx: click.Context, /, run_id: str, **options: Any) -> None:
    """Continue a stopped or completed run with new limits.

    Same branch, worktree, history and frozen evaluator contract; nothing is re-measured.
    Noop and failure limits count afresh from here. Example: autoresearch continue RUN_ID
    --max-iterations +10
    """
    _resume(ctx, run_id, options, reopen=True)


def _resume(ctx: click.Context, run_id: str, options: dict[str, Any], reopen: bool) -> None:
    from autoresearch.api import resume as do_resume
    from autoresearch.cli.loop_cmds import LoopDoor, end_of_loop

    door = LoopDoor(options["as_json"], with_manifest=True)
    result = do_resume(
        repo_root(ctx), run_id, loop_settings(options, None), options.get("max_iterations"),
        door, reopen=reopen, save_dirty=options["save_dirty"], runtime=options["runtime"],
    )  # fmt: skip
    if result.loop is not None:
        end_of_loop(ctx, result.loop, door)
        return
    if result.manifest is None:  # a paused run's live driver goes on (the door said so)
        if options["as_json"]:
            emit_json({"run_id": run_id, "pause_lifted": True})
        return
    if options["as_json"]:
        emit_json(result.manifest.to_dict())
    else:
        render.resumed(result.manifest, result.pending_artifact)


@click.command()
@click.argument("run_ids", nargs=-1, metavar="[RUN_ID]...")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@click.option(
    "--drop-kept",
    is_flag=True,
    help="Also drop refs/autoresearch/<run>/kept, the ref that keeps the run's last kept "
    "commit reachable after its branch is gone.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def clean(
    ctx: click.Context, run_ids: tuple[str, ...], dry_run: bool, drop_kept: bool, as_json: bool
) -> None:
    """Remove the worktrees and branches of finished runs: each RUN_ID, or all of them.

    Uncommitted changes in a worktree are saved as a patch under the run's logs first. The
    journal, the run's files and logs stay; the last kept commit stays reachable as
    refs/autoresearch/<run>/kept (git log refs/autoresearch/<run>/kept) unless --drop-kept.
    """
    from autoresearch.api import clean as do_clean

    results = do_clean(repo_root(ctx), run_ids, dry_run=dry_run, drop_kept=drop_kept)
    if as_json:
        emit_json({"dry_run": dry_run, "runs": [r.to_dict() for r in results]})
    else:
        render.cleaned(results)


@click.command()
@click.argument("run_id", required=False)
@click.option("--reason", help="Kept as the run's stop_note (stop_reason is `operator stop`).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def stop(ctx: click.Context, run_id: str | None, reason: str | None, as_json: bool) -> None:
    """Finalize a run as stopped (`operator stop`); a live driver is asked to stop.

    Without RUN_ID: the repository's running run. The driver ends its agent session (saving
    the work), lets an evaluation in progress finish, then records the run as stopped.
    """
    from autoresearch.api import report
    from autoresearch.api import stop as do_stop

    outcome = do_stop(repo_root(ctx), run_id, reason)
    if as_json:
        emit_json(outcome.__dict__)
    else:
        click.echo(
            report.stop(outcome.run_id, outcome.stop_reason, outcome.note, outcome.requested)
        )


@click.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def rebaseline(ctx: click.Context, run_id: str, as_json: bool) -> None:
    """Re-run the baseline on the worktree HEAD (only before the first iteration)."""
    from autoresearch.api import manifest, open_run
    from autoresearch.api import rebaseline as do_rebaseline

    with open_run(repo_root(ctx), run_id) as handle:
        evaluation = do_rebaseline(handle)
        data = manifest(handle.journal, handle.run, handle.repo)
    warn_baseline(data, evaluation)
    if as_json:
        emit_json(data.to_dict())
    else:
        render.prepared(data, evaluation)


@click.command()
@click.argument("run_id")
@click.option(
    "--repeats",
    type=click.IntRange(min=2, max=1000),
    default=5,
    show_default=True,
    help="Readings of each commit (those already recorded count).",
)
@click.option(
    "--ablate",
    is_flag=True,
    help="Also measure the final state without each kept change in turn: what each is worth.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def certify(ctx: click.Context, run_id: str, repeats: int, ablate: bool, as_json: bool) -> None:
    """Re-measure RUN_ID's baseline and final kept commit, interleaved, in scratch checkouts,
    and report the improvement with a 95 % interval (--ablate: and each kept change's worth).
    Every reading is recorded; an interrupted certification resumes where it stopped."""
    from autoresearch.api import certify as do_certify
    from autoresearch.api import open_any_run, resolve_run_id

    root = repo_root(ctx)
    with open_any_run(root, resolve_run_id(root, run_id)) as handle:
        data = do_certify(handle, repeats, progress=lambda line: warn(f"  {line}"), ablate=ablate)
    if as_json:
        emit_json(data.to_json())
    else:
        render.certification(data)
