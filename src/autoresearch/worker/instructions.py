"""What a job's agent is told: the task and the rules its result is judged by, a stage's part
with the evidence of the stages before it, and a revise pass's failure digest. Pure text from
the job's spec and records; the runner writes it beside the job's prompt."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autoresearch.contracts.job_result import CheckResult, CheckRun, StageRecord
from autoresearch.states import TaskKind
from autoresearch.worker.model import JobSpec

REVISE_TAIL_LINES = 40


def revise_digest(number: int, limit: int, checks: list[CheckRun]) -> str:
    """What a revise pass is told: which checks failed and how, the tail of their output."""
    lines = [
        "",
        f"--- Revise pass {number} of {limit}: the checks below failed after your last "
        "session. Fix the change so that they pass; do not change the checks.",
    ]
    for check in checks:
        if check.status is CheckResult.PASSED:
            continue
        run = check.run
        lines.append(f"- `{check.command}`: {check.status.value}, exit code {run.exit_code}")
        tail = "\n".join(run.tail.splitlines()[-REVISE_TAIL_LINES:])
        if tail.strip():
            lines += ["```", tail, "```"]
    return "\n".join(lines) + "\n"


def stage_instructions(
    spec: JobSpec, number: int, workdir: Path, earlier: Sequence[StageRecord] = ()
) -> str:
    """A stage's prompt: the whole task for context, then this stage's part, the evidence of
    the stages before it (so the session builds on checked work, not on a guess) and its
    checks."""
    stage = spec.stages[number - 1]
    lines = [
        spec.prompt.rstrip(),
        "",
        f"--- Stage {number} of {len(spec.stages)}: do only this part now (the earlier stages' "
        "work is already in place).",
        stage.prompt.rstrip(),
        "",
        *stage_evidence_lines(earlier),
        "---",
        "Rules of this stage (checked after you finish):",
        f"- work in {workdir}",
    ]
    if spec.scope_paths is not None:
        lines.append("- change only files under: " + ", ".join(spec.scope_paths))
    lines += [f"- must pass: `{c.command}`" for c in stage.checks]
    return "\n".join(lines) + "\n"


def stage_evidence_lines(earlier: Sequence[StageRecord]) -> list[str]:
    """What the earlier stages proved: each one's completeness and the checks it passed."""
    if not earlier:
        return []
    lines = ["Evidence of the earlier stages (checked by the worker):"]
    for record in earlier:
        state = "complete" if record.complete else "incomplete"
        passed = [c for c in record.checks if c.status is CheckResult.PASSED]
        tail = "; passed " + ", ".join(f"`{c.command}`" for c in passed) if passed else ""
        lines.append(f"- stage {record.number}: {state}{tail}")
    return [*lines, ""]


def job_instructions(spec: JobSpec, workdir: Path) -> str:
    """The agent's prompt: the caller's task, then the rules its result is judged by."""
    lines = [spec.prompt.rstrip(), "", "---", "Rules of this job (checked after you finish):"]
    if spec.task_kind is not None:
        kind = "read-only: change no file" if spec.task_kind == TaskKind.READ_ONLY else "modifying"
        lines.append(f"- task: {kind}")
    lines.append(f"- work in {workdir}")
    if spec.scope_paths is not None:
        lines.append("- change only files under: " + ", ".join(spec.scope_paths))
    for check in spec.checks:
        lines.append(f"- must pass: `{check.command}`")
    return "\n".join(lines) + "\n"
