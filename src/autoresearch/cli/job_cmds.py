"""`autoresearch job …`: delegation jobs for people (worker.md), the same engine as the MCP tools.

Thin wiring: options → `JobRequest` or a job id → one call into `autoresearch.worker.jobs` →
text, or one JSON object with --json. `job wait` exits 0 when the verdict is accepted, 1 when
the job ended with another verdict and 124 when it is still running at the timeout (the job
goes on); refusals exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from autoresearch.api import (
    DEFAULT_MODE,
    MAX_REVISE_PASSES,
    BlockingPolicy,
    Isolation,
    ReliabilityTier,
    SandboxMode,
    SemanticGate,
    TaskKind,
)
from autoresearch.cli.common import (
    EXIT_RECORDED_FAILURE,
    AppGroup,
    emit_json,
    enum_choice,
    repo_root,
    say,
    warn,
)
from autoresearch.cli.options import agent_option

JSON_HELP = "Print one JSON object on stdout."
EXIT_STILL_RUNNING = 124


def job_agent_help() -> str:
    """`job run --agent`'s help: `aider, claude, codex, offline or cmd:<shell command>.`"""
    from autoresearch.api import spec_choices

    return spec_choices() + "."


@click.group("job", cls=AppGroup)
def job() -> None:
    """Delegation jobs: hand a coding task to a background agent, get a verdict back.

    `job start` returns a job id at once; `job wait` / `job get` show the outcome.v1 verdict
    with compact evidence (changed files, each check's exit code, duration and output digest,
    artifacts under .autoresearch/jobs/). Jobs are kept in the repository's journal.
    """


def _show(view: Any, as_json: bool) -> None:
    from autoresearch.api import render_job as render

    if as_json:
        emit_json(view.to_dict())
    else:
        say(render(view))


def _absolute(paths: tuple[str, ...]) -> tuple[str, ...]:
    # People type paths relative to where they stand; the engine sandboxes absolute ones.
    return tuple(str(Path.cwd() / p) if not Path(p).is_absolute() else p for p in paths)


@job.command("start")
@click.argument("prompt", required=False)
@click.option(
    "--prompt-file", type=click.File("r"), help="Read the prompt from a file (- for stdin)."
)
@click.option(
    "--dir",
    "dirs",
    multiple=True,
    help="An allowed directory (repeat; the first is the working directory; "
    "default: the repository).",
)
@click.option(
    "--task-kind",
    type=enum_choice(TaskKind),
    help="The verification policy; without it the verdict cannot accept.",
)
@agent_option(job_agent_help, default="claude", show_default=True)
@click.option("--model", help="The agent's model.")
@click.option(
    "--scope", multiple=True, help="A path the job may change (repeat): the scoped patch."
)
@click.option(
    "--max-diff-bytes",
    type=click.IntRange(min=1),
    help="With --scope: a larger diff is a scope violation.",
)
@click.option(
    "--check",
    "checks",
    multiple=True,
    help="A command run after the agent; exit 0 passes (repeat).",
)
@click.option(
    "--check-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=600.0,
    show_default=True,
    help="Seconds each check may take.",
)
@click.option(
    "--isolation",
    type=enum_choice(Isolation),
    default=Isolation.IN_PLACE.value,
    show_default=True,
    help="worktree: work on a new branch in its own worktree.",
)
@click.option("--max-turns", type=click.IntRange(min=1), help="The agent's turn limit.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True, max=86400),
    default=1800.0,
    show_default=True,
    help="Seconds the whole job may take.",
)
@click.option("--include-diff", is_flag=True, help="Put a trimmed diff in the evidence.")
@click.option(
    "--semantic-gate",
    type=enum_choice(SemanticGate),
    default=SemanticGate.OFF.value,
    show_default=True,
    help="A reviewer model judges the change against the prompt: warn or required (fails closed).",
)
@click.option(
    "--revise-passes",
    type=click.IntRange(0, MAX_REVISE_PASSES),
    default=0,
    show_default=True,
    help="auto_revise: after failed checks, run the agent again with a failure digest, at "
    "most this many times.",
)
@click.option("--escalate-model", help="With --revise-passes: the last revise pass's model.")
@click.option(
    "--stage",
    "stages",
    multiple=True,
    help="A sub-task run in order (repeat); a stage without complete evidence stops the job.",
)
@click.option(
    "--stage-check",
    "stage_checks",
    multiple=True,
    help="N:COMMAND – a check run after stage N (repeat); the next stage needs it to pass.",
)
@click.option(
    "--reliability-tier",
    type=enum_choice(ReliabilityTier),
    help="The gates the request should carry (see docs/worker.md: reliability tiers); default "
    "$AUTORESEARCH_WORKER_RELIABILITY_TIER, else standard.",
)
@click.option(
    "--blocking-policy",
    type=enum_choice(BlockingPolicy),
    help="Missing gates: observe records them, warn marks the verdict, enforce refuses; "
    "default $AUTORESEARCH_WORKER_BLOCKING_POLICY, else observe.",
)
@click.option(
    "--sandbox",
    type=enum_choice(SandboxMode),
    help="The OS sandbox of the job's agent and checks: bwrap (refused where it cannot run), "
    f"auto (bwrap where it can, else none with a warning) or none. Default: {DEFAULT_MODE}.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def start_cmd(
    ctx: click.Context,
    prompt: str | None,
    prompt_file: Any,
    dirs: tuple[str, ...],
    task_kind: str | None,
    agent: str,
    model: str | None,
    scope: tuple[str, ...],
    max_diff_bytes: int | None,
    checks: tuple[str, ...],
    check_timeout: float,
    isolation: str,
    max_turns: int | None,
    timeout: float,
    include_diff: bool,
    semantic_gate: str,
    revise_passes: int,
    escalate_model: str | None,
    stages: tuple[str, ...],
    stage_checks: tuple[str, ...],
    reliability_tier: str | None,
    blocking_policy: str | None,
    sandbox: str | None,
    as_json: bool,
) -> None:
    """Start a job; prints its id at once (the job runs in the background).

    PROMPT is the task for the agent (or give it with --prompt-file).
    """
    from autoresearch.api import CheckSpec, ContractError, JobRequest, ScopeSpec, jobs

    text = prompt_file.read() if prompt_file is not None else prompt
    if not text or (prompt is not None and prompt_file is not None):
        raise ContractError("give the prompt as an argument or with --prompt-file, not both")
    if max_diff_bytes is not None and not scope:
        raise ContractError("--max-diff-bytes needs --scope")
    request = JobRequest(
        prompt=text,
        allowed_dirs=_absolute(dirs),
        task_kind=TaskKind(task_kind) if task_kind else None,
        agent=agent,
        model=model,
        scope=ScopeSpec(_absolute(scope), max_diff_bytes) if scope else None,
        checks=tuple(CheckSpec(c, timeout_seconds=check_timeout) for c in checks),
        isolation=Isolation(isolation),
        max_turns=max_turns,
        timeout_seconds=timeout,
        include_diff=include_diff,
        semantic_gate=SemanticGate(semantic_gate),
        revise_passes=revise_passes,
        escalate_model=escalate_model,
        stages=_stages(stages, stage_checks, check_timeout),
        reliability_tier=ReliabilityTier(reliability_tier) if reliability_tier else None,
        blocking_policy=BlockingPolicy(blocking_policy) if blocking_policy else None,
        sandbox=SandboxMode(sandbox) if sandbox else None,
    )
    view = jobs.start(repo_root(ctx), request, warn=lambda line: warn(f"autoresearch: {line}"))
    if as_json:
        emit_json(view.to_dict())
    else:
        say(view.job.job_id)


