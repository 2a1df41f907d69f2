"""A job as callers see it: its record folded into the facts of the verdict, the verdict, and
compact evidence (never the transcript). Text renderings for the CLI and the MCP replies."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from autoresearch import redact
from autoresearch.contracts.job_result import (
    ArtifactJson,
    CheckRun,
    ExecutorRecord,
    SemanticJson,
    StageRecord,
    Workspace,
)
from autoresearch.journal.jobs import JobRecord
from autoresearch.paths import job_paths
from autoresearch.states import JobState, ResultState
from autoresearch.worker import evidence as ev
from autoresearch.worker import reliability
from autoresearch.worker.model import JobSpec
from autoresearch.worker.outcome import Executor, Facts, Outcome, Reliability, resolve

# A runner records a timeout within its kill grace; past the deadline by this much a job that
# still looks live is reported as timed out.
DEADLINE_SLACK_SECONDS = 30.0

# The workspace of a job whose end is not recorded yet: nothing seen, so nothing complete.
NOT_GATHERED = Workspace(
    changed_files=(),
    preexisting_files=(),
    unattributed_files=(),
    out_of_scope_files=(),
    allowed_outside_repo=False,
    complete=False,
    note=None,
    diff_bytes=None,
    patch=None,
)


def workspace_of(job: JobRecord) -> Workspace:
    """What the job's end recorded of its workspace (`NOT_GATHERED` before)."""
    e = job.evidence
    return NOT_GATHERED if e is None or e.workspace is None else e.workspace


def facts_of(job: JobRecord, spec: JobSpec, now: float) -> Facts:
    """The verdict's inputs, read from what the runner recorded (pure)."""
    state, w = job.state, workspace_of(job)
    semantic = None if job.evidence is None else job.evidence.semantic
    limit = spec.max_diff_bytes
    late = job.deadline is not None and now > job.deadline + DEADLINE_SLACK_SECONDS
    return Facts(
        state=state,
        deadline_passed=not state.terminal and late,
        task_kind=spec.task_kind,
        executor=_executor(job, state),
        changed_files=len(w.changed_files),
        out_of_scope=len(w.out_of_scope_files),
        diff_too_large=limit is not None and w.diff_bytes is not None and w.diff_bytes > limit,
        scope_declared=spec.scope_paths is not None,
        checks=tuple(c.status for c in job.check_runs),
        checks_declared=len(spec.checks),
        evidence_truncated=len(w.changed_files) > ev.MAX_LISTED_FILES,
        preexisting_unattributed=bool(w.unattributed_files),
        # changes in an allowed dir outside the repository cannot be seen
        workspace_complete=w.complete and not w.allowed_outside_repo,
        semantic_gate=spec.semantic_gate,
        semantic=None if semantic is None else semantic.status,
        stages_declared=len(spec.stages),
        stages_complete=_stages_complete(job),
        reliability=Reliability(
            spec.reliability_tier, spec.blocking_policy, reliability.missing_gates(spec)
        ),
    )


def _stages_complete(job: JobRecord) -> int:
    """How many stages, from the first, ran with complete evidence."""
    records = () if job.evidence is None else job.evidence.stages
    count = 0
    for record in records:
        if not record.complete:
            break
        count += 1
    return count


def _executor(job: JobRecord, state: JobState) -> Executor:
    if state is JobState.LOST:
        return Executor.LOST
    if state is JobState.FAILED:
        return Executor.FAILED
    if job.executor is None:
        return Executor.NOT_RUN if state.terminal else Executor.PENDING
    return job.executor.status


class CheckSummary(TypedDict):
    name: str
    command: str
    status: str
    exit_code: int | None
    duration_ms: int
    output_sha256: str | None
    output_bytes: int | None
    log: str | None
    tail: str


class StageSummary(TypedDict):
    stage: int
    executor: str
    complete: bool
    checks: list[CheckSummary]


