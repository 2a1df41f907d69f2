"""The experiment-session tools and supervised-run control of the MCP server (mcp/server.py
builds the server and registers these when its tools are built).

Each tool parses its arguments into the core's parameter dataclasses, calls one core function
(the same as `autoresearch exp …` / `autoresearch status|stop`), and replies with the CLI's text
plus the structured result. Tool descriptions are the methods' docstrings: the model reads them.
The server acts on the directory it was started in (`--repo` or the cwd); after an
init_experiment that created a session worktree it acts in that worktree.
"""

from __future__ import annotations

import threading
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from autoresearch.api import (
    DEFAULT_CHECKS_TIMEOUT,
    DEFAULT_RUN_TIMEOUT,
    Direction,
    Door,
    InitParams,
    InitResult,
    LogParams,
    RunNote,
    RunParams,
    Verdict,
    find_repo,
    init_session,
    log_experiment,
    render_init,
    render_log,
    render_notes,
    render_resume,
    render_run,
    render_status,
    report,
    run_experiment,
    session_status,
    update_notes,
)
from autoresearch.mcp import schemas as s
from autoresearch.mcp.support import (
    DESTRUCTIVE,
    READ_ONLY,
    WRITES,
    ProgressFeed,
    add_tools,
    call_with_progress,
    reply,
    tool_errors,
)

# Beyond its two timeouts, run_experiment waits at most this long (stopping processes, git,
# the journal) before it answers with an error and lets the run finish in the background.
RUN_SLACK_SECONDS = 30.0
MAX_TIMEOUT_SECONDS = 86400.0


Names = Annotated[list[str], Field(max_length=100)]
Seconds = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_SECONDS)]
RunNotes = Annotated[list[s.RunNoteInput], Field(max_length=100)]