def _stages(prompts: tuple[str, ...], checks: tuple[str, ...], timeout: float) -> tuple[Any, ...]:
    """`--stage` prompts with their `--stage-check N:COMMAND` checks, as `StageSpec`s."""
    from autoresearch.api import CheckSpec, ContractError, StageSpec

    found: list[list[CheckSpec]] = [[] for _ in prompts]
    for raw in checks:
        number, _, command = raw.partition(":")
        if not number.isdigit() or not 1 <= int(number) <= len(prompts) or not command.strip():
            raise ContractError(
                f"--stage-check {raw!r}: give N:COMMAND for a stage 1..{len(prompts)}"
            )
        found[int(number) - 1].append(CheckSpec(command, timeout_seconds=timeout))
    return tuple(StageSpec(p, tuple(c)) for p, c in zip(prompts, found, strict=True))


@job.command("wait")
@click.argument("job_id")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    help="Seconds to wait; the job goes on afterwards.",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def wait_cmd(ctx: click.Context, job_id: str, timeout: float, as_json: bool) -> None:
    """Wait for a job to end; exit 0 accepted, 1 another verdict, 124 still running."""
    from autoresearch.api import Status, jobs

    view = jobs.wait(repo_root(ctx), job_id, timeout)
    _show(view, as_json)
    if not view.state.terminal:
        sys.exit(EXIT_STILL_RUNNING)
    if view.outcome.status != Status.ACCEPTED:
        sys.exit(EXIT_RECORDED_FAILURE)


@job.command("tail")
@click.argument("job_id")
@click.option(
    "-n",
    "--lines",
    type=click.IntRange(1, 1000),
    default=50,
    show_default=True,
    help="How many lines.",
)
@click.option(
    "--log",
    type=click.Choice(["agent", "checks", "runner"]),
    default="agent",
    show_default=True,
    help="Which log (checks: the latest check).",
)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def tail_cmd(ctx: click.Context, job_id: str, lines: int, log: str, as_json: bool) -> None:
    """The last lines of a job's log."""
    from autoresearch.api import jobs

    found = jobs.tail(repo_root(ctx), job_id, lines, log)
    if as_json:
        emit_json(found.to_dict())
    else:
        say(found.text)


@job.command("list")
@click.option(
    "--limit",
    type=click.IntRange(1, 1000),
    default=20,
    show_default=True,
    help="How many, newest first.",
)
@click.option("--live", is_flag=True, help="Only queued and running jobs.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def list_cmd(ctx: click.Context, limit: int, live: bool, as_json: bool) -> None:
    """The repository's jobs, newest first."""
    from autoresearch.api import jobs, render_list

    views = jobs.list_jobs(repo_root(ctx), limit, live)
    if as_json:
        emit_json({"jobs": [v.to_dict() for v in views]})
    else:
        say(render_list(views))


def _id_command(name: str, call: str, doc: str) -> None:
    """`job NAME JOB_ID [--json]`: one engine call on one job, shown like `job get`."""

    @click.argument("job_id")
    @click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
    @click.pass_context
    def command(ctx: click.Context, job_id: str, as_json: bool) -> None:
        from autoresearch.api import jobs

        _show(getattr(jobs, call)(repo_root(ctx), job_id), as_json)

    command.__doc__ = doc
    job.command(name)(command)


_id_command("get", "get", "A job's state, verdict and evidence.")
_id_command("cancel", "cancel", "Cancel a job; returns once none of its processes is left.")
_id_command(
    "apply",
    "apply",
    "Apply a worktree job's result as uncommitted changes; removes its worktree and branch.",
)
_id_command(
    "discard",
    "discard",
    "Remove a worktree job's worktree and branch (its patch stays in .autoresearch/jobs/).",
)