class Evidence(TypedDict):
    """A job view's `evidence`: compact, its lists bounded, never the transcript."""

    changed_files: list[str]
    changed_files_total: int
    changed_files_truncated: bool
    preexisting_files: list[str]
    unattributed_files: list[str]
    out_of_scope_files: list[str]
    diff_bytes: int | None
    max_diff_bytes: int | None
    workspace_note: str | None
    executor: dict[str, object] | None  # the keys the agent reported, no more
    checks: list[CheckSummary]
    artifacts: list[ArtifactJson]
    diff: NotRequired[str]  # include_diff
    diff_truncated: NotRequired[bool]
    semantic: NotRequired[SemanticJson]
    revisions: NotRequired[int]
    stages: NotRequired[list[StageSummary]]


@dataclass(frozen=True)
class JobView:
    """One job with its verdict."""

    job: JobRecord
    spec: JobSpec
    outcome: Outcome
    evidence: Evidence

    @property
    def state(self) -> JobState:
        return self.job.state

    def to_dict(self) -> dict[str, object]:
        """The JSON answer, secrets redacted (it leaves the worker)."""
        return dict(redact.current().value(self._plain()))

    def _plain(self) -> dict[str, object]:
        j = self.job
        return {
            "job_id": j.job_id,
            "state": j.state,
            "agent": self.spec.agent,
            "isolation": self.spec.isolation.value,
            "task_kind": None if self.spec.task_kind is None else self.spec.task_kind.value,
            "prompt": _first_line(self.spec.prompt),
            "workdir": j.workdir,
            "created_at": j.created_at,
            "started_at": j.started_at,
            "finished_at": j.finished_at,
            "cancel_requested": j.cancel_requested_at is not None,
            "error": j.error,
            "result": {
                "state": j.result_state,
                "branch": j.branch,
                "worktree": j.worktree_path,
                "commit": j.result_commit,
                "patch": j.patch_path,
            },
            **self.outcome.on(self.evidence).to_dict(),
        }


def build(job: JobRecord, now: float | None = None) -> JobView:
    spec = job.spec
    outcome = resolve(facts_of(job, spec, time.time() if now is None else now))
    evidence = redact.current().value(evidence_of(job, spec))
    return JobView(job, spec, outcome, evidence)


def evidence_of(job: JobRecord, spec: JobSpec) -> Evidence:
    """Changed files, checks, the executor's summary and artifact references (the JSON edge)."""
    w = workspace_of(job)
    files, cut = ev.listed(w.changed_files)
    out: Evidence = {
        "changed_files": files,
        "changed_files_total": len(w.changed_files),
        "changed_files_truncated": cut,
        "preexisting_files": ev.listed(w.preexisting_files)[0],
        "unattributed_files": list(w.unattributed_files),
        "out_of_scope_files": list(w.out_of_scope_files),
        "diff_bytes": w.diff_bytes,
        "max_diff_bytes": spec.max_diff_bytes,
        "workspace_note": w.note,
        "executor": _executor_summary(job.executor),
        "checks": [_check_summary(c) for c in job.check_runs],
        "artifacts": _artifacts(job),
    }
    if spec.include_diff:
        out["diff"], out["diff_truncated"] = _inline_diff(w, spec)
    semantic = None if job.evidence is None else job.evidence.semantic
    if semantic is not None:
        out["semantic"] = semantic.to_dict()
    if spec.revise_passes:
        out["revisions"] = 0 if job.evidence is None else job.evidence.revisions
    if spec.stages:
        records = () if job.evidence is None else job.evidence.stages
        out["stages"] = [_stage_summary(r) for r in records]
    return out


def _stage_summary(record: StageRecord) -> StageSummary:
    return {
        "stage": record.number,
        "executor": record.executor.value,
        "complete": record.complete,
        "checks": [_check_summary(c) for c in record.checks],
    }


def _executor_summary(executor: ExecutorRecord | None) -> dict[str, object] | None:
    """The stored record's keys the caller gets: a key the agent did not report stays out."""
    if executor is None:
        return None
    data = executor.to_dict()
    keys = ("status", "agent", "exit_code", "duration_ms", "timed_out", "cancelled", "error")
    more = (
        "turns",
        "input_tokens",
        "output_tokens",
        "cached_tokens",
        "cost_usd",
        "agent_cost_usd",  # a job on the gateway: cost_usd is by the price table instead
        "gateway_requests",
        "model",
        "denials",
    )
    return {k: data.get(k) for k in (*keys, *more) if k in data}