class Tools:
    """The tools of one server; `start` is where the experiment tools act, `run_slack` how
    long run_experiment waits beyond its timeouts (`run_limit`)."""

    def __init__(self, start: Path, run_slack: float = RUN_SLACK_SECONDS) -> None:
        self.start = start
        self.run_slack = run_slack

    def register(self, server: MCPServer) -> None:
        table: list[tuple[Any, str, ToolAnnotations]] = [
            (self.init_experiment, "Start or update an experiment session", WRITES),
            (self.run_experiment, "Run the benchmark once", WRITES),
            (self.log_experiment, "Log keep / discard / crash / checks_failed", DESTRUCTIVE),
            (self.update_notes, "Update the session notes", WRITES),
            (self.experiment_status, "Experiment session status", READ_ONLY),
            (self.run_list, "List supervised runs", READ_ONLY),
            (self.run_status, "Supervised run status", READ_ONLY),
            (self.run_stop, "Stop a supervised run", DESTRUCTIVE),
        ]
        add_tools(server, table)

    # --- experiment sessions -----------------------------------------------------------------

    def init_experiment(
        self,
        name: Annotated[
            str | None,
            Field(min_length=1, max_length=200, description="Required for a new session."),
        ] = None,
        metric: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=100,
                description="The primary METRIC name (required for a new session).",
            ),
        ] = None,
        goal: Annotated[str | None, Field(description="What the session tries to achieve.")] = None,
        direction: Annotated[
            Literal["lower", "higher"] | None,
            Field(description="Which way is better (default lower)."),
        ] = None,
        unit: Annotated[str | None, Field(description="Unit of the metric, for display.")] = None,
        secondary: Annotated[Names | None, Field(description="Secondary METRIC names.")] = None,
        scope: Annotated[
            Names | None, Field(description="Paths the experiments may change.")
        ] = None,
        off_limits: Annotated[Names | None, Field(description="Paths never to change.")] = None,
        constraints: Annotated[
            Names | None, Field(description="Rules to keep, one per item.")
        ] = None,
        max_iterations: Annotated[
            int | None, Field(ge=0, description="Logged runs per segment; 0 clears the limit.")
        ] = None,
        command: Annotated[
            str | None,
            Field(min_length=1, description="Benchmark command (default: bash autoresearch.sh)."),
        ] = None,
        new_segment: Annotated[
            bool, Field(description="Start a new segment: new baseline, new counts.")
        ] = False,
        worktree: Annotated[
            bool,
            Field(
                description="Run a new session in its own git worktree; edit the files in the "
                "result's `directory` from then on (this server follows it)."
            ),
        ] = False,
        seal: Annotated[
            bool,
            Field(
                description="Seal autoresearch.sh and autoresearch.checks.sh as they are now: "
                "run_experiment then measures nothing while they differ and runs the copy."
            ),
        ] = False,
        allow_secrets: Annotated[
            bool,
            Field(
                description="Commit dirty files that look like secrets (.env, keys, tokens) in "
                "the setup commit; without it init refuses them and names them."
            ),
        ] = False,
    ) -> Annotated[CallToolResult, s.InitOutput]:
        """Start an experiment session in this repository, or update the active one.

        Phase 1 comes first: autoresearch.sh must exist (the benchmark: exit 0, prints
        `METRIC <name>=<value>` lines, deterministic, no network); autoresearch.checks.sh is an
        optional correctness gate. A new session needs `name` and `metric`: it creates and
        checks out the branch autoresearch/<slug>-<date> and commits the dirty files as the
        harness setup (listed in setup_files; files that look like secrets are refused unless
        allow_secrets). On an active session only the fields given change (a list given as []
        clears it); `new_segment` starts a new baseline. An unlogged pending run is abandoned.
        """
        params = InitParams(
            name=name,
            goal=goal,
            metric=metric,
            unit=unit,
            direction=None if direction is None else Direction(direction),
            secondary=_tuple(secondary),
            scope=_tuple(scope),
            off_limits=_tuple(off_limits),
            constraints=_tuple(constraints),
            max_iterations=max_iterations,
            command=command,
            new_segment=new_segment,
            worktree=worktree,
            seal=seal,
            allow_secrets=allow_secrets,
        )
        with tool_errors():
            result = init_session(self.start, params, Door.MCP)
            self._follow(result)
            return reply(render_init(result), s.InitOutput.model_validate(result.to_dict()))

    def _follow(self, result: InitResult) -> None:
        if result.worktree:
            self.start = Path(result.worktree)

    async def run_experiment(
        self,
        ctx: Context,
        timeout_seconds: Annotated[
            Seconds, Field(description="Kill the benchmark after this many seconds.")
        ] = DEFAULT_RUN_TIMEOUT,
        checks_timeout_seconds: Annotated[
            Seconds, Field(description="Kill autoresearch.checks.sh after this long.")
        ] = DEFAULT_CHECKS_TIMEOUT,
        repeats: Annotated[
            int,
            Field(
                ge=1,
                le=100,
                description="Run the benchmark this many times; the metric is the mean and "
                "every reading is kept (the spread makes significance possible). From 2 on, "
                "after a baseline, each reading is paired with one of the kept commit.",
            ),
        ] = 1,
    ) -> Annotated[CallToolResult, s.RunOutput]:
        """Run the benchmark once, then autoresearch.checks.sh if it exists and the run passed.

        Reports pass / fail / timeout, the parsed primary and secondary metrics (use these
        values in log_experiment), baseline, best kept, a suggested status and the output tail
        (the full log is in log_path). The run then waits for log_experiment; starting a run
        abandons an unlogged earlier one. A failed benchmark is a result, not an error.
        Progress notifications are sent every second while it runs.
        With repeats N the benchmark runs N times (while it passes); from N = 2 on, once the
        segment has a baseline, each round also reads the kept commit in a scratch checkout,
        so the candidate is judged on pairs read next to each other (drift cancels). Time
        bound: each run of the benchmark is killed after timeout_seconds and the checks after
        checks_timeout_seconds, so the call returns within 2N × timeout_seconds +
        checks_timeout_seconds plus a few seconds; after 30 s more at the very most it returns
        an error and the run finishes in the background. Keep that sum below the tool-call
        timeout of your MCP host. Cancelling the call stops the benchmark at once; the run is
        then abandoned (nothing to log).
        """
        params = RunParams(timeout_seconds, checks_timeout_seconds, repeats)
        readings = repeats if repeats < 2 else 2 * repeats  # paired: the kept commit's too
        feed = ProgressFeed(total=timeout_seconds * readings + checks_timeout_seconds)
        # Set when the host cancels the call or disconnects: the benchmark's process group is
        # stopped at once and the run recorded as cancelled, releasing the session.
        cancel = threading.Event()

        def work() -> CallToolResult:
            with tool_errors():
                report = run_experiment(
                    self.start,
                    params,
                    on_progress=feed.update,
                    should_cancel=cancel.is_set,
                    door=Door.MCP,
                )
                return reply(render_run(report), s.RunOutput.model_validate(report.to_dict()))

        limit = run_limit(timeout_seconds * readings, checks_timeout_seconds, self.run_slack)
        return await call_with_progress(ctx, feed, work, limit, on_cancel=cancel.set)

    def log_experiment(
        self,
        status: Annotated[
            Literal["keep", "discard", "crash", "checks_failed"],
            Field(description="The verdict on the pending run."),
        ],
        description: Annotated[
            str, Field(min_length=1, max_length=2000, description="One line: what this run tried.")
        ],
        metric: Annotated[
            float | None, Field(description="Primary value (default: the parsed one).")
        ] = None,
        metrics: Annotated[
            dict[str, float] | None,
            Field(description='Secondary metrics (default: the parsed ones), e.g. {"mem_mb": 12}.'),
        ] = None,
        asi: Annotated[
            dict[str, Any] | None,
            Field(
                description="Free notes on the run: hypothesis, rollback_reason, "
                "next_action_hint, … (merged over the parsed ASI lines)."
            ),
        ] = None,
        justification: Annotated[
            str | None, Field(description="Why this run's changes outside the scope are fine.")
        ] = None,
        flag_runs: Annotated[
            RunNotes | None,
            Field(description="Earlier runs to exclude from baseline, best and confidence."),
        ] = None,
        justify_runs: Annotated[
            RunNotes | None, Field(description="Justify scope deviations of earlier kept runs.")
        ] = None,
        force: Annotated[
            bool, Field(description="Accept a changed set of secondary metrics.")
        ] = False,
    ) -> Annotated[CallToolResult, s.LogOutput]:
        """Record keep / discard / crash / checks_failed for the pending run.

        keep commits every change of the session directory (refused when the benchmark
        crashed or the checks failed). discard, crash and checks_failed first save the diff as
        a patch next to the run's log, then reset the session directory to the last kept
        commit: uncommitted changes there are reverted. Needs a completed pending run from
        run_experiment. Reports baseline, this run (Δ%), best kept, confidence and the git action.
        """
        params = LogParams(
            status=Verdict(status),
            description=description,
            metric=metric,
            metrics=metrics,
            asi=asi,
            justification=justification,
            flag_runs=_notes(flag_runs),
            justify_runs=_notes(justify_runs),
            force=force,
        )
        with tool_errors():
            report = log_experiment(self.start, params, Door.MCP)
            return reply(render_log(report), s.LogOutput.model_validate(report.to_dict()))

    def update_notes(
        self,
        body: Annotated[
            str | None,
            Field(description="Replace the notes: objective, what worked, dead ends, ideas."),
        ] = None,
        append_idea: Annotated[
            str | None, Field(description="Add `- <idea>` under the ## Ideas heading.")
        ] = None,
    ) -> Annotated[CallToolResult, s.NotesOutput]:
        """Replace the session notes (a living playbook) and/or append one idea.

        Give body, append_idea or both. Notes and ideas are shown in every experiment_status.
        """
        with tool_errors():
            result = update_notes(self.start, body=body, append_idea=append_idea, door=Door.MCP)
            return reply(render_notes(result), s.NotesOutput.model_validate(result.to_dict()))

    def experiment_status(
        self,
        last: Annotated[
            int, Field(ge=0, le=1000, description="How many recent runs to list.")
        ] = 20,
        resume: Annotated[
            bool, Field(description="Append what to do next (the resume message).")
        ] = False,
    ) -> Annotated[CallToolResult, s.StatusOutput]:
        """The session context: call it at the start of every turn.

        Goal, metric and direction, runs by status, baseline, best kept (Δ%), confidence, the
        last runs (status, metric, description, hypothesis, next hint, deviations, flags),
        unjustified deviations, notes, ideas, the pending run and progress against
        max_iterations. With resume=true the text ends with what to do next.
        """
        with tool_errors():
            report = session_status(self.start, last=last, door=Door.MCP)
            text = render_resume(report, Door.MCP) if resume else render_status(report, Door.MCP)
            data = {**report.to_dict(), "resume_message": text if resume else None}
            return reply(text, s.StatusOutput.model_validate(data))

    # --- supervised runs ---------------------------------------------------------------------

    def run_list(
        self,
        last: Annotated[
            int | None,
            Field(ge=0, description="Only the newest N runs, oldest first (default: every run)."),
        ] = None,
    ) -> Annotated[CallToolResult, s.RunListOutput]:
        """List the supervised runs of this repository with their headline numbers.

        Starting and resuming supervised runs stays on the command line (`autoresearch run
        MISSION_DIR --agent …`, `autoresearch resume RUN_ID`), not MCP.
        """
        from autoresearch.api import list_runs

        with tool_errors():
            root = find_repo(self.start)
            runs = list_runs(root, last)
            data = {"repo_root": str(root), "runs": [r.to_dict() for r in runs]}
            return reply(report.run_list(runs), s.RunListOutput.model_validate(data))

    def run_status(
        self,
        run_id: Annotated[str, Field(min_length=1, description="The run id (see run_list).")],
        last_iterations: Annotated[
            int, Field(ge=0, le=10000, description="How many recent iterations to include.")
        ] = 20,
    ) -> Annotated[CallToolResult, s.RunDetailsOutput]:
        """One supervised run: status, stop reason, scores, driver, its recent iterations.

        Starting and resuming supervised runs stays on the command line (`autoresearch run`,
        `autoresearch resume RUN_ID`).
        """
        from autoresearch.api import run_details

        with tool_errors():
            details = run_details(find_repo(self.start), run_id, last=last_iterations)
            return reply(
                report.run_details(details), s.RunDetailsOutput.model_validate(details.to_dict())
            )

    def run_stop(
        self,
        run_id: Annotated[
            str | None,
            Field(min_length=1, description="The run to stop (default: the newest running one)."),
        ] = None,
        reason: Annotated[
            str | None,
            Field(description="Kept as the run's stop_note; stop_reason is `operator stop`."),
        ] = None,
    ) -> Annotated[CallToolResult, s.StopOutput]:
        """Stop a supervised run for good (`operator stop`); it cannot be resumed afterwards.

        When a driver process is running it, the driver is asked to stop (requested=true): it
        ends the agent session (saving its work), lets an evaluation in progress finish, then
        records the run as stopped. Otherwise the run is finalized as stopped at once. Starting
        and resuming runs stays on the command line.
        """
        from autoresearch.api import stop  # the engine: imported at the first stop, not at start

        with tool_errors():
            out = stop(find_repo(self.start), run_id, reason)
            text = report.stop(out.run_id, out.stop_reason, out.note, out.requested)
            return reply(text, s.StopOutput.model_validate(asdict(out)))


def _tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _notes(items: list[s.RunNoteInput] | None) -> tuple[RunNote, ...]:
    return tuple(RunNote(n.run_id, n.reason) for n in items or ())


def run_limit(
    timeout_seconds: float, checks_timeout_seconds: float, slack: float = RUN_SLACK_SECONDS
) -> float:
    """The longest run_experiment waits for the core before it answers anyway."""
    return timeout_seconds + checks_timeout_seconds + slack
