"""`run`, `demo` and the loop continuation used by `resume`."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from autoresearch.api import EXIT_CLOSED_PIPE
from autoresearch.cli.common import EXIT_INTERRUPTED, EXIT_RECORDED_FAILURE, emit_json, warn
from autoresearch.cli.options import (
    DEFAULT_MAX_ITERATIONS,
    agent_options,
    lane_options,
    limit_options,
    loop_settings,
    search_options,
)

if TYPE_CHECKING:
    from autoresearch.api import Direction, Headline, LoopResult, Progress, StopMoment

JSON_HELP = "Print one JSON object on stdout at the end (progress goes to stderr)."


@click.command()
@click.argument("mission_dir", type=click.Path(path_type=Path))
@limit_options(resumed=False)
@click.option("--run-tag", help="Run tag (default: UTC YYYYMMDDTHHMMSSZ).")
@lane_options
@search_options
@agent_options
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def run(ctx: click.Context, /, mission_dir: Path, **options: Any) -> None:
    """Prepare a run, then loop: agent session → artifact → evaluation → decision."""
    from autoresearch.api import start

    limit = options["max_iterations"]
    door = LoopDoor(options["as_json"])
    if limit is None:  # said once the run exists: a refusal stays the one line it always was
        limit = DEFAULT_MAX_ITERATIONS
        door.notes.append(
            f"the run completes after {limit} iterations "
            "(--max-iterations N to choose, 0 for no limit)"
        )
    given = loop_settings(options, limit or None)
    end_of_loop(ctx, start(mission_dir, options["run_tag"], given, door), door)


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
    from autoresearch.api import (
        DEMO_MISSION,
        LANES_MISSION,
        create_demo_repo,
        demo_plan,
        start_demo,
    )

    mission_dir = create_demo_repo(directory, LANES_MISSION if lanes else DEMO_MISSION)
    warn(f"demo repository: {mission_dir.parent.parent}")
    door = LoopDoor(as_json, demo=True)
    end_of_loop(ctx, start_demo(mission_dir, demo_plan(iterations, seed, lanes), door), door)


class LoopDoor:
    """The CLI as the loop's front door (`supervisor/drive.Door`): progress on stderr, notes
    and the stop message on stderr, the summary on stdout (`--json`: one JSON object; after a
    resume, the manifest with the summary under `loop`)."""

    def __init__(self, as_json: bool, demo: bool = False, with_manifest: bool = False) -> None:
        self.as_json, self.demo, self.with_manifest = as_json, demo, with_manifest
        self.reader_left = False  # the progress's reader left (`run … 2>&1 | head`)
        self.notes: list[str] = []  # said when the loop starts, before its progress

    def progress(self, direction: Direction, head: Headline) -> Progress:
        from autoresearch.cli.progress import ProgressPrinter

        for line in self.notes:
            self.note(line)
        return ProgressPrinter(
            direction, head.baseline, head.best, head.baseline_interval, head.best_interval,
            on_reader_left=self._reader_left,
        )  # fmt: skip

    def _reader_left(self) -> None:
        """Nobody reads the progress any more: stop as a first SIGTERM does (the session
        stopped, its work saved, the run resumable) rather than die mid-iteration, as the
        console's own answer (exit 1) did, leaving the run 'running, no driver'."""
        self.reader_left = True
        signal.raise_signal(signal.SIGTERM)

    def note(self, line: str) -> None:
        if not self.reader_left:
            warn(f"autoresearch: {line}")

    def stopping(self, moment: StopMoment) -> None:
        from autoresearch.api import StopMoment

        if self.reader_left:  # stderr is gone: nothing to say, nobody to say it to
            return
        if moment == StopMoment.FINISHING:
            warn(
                "autoresearch: the loop has ended; still writing its summary and the report "
                "(Ctrl-C again to abort at once)"
            )
        else:
            warn("autoresearch: stopping the current session (Ctrl-C again to abort at once)")

    def report(self, repo_root: Path, run_id: str) -> None:
        from autoresearch.api import AutoresearchError, build_run_report

        try:
            built = build_run_report(repo_root, run_id)
        except AutoresearchError as exc:
            self.note(f"report not written: {exc.message}")
            return
        if built.warning:
            self.note(built.warning)

    def finished(self, result: LoopResult) -> None:
        from autoresearch.cli import render

        if not self.as_json:
            render.loop_summary(result.summary, demo=self.demo, certified=result.certified)
            return
        data = result.summary.to_dict()
        manifest = result.manifest.to_dict() if result.manifest is not None else {}
        emit_json({**manifest, "loop": data} if self.with_manifest else data)


def end_of_loop(ctx: click.Context, result: LoopResult, door: LoopDoor) -> None:
    """What the user does next: resume an interrupted run (exit 130, as a script must tell a
    stop from `completed`; 141 when the output's reader left); a failed one exits 1."""
    outcome = result.outcome
    if door.reader_left:
        ctx.exit(EXIT_CLOSED_PIPE)
    if outcome.interrupted:
        warn(
            f"autoresearch: interrupted; the run is resumable: autoresearch resume {outcome.run_id}"
        )
        ctx.exit(EXIT_INTERRUPTED)
    if result.failed:
        note = result.stop_note
        warn(f"autoresearch: run failed: {outcome.stop_reason}" + (f": {note}" if note else ""))
        ctx.exit(EXIT_RECORDED_FAILURE)