def _check_summary(c: CheckRun) -> CheckSummary:
    output = c.output
    return {
        "name": c.name,
        "command": c.command,
        "status": c.status.value,
        "exit_code": c.run.exit_code,
        "duration_ms": c.run.duration_ms,
        "output_sha256": None if output is None else output.sha256,
        "output_bytes": None if output is None else output.bytes,
        "log": None if output is None else output.path,
        "tail": c.run.tail,
    }


def _artifacts(job: JobRecord) -> list[ArtifactJson]:
    paths = job_paths(Path(job.spec.repo_root), job.job_id)
    found = [ev.artifact(paths.agent_log), ev.artifact(paths.changes_patch)]
    found += [ev.artifact(paths.check_log(i)) for i in range(1, len(job.check_runs) + 1)]
    return [a.to_dict() for a in found if a is not None]


def _inline_diff(w: Workspace, spec: JobSpec) -> tuple[str, bool]:
    if w.patch is None or not w.patch.path:
        return "", False
    try:
        data = Path(w.patch.path).read_bytes()
    except OSError:
        return "", False
    limit = min(ev.DIFF_INLINE_MAX, spec.max_diff_bytes or ev.DIFF_INLINE_MAX)
    return ev.trimmed_diff(data, limit)


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit]


# --- text --------------------------------------------------------------------------------------


def render_job(view: JobView) -> str:
    """A few lines: the verdict, what changed, each check."""
    o, e, j = view.outcome, view.evidence, view.job
    reasons = ", ".join(r.value for r in o.reason_codes)
    lines = [f"job {j.job_id}: {o.status.value} ({reasons}) – state {j.state}"]
    if j.error:
        lines.append(f"  error: {redact.redact(j.error)}")
    if e["changed_files_total"]:
        shown = ", ".join(e["changed_files"][:10])
        more = e["changed_files_total"] - min(10, len(e["changed_files"]))
        lines.append(f"  changed: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    if e["out_of_scope_files"]:
        lines.append("  out of scope: " + ", ".join(e["out_of_scope_files"][:10]))
    for stage in e.get("stages", ()):
        failed = [c["name"] for c in stage["checks"] if c["status"] != "passed"]
        state = "complete" if stage["complete"] else f"incomplete (session {stage['executor']})"
        detail = f"; failed: {', '.join(failed)}" if failed else ""
        lines.append(f"  stage {stage['stage']}: {state}{detail}")
    for c in e["checks"]:
        lines.append(
            f"  check {c['name']}: {c['status']} (exit {c['exit_code']}, {c['duration_ms']} ms)"
        )
    if j.result_state is not ResultState.NONE:
        lines.append(f"  result: {_result_text(j, view.spec)}")
    return "\n".join(lines)


def _result_text(j: JobRecord, spec: JobSpec) -> str:
    """Where a worktree job's change is now: apply and discard remove its branch and worktree
    (jobs.apply / jobs.discard), so only a pending result is still on the branch."""
    commit = (j.result_commit or "")[:12]
    if j.result_state is ResultState.PENDING:
        return f"{j.result_state} on branch {j.branch} ({commit})"
    kept = f"the patch stays at {j.patch_path}" if j.patch_path else "no patch was saved"
    removed = f"branch {j.branch} and its worktree are removed"
    if j.result_state is ResultState.APPLIED:
        return (
            f"{j.result_state} – the changes of {commit} are uncommitted edits in {spec.cwd} "
            f"now; {removed} ({kept})"
        )
    on_no_branch = f"commit {commit} is on no branch now; " if commit else ""
    return f"{j.result_state} – {removed} ({on_no_branch}{kept})"


def render_list(views: list[JobView]) -> str:
    if not views:
        return "no jobs"
    # The prompt is the caller's text: it may carry a secret like any other view.
    return redact.redact("\n".join(_list_row(v) for v in views))


def _list_row(v: JobView) -> str:
    prompt = _first_line(v.spec.prompt, 60)
    return f"{v.job.job_id}  {v.job.state:<9}  {v.outcome.status.value:<14}  {prompt}"
