"""The delegation worker's MCP tools (worker.md "Jobs"): job_start, job_get, job_wait, job_tail,
job_cancel, job_list, job_apply, job_discard.

Thin door: each tool parses its arguments into a `JobRequest` or an id, calls one function of
`autoresearch.worker.jobs`, and replies with the CLI's text plus the structured result. Jobs act
on the repository the server acts on; their paths are sandboxed inside it. Blocking calls
(wait, cancel) run on a worker thread so the server keeps answering meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from autoresearch.api import (
    DEFAULT_AGENT,
    DEFAULT_CHECK_TIMEOUT_SECONDS,
    DEFAULT_MODE,
    DEFAULT_TIMEOUT_SECONDS,
    MAX_REVISE_PASSES,
    MAX_STAGES,
    MAX_TIMEOUT_SECONDS,
    BlockingPolicy,
    CheckSpec,
    Isolation,
    JobRequest,
    JobView,
    ReliabilityTier,
    SandboxMode,
    ScopeSpec,
    SemanticGate,
    StageSpec,
    TaskKind,
    check_timeout,
    find_repo,
    jobs,
    render_job,
    render_list,
    slots,
    spec_choices,
)
from autoresearch.mcp.schemas import mirrors
from autoresearch.mcp.support import DESTRUCTIVE, READ_ONLY, WRITES, add_tools, reply, tool_errors

MAX_WAIT_MS = 3_600_000
DEFAULT_WAIT_MS = 30_000


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VerificationPolicy(_Shape):
    version: int | None = Field(
        default=None, description="1 (the source's shape); any other version is refused."
    )
    task_kind: Literal["read_only", "modifying"] = Field(
        description="read_only: the job must change no file; modifying: it must change files "
        "inside scoped_patch and pass the checks."
    )


class ScopedPatch(_Shape):
    paths: list[str] = Field(
        min_length=1, max_length=200, description="Files or folders the job may change."
    )
    max_diff_bytes: int | None = Field(
        default=None, ge=1, description="A larger diff is a scope violation."
    )


class CheckInput(_Shape):
    command: str = Field(min_length=1, description="Shell command run in the job's directory.")
    name: str = Field(default="", max_length=200)
    timeout_seconds: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT_SECONDS,
        description=f"Default {DEFAULT_CHECK_TIMEOUT_SECONDS:g}.",
    )
    timeout_ms: int | None = Field(
        default=None, gt=0, le=int(MAX_TIMEOUT_SECONDS * 1000), description="Or in milliseconds."
    )

    def spec(self) -> CheckSpec:
        label = self.name or self.command
        timeout = check_timeout(label, self.timeout_seconds, self.timeout_ms)
        return CheckSpec(self.command, name=self.name, timeout_seconds=timeout)


class StageInput(_Shape):
    prompt: str = Field(min_length=1, description="This stage's part of the task.")
    checks: list[CheckInput] | None = Field(
        default=None,
        max_length=20,
        description="Run after this stage; the next stage runs only if every one passes.",
    )

    def spec(self) -> StageSpec:
        return StageSpec(self.prompt, tuple(c.spec() for c in self.checks or ()))


class JobResult(_Shape):
    state: str = Field(description="none | pending | applied | discarded")
    branch: str | None
    worktree: str | None
    commit: str | None
    patch: str | None


class OutcomeBody(_Shape):
    status: str = Field(
        description="running | accepted | needs_evidence | failed | rejected | cancelled | "
        "timed_out"
    )
    reason_codes: list[str]
    retryable: bool
    policy: dict[str, Any]
    verification: dict[str, str]
    evidence: dict[str, Any] = Field(
        description="changed_files, checks (command, exit_code, duration_ms, output_sha256), "
        "executor, artifacts, diff when asked for"
    )


class JobOutput(_Shape):
    job_id: str
    state: str = Field(
        description="queued | running | checking | completed | cancelled | timed_out | "
        "failed | lost"
    )
    agent: str
    isolation: str
    task_kind: str | None
    prompt: str
    workdir: str
    created_at: str
    started_at: str | None
    finished_at: str | None
    cancel_requested: bool
    error: str | None
    result: JobResult
    contract_version: str
    outcome: OutcomeBody


class JobListOutput(_Shape):
    jobs: list[JobOutput]


@mirrors(jobs.Tail)
class TailOutput(_Shape):
    pass


JobId = Annotated[str, Field(min_length=1, max_length=100, description="From job_start.")]


def _out(view: JobView) -> CallToolResult:
    return reply(render_job(view), JobOutput.model_validate(view.to_dict()))


class JobTools:
    """The job tools of one server; `start()` is the directory the server acts on."""

    def __init__(self, start: Callable[[], Path], running_max: int | None = None) -> None:
        self._start = start
        self._running_max = running_max  # --max-running-jobs, over the environment's cap
        self._started: list[tuple[Path, str]] = []  # this server's jobs: its running-job cap

    def live_jobs(self) -> int:
        """How many jobs this server started are still queued or running."""
        return sum(1 for r, j in list(self._started) if not jobs.get(r, j).state.terminal)

    def _check_running_cap(self) -> None:
        """Refuse (retryable `worker_busy`) a job past this server's cap of live jobs."""
        self._started = [(r, j) for r, j in self._started if not jobs.get(r, j).state.terminal]
        live = len(self._started)
        if self._running_max is not None:
            limit, source = self._running_max, f"--max-running-jobs {self._running_max}"
        else:
            limit = slots.Limits.from_env().running_max
            source = f"{slots.ENV_RUNNING_MAX}={limit}"
        if live >= limit:
            raise slots.busy(f"this server already has {live} live jobs ({source})")

    def register(self, server: MCPServer) -> None:
        add_tools(
            server,
            [
                (self.job_start, "Start a delegated coding job", WRITES),
                (self.job_get, "A job's verdict and evidence", READ_ONLY),
                (self.job_wait, "Wait for a job to end", READ_ONLY),
                (self.job_tail, "The last lines of a job's log", READ_ONLY),
                (self.job_cancel, "Cancel a job", DESTRUCTIVE),
                (self.job_list, "List jobs", READ_ONLY),
                (self.job_apply, "Apply a worktree job's result", DESTRUCTIVE),
                (self.job_discard, "Discard a worktree job's result", DESTRUCTIVE),
            ],
        )

    def _root(self) -> Path:
        return find_repo(self._start())

    def job_start(
        self,
        prompt: Annotated[str, Field(min_length=1, description="The task for the worker agent.")],
        allowed_dirs: Annotated[
            list[str] | None,
            Field(
                max_length=20,
                description="Directories the job may work in (default: the repository); the "
                "first is its working directory. Relative paths are from the repository root.",
            ),
        ] = None,
        verification_policy: Annotated[
            VerificationPolicy | None, Field(description="Without it the verdict can't accept.")
        ] = None,
        agent: Annotated[
            str, Field(description=spec_choices(" | ", " | "))  # the installed back-ends
        ] = DEFAULT_AGENT,
        model: Annotated[str | None, Field(description="The agent's model.")] = None,
        scoped_patch: Annotated[
            ScopedPatch | None, Field(description="Where the job may change files.")
        ] = None,
        checks: Annotated[
            list[CheckInput] | None,
            Field(max_length=20, description="Commands run after the agent; exit 0 passes."),
        ] = None,
        isolation: Annotated[
            Literal["in_place", "worktree"],
            Field(description="worktree: work on a new branch in its own git worktree."),
        ] = "in_place",
        max_turns: Annotated[int | None, Field(ge=1, description="The agent's turn limit.")] = None,
        timeout_seconds: Annotated[
            float, Field(gt=0, le=MAX_TIMEOUT_SECONDS, description="The whole job's deadline.")
        ] = DEFAULT_TIMEOUT_SECONDS,
        include_diff: Annotated[
            bool, Field(description="Put a trimmed diff in the evidence.")
        ] = False,
        permission_mode: Annotated[
            str | None,
            Field(description="acceptEdits (the only mode a job runs with), or leave it out."),
        ] = None,
        semantic_gate: Annotated[
            Literal["off", "warn", "required"],
            Field(
                description="A dedicated reviewer model judges the change against the prompt "
                "once the checks pass: warn adds semantic_warning, required fails closed "
                "(semantic_failed; no verdict: needs_evidence)."
            ),
        ] = "off",
        auto_revise: Annotated[
            bool,
            Field(
                description="After failed checks, run the agent again with a failure digest "
                "(each failed check's command, exit code, output tail), then the checks."
            ),
        ] = False,
        revise_passes: Annotated[
            int, Field(ge=1, le=MAX_REVISE_PASSES, description="With auto_revise: at most.")
        ] = 1,
        escalate_model: Annotated[
            str | None,
            Field(description="With auto_revise: a stronger model for the last revise pass."),
        ] = None,
        stages: Annotated[
            list[StageInput] | None,
            Field(
                max_length=MAX_STAGES,
                description="Sub-tasks run in order on the job's workspace, each followed by "
                "its own checks; a stage without complete evidence (its session failed or a "
                "check did not pass) stops the job: needs_evidence (stage_evidence_incomplete). "
                "The job's checks run after the last stage.",
            ),
        ] = None,
        reliability_tier: Annotated[
            Literal["lite", "standard", "strict", "critical"] | None,
            Field(
                description="The gates the request should carry: standard a "
                "verification_policy; strict also checks, scoped_patch and semantic_gate warn; "
                "critical semantic_gate required and isolation worktree. Default: "
                "$AUTORESEARCH_WORKER_RELIABILITY_TIER, else standard."
            ),
        ] = None,
        blocking_policy: Annotated[
            Literal["observe", "warn", "enforce"] | None,
            Field(
                description="A request lacking its tier's gates: observe records them "
                "(outcome.policy.reliability), warn adds reliability_gates_missing to an "
                "accepted verdict, enforce refuses the job. Default: "
                "$AUTORESEARCH_WORKER_BLOCKING_POLICY, else observe."
            ),
        ] = None,
        sandbox: Annotated[
            Literal["auto", "bwrap", "none"] | None,
            Field(
                description="The OS sandbox of the job's agent and checks (Bubblewrap: the "
                "repository read-only but for the job's folders, .autoresearch/ and $HOME's "
                "credentials hidden): bwrap (refused where it cannot run), auto (bwrap where "
                f"it can, else none) or none. Default: {DEFAULT_MODE}."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, JobOutput]:
        """Start a coding job for a background agent; returns its job_id at once (queued).

        The agent works in allowed_dirs[0]; afterwards the checks run there and the verdict
        (outcome.v1) is computed from evidence, never from what the agent says: changed files
        (changes that were already there before are attributed as such), each check's exit
        code, duration and output digest, the diff size. A modifying job is accepted only with
        scoped_patch and at least one passing check; a read_only job that changes files is
        rejected. With isolation=worktree the result stays on its own branch until job_apply or
        job_discard. Poll with job_wait or job_get; job_cancel stops it.
        """
        with tool_errors():
            request = JobRequest(
                prompt=prompt,
                allowed_dirs=tuple(allowed_dirs or ()),
                task_kind=None
                if verification_policy is None
                else TaskKind(verification_policy.task_kind),
                agent=agent,
                model=model,
                scope=None
                if scoped_patch is None
                else ScopeSpec(tuple(scoped_patch.paths), scoped_patch.max_diff_bytes),
                checks=tuple(c.spec() for c in checks or ()),
                isolation=Isolation(isolation),
                max_turns=max_turns,
                timeout_seconds=timeout_seconds,
                include_diff=include_diff,
                policy_version=None if verification_policy is None else verification_policy.version,
                permission_mode=permission_mode,
                semantic_gate=SemanticGate(semantic_gate),
                revise_passes=revise_passes if auto_revise else 0,
                escalate_model=escalate_model,
                stages=tuple(s.spec() for s in stages or ()),
                reliability_tier=ReliabilityTier(reliability_tier) if reliability_tier else None,
                blocking_policy=BlockingPolicy(blocking_policy) if blocking_policy else None,
                sandbox=SandboxMode(sandbox) if sandbox else None,
            )
            root = self._root()
            self._check_running_cap()
            view = jobs.start(root, request)
            self._started.append((root, view.job.job_id))
            return _out(view)

    def job_get(
        self,
        job_id: JobId,
        verbose: Annotated[
            bool, Field(description="The source's flag; the answer is always the whole record.")
        ] = False,
    ) -> Annotated[CallToolResult, JobOutput]:
        """A job's state, its outcome.v1 verdict and compact evidence.

        outcome.status: running (queued or working), accepted, needs_evidence, failed,
        rejected, cancelled, timed_out; retryable is true for needs_evidence, failed and
        timed_out. A job whose runner process died is reported as state lost (failed,
        executor_failed), never as running forever.
        """
        with tool_errors():
            return _out(jobs.get(self._root(), job_id))

    async def job_wait(
        self,
        job_id: JobId,
        timeout_ms: Annotated[
            int,
            Field(ge=0, le=MAX_WAIT_MS, description="Return after this long even if running."),
        ] = DEFAULT_WAIT_MS,
    ) -> Annotated[CallToolResult, JobOutput]:
        """Wait until the job ends or timeout_ms pass, then answer like job_get.

        A poll timeout never cancels the job: it answers with outcome.status running. Keep
        timeout_ms below your MCP host's tool-call timeout and call again.
        """
        stop = threading.Event()

        def work() -> CallToolResult:
            with tool_errors():
                view = jobs.wait(self._root(), job_id, timeout_ms / 1000, should_stop=stop.is_set)
                return _out(view)

        try:
            return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        finally:
            stop.set()

    def job_tail(
        self,
        job_id: JobId,
        lines: Annotated[int, Field(ge=1, le=1000, description="How many lines.")] = 50,
        log: Annotated[
            Literal["agent", "checks", "runner"],
            Field(description="agent (default), checks (the latest check) or runner."),
        ] = "agent",
    ) -> Annotated[CallToolResult, TailOutput]:
        """The last lines of a job's log (at most 64 KB), for a look while it runs."""
        with tool_errors():
            found = jobs.tail(self._root(), job_id, lines, log)
            return reply(found.text or "(empty log)", TailOutput.model_validate(found.to_dict()))

    async def job_cancel(self, job_id: JobId) -> Annotated[CallToolResult, JobOutput]:
        """Cancel a job: its agent's or check's whole process group is stopped (SIGTERM, then
        SIGKILL); answers once no process of the job is left. A worktree result is kept."""

        def work() -> CallToolResult:
            with tool_errors():
                return _out(jobs.cancel(self._root(), job_id))

        return await anyio.to_thread.run_sync(work)

    def job_list(
        self,
        limit: Annotated[int, Field(ge=1, le=1000, description="How many, newest first.")] = 20,
        live_only: Annotated[bool, Field(description="Only queued and running jobs.")] = False,
    ) -> Annotated[CallToolResult, JobListOutput]:
        """The repository's jobs, newest first, each with its verdict."""
        with tool_errors():
            views = jobs.list_jobs(self._root(), limit, live_only)
            data = {"jobs": [v.to_dict() for v in views]}
            return reply(render_list(views), JobListOutput.model_validate(data))

    def job_apply(self, job_id: JobId) -> Annotated[CallToolResult, JobOutput]:
        """Apply a worktree job's result to the working tree it was started from.

        The saved patch is applied as uncommitted changes (all or nothing: a conflict changes
        nothing and is reported), then the job's worktree and branch are removed; the patch
        stays under .autoresearch/jobs/<job_id>/.
        """
        with tool_errors():
            return _out(jobs.apply(self._root(), job_id))

    def job_discard(self, job_id: JobId) -> Annotated[CallToolResult, JobOutput]:
        """Remove a worktree job's worktree and branch without applying it (the patch stays
        under .autoresearch/jobs/<job_id>/)."""
        with tool_errors():
            return _out(jobs.discard(self._root(), job_id))
