"""`analyze`, `review`, `draft`: one cheap-model call each through the gateway.

What is sent is bounded (CONTEXT_LIMIT bytes of files or diff) and redacted first: a secret
never leaves the worker, not even to the gateway. Each gateway attempt is a metrics row (tool
`gateway`, category `gateway_attempt`: endpoint, model, HTTP status, tokens, latency, cost).
When the circuit of `analyze` or `review` is open, they answer with local deterministic
evidence instead (`degraded`: keyword windows of the files, or the diff digest).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from autoresearch import git
from autoresearch.clock import utc_now_iso
from autoresearch.errors import AutoresearchError, ContractError
from autoresearch.paths import STATE_DIR, job_paths
from autoresearch.redact import redact
from autoresearch.worker import gateway
from autoresearch.worker.tools import reading
from autoresearch.worker.tools.answers import ModelAnswer
from autoresearch.worker.tools.base import Receipt, Workspace, bounded, finish
from autoresearch.worker.tools.quality import QualityMode, Task, run_high
from autoresearch.worker.tools.reading import Digest, ReadPack

CONTEXT_LIMIT = 48 * 1024
MAX_ANSWER_TOKENS = 1024
TASK_LIMIT = 4 * 1024  # of the job's prompt, sent beside its diff
CODE_JOB_RUNNING = "autoresearch_job_running"
MAX_ANALYZE_FILES = 50
_GLOB_CHARS = frozenset("*?[")
_NEVER_READ = (".git", STATE_DIR)  # a glob never reaches git's data or the tool's own state
ANALYZE_VERDICTS = ("supported", "unsupported")  # the files answer the question, or not
REVIEW_VERDICTS = ("ship", "fix_first")
_DIFF_PATH = re.compile(r"^(?:\+\+\+ b|--- a)/(.+)$", re.M)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


class DraftKind(StrEnum):
    COMMIT_MESSAGE = "commit_message"
    PR = "pr"
    CHANGELOG = "changelog"


_DRAFT_ASK = {
    DraftKind.COMMIT_MESSAGE: "Write a git commit message for this diff: a subject line under "
    "72 characters that says why, a blank line, then a short body.",
    DraftKind.PR: "Write a pull request description for this diff: a title, a summary of the "
    "change and why, and how it was tested if the diff shows it.",
    DraftKind.CHANGELOG: "Write a changelog entry for this diff: one to three bullet points "
    "for users.",
}


def _record_attempts(ws: Workspace, tool: str) -> Callable[[gateway.Attempt], None]:
    from autoresearch.worker.tools.metrics import Category, MetricsRow, Status, record_safely

    def on_attempt(a: gateway.Attempt) -> None:
        ok = a.status == "200"
        row: MetricsRow = {
            "ts": utc_now_iso(), "tool": "gateway", "for_tool": tool,
            "category": Category.GATEWAY_ATTEMPT, "status": Status.OK if ok else Status.ERROR,
            "error_kind": None if ok else a.status, "endpoint": a.endpoint, "model": a.model,
            "http_status": a.status, "latency_ms": a.latency_ms,
            "prompt_tokens": a.prompt_tokens, "completion_tokens": a.completion_tokens,
            "cached_tokens": a.cached_tokens, "cost": a.cost, "waited_s": a.waited_s,
        }  # fmt: skip
        record_safely(ws, row)

    return on_attempt


def _ask(
    ws: Workspace,
    tool: str,
    system: str,
    user: str,
    receipt: Receipt,
    config: gateway.GatewayConfig | None,
) -> ModelAnswer:
    cfg = config or gateway.load_config()
    prompt, cut_prompt = bounded(redact(user), CONTEXT_LIMIT)
    receipt.truncated |= cut_prompt
    done = gateway.complete(
        cfg,
        [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        max_tokens=MAX_ANSWER_TOKENS,
        on_attempt=_record_attempts(ws, tool),
    )
    return {
        "answer": done.text,
        "degraded": False,
        "endpoint": done.endpoint,
        "model": done.model,
        "attempts": [a.to_dict() for a in done.attempts],
        "cost": done.cost,
        "evidence": None,
    }


def _ask_high(
    ws: Workspace, task: Task, receipt: Receipt, config: gateway.GatewayConfig | None
) -> ModelAnswer:
    """`_ask` in quality mode high: the same bounded, redacted material to every role."""
    cfg = config or gateway.load_config()
    material, cut = bounded(redact(task.material), CONTEXT_LIMIT)
    receipt.truncated |= cut
    task = Task(task.tool, task.ask, material, task.verdicts, task.citable)
    return run_high(cfg, task, cut, _record_attempts(ws, task.tool))


def _answer(
    ws: Workspace,
    task: Task,
    receipt: Receipt,
    config: gateway.GatewayConfig | None,
    mode: QualityMode,
) -> ModelAnswer:
    if mode is QualityMode.HIGH:
        return finish(receipt, _ask_high(ws, task, receipt, config))
    return finish(receipt, _ask(ws, task.tool, task.ask, task.material, receipt, config))


def _files_text(ws: Workspace, files: list[str], receipt: Receipt) -> tuple[str, dict[str, int]]:
    """The files numbered by line, and each one's line count (what may be cited)."""
    parts, counts = [], {}
    for name in files:
        path = ws.path(name)
        lines = ws.read_text(path, receipt).splitlines()
        numbered = "\n".join(f"{i:>5}: {line}" for i, line in enumerate(lines, 1))
        parts.append(f"== {ws.rel(path)} ==\n{numbered}")
        counts[ws.rel(path)] = len(lines)
    return "\n".join(parts), counts


def analyze(
    ws: Workspace,
    question: str,
    files: list[str],
    config: gateway.GatewayConfig | None = None,
    mode: QualityMode = QualityMode.STANDARD,
) -> ModelAnswer:
    if not question.strip() or not files:
        raise ContractError("analyze: a question and at least one file")
    receipt = Receipt()
    context, counts = _files_text(ws, expand_files(ws, files), receipt)
    system = (
        "Answer the question from the files given only, citing path:line. Say so when "
        "the files do not answer it. Be brief."
    )
    material = f"Question: {question}\n\n{context}"
    task = Task("analyze", system, material, ANALYZE_VERDICTS, counts)
    return _answer(ws, task, receipt, config, mode)


def expand_files(ws: Workspace, names: list[str]) -> list[str]:
    """The files named, a glob (`src/**/*.py`, the source's bounded wildcards) standing for the
    files it matches in the repository; more than MAX_ANALYZE_FILES in all is refused, never
    cut, and a glob that matches nothing is an error."""
    found: list[str] = []
    for name in names:
        found += _glob(ws, name) if _GLOB_CHARS & set(name) else [name]
    unique = list(dict.fromkeys(found))
    if len(unique) > MAX_ANALYZE_FILES:
        raise ContractError(
            f"analyze: {len(unique)} files match; at most {MAX_ANALYZE_FILES}: narrow the globs"
        )
    return unique


def _glob(ws: Workspace, pattern: str) -> list[str]:
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise ContractError(f"analyze: a glob is relative to the repository: {pattern}")
    hits = sorted(
        ws.rel(path)
        for path in ws.root.glob(pattern)
        if path.is_file() and Path(ws.rel(path)).parts[0] not in _NEVER_READ
    )
    if not hits:
        raise ContractError(f"analyze: no file matches {pattern}")
    return [ws.rel(ws.path(hit)) for hit in hits]  # sandboxed: no symlink out


def analyze_locally(ws: Workspace, question: str, files: list[str]) -> ModelAnswer:
    """What `analyze` answers when its circuit is open: windows around the question's words."""
    words = sorted({w for w in _WORD.findall(question)}, key=str.lower)[:10]
    pack = reading.read_pack(ws, expand_files(ws, files), words, [], 2)
    return _degraded(pack, {"pack": pack["pack"], "files": pack["files"]})


def _degraded(inner: ReadPack | Digest, evidence: dict[str, object]) -> ModelAnswer:
    """The answer of an open circuit: `evidence` from a local reader's result `inner` (its
    receipt is the call's)."""
    receipt = Receipt(**inner["receipt"])
    answer: ModelAnswer = {
        "answer": None,
        "degraded": True,
        "endpoint": None,
        "model": None,
        "attempts": [],
        "cost": None,
        "evidence": evidence,
    }
    return finish(receipt, answer)


def _diff(ws: Workspace, base: str, files: list[str] | None, receipt: Receipt) -> str:
    rels = [ws.rel(ws.path(p)) for p in files or ()]
    text = git.working_diff(ws.root, base, rels)
    receipt.bytes_read += len(text.encode())
    if not text.strip():
        raise ContractError(f"no changes since {base} to work from")
    return text


def diff_citable(ws: Workspace, diff: str, in_tree: bool) -> dict[str, int | None]:
    """The files a diff touches, each with its line count in the working tree when the diff is
    of the working tree (`in_tree`); else the path alone may be cited."""
    found: dict[str, int | None] = {}
    for rel in _DIFF_PATH.findall(diff):
        found[rel] = _line_count(ws, rel) if in_tree else None
    return found


def _line_count(ws: Workspace, rel: str) -> int | None:
    try:
        path = ws.path(rel)  # sandboxed: a symlink out of the repository is not read
        return len(ws.read_text(path, Receipt()).splitlines())
    except AutoresearchError:
        return None  # deleted, binary or outside: the path alone may be cited


def review(
    ws: Workspace,
    base: str = "HEAD",
    files: list[str] | None = None,
    config: gateway.GatewayConfig | None = None,
    mode: QualityMode = QualityMode.STANDARD,
) -> ModelAnswer:
    receipt = Receipt()
    diff = _diff(ws, base, files, receipt)
    system = (
        "Review this diff as a careful senior engineer: list concrete bugs and risks "
        "with path:line, then a one-line verdict (ship / fix first). Be brief."
    )
    task = Task("review", system, diff, REVIEW_VERDICTS, diff_citable(ws, diff, in_tree=True))
    return _answer(ws, task, receipt, config, mode)


def review_locally(
    ws: Workspace, base: str = "HEAD", files: list[str] | None = None
) -> ModelAnswer:
    """What `review` answers when its circuit is open: the deterministic diff digest."""
    digest = reading.diff_digest(ws, base, files)
    return _degraded(digest, {"files": digest["files"], "highest_risk": digest["highest_risk"]})


@dataclass(frozen=True)
class JobDiff:
    """What a finished job recorded: its task and the patch of everything it changed."""

    job_id: str
    task: str
    base: str
    patch: str


def job_diff(ws: Workspace, job_id: str) -> JobDiff:
    """The recorded diff of a job of this repository (its `changes.patch`, written when the
    job ended: the same bytes whether it worked in place or in a worktree)."""
    from autoresearch.worker import jobs

    job = jobs.get(ws.root, job_id).job
    if not job.state.terminal:
        raise ContractError(
            f"{CODE_JOB_RUNNING}: {job_id} is {job.state}; its diff is recorded when it ends "
            "(job_wait, then review again)"
        )
    patch = job_paths(ws.root, job_id).changes_patch
    text = patch.read_bytes().decode("utf-8", "replace") if patch.is_file() else ""
    if not text.strip():
        raise ContractError(f"{job_id} recorded no changes to review")
    task = job.spec.prompt
    return JobDiff(job_id, task, job.base_commit or "", text)


def review_job(
    ws: Workspace,
    job_id: str,
    base: str = "HEAD",
    files: list[str] | None = None,
    config: gateway.GatewayConfig | None = None,
    mode: QualityMode = QualityMode.STANDARD,
) -> ModelAnswer:
    """A cheap model's review of a job's recorded diff against the task it was given."""
    if base != "HEAD" or files:
        raise ContractError("review: job_id reviews the job's own diff; omit base and files")
    receipt = Receipt()
    found = job_diff(ws, job_id)
    receipt.bytes_read += len(found.patch.encode())
    task, _cut = bounded(found.task, TASK_LIMIT)
    system = (
        "Review this diff, made by an agent for the task below, as a careful senior engineer: "
        "does it do the task, and nothing else? List concrete bugs and risks with path:line, "
        "then a one-line verdict (ship / fix first). Be brief."
    )
    user = f"Task given to the agent:\n{task}\n\nIts diff:\n{found.patch}"
    citable = diff_citable(ws, found.patch, in_tree=False)
    return _answer(
        ws, Task("review", system, user, REVIEW_VERDICTS, citable), receipt, config, mode
    )


def review_job_locally(ws: Workspace, job_id: str) -> ModelAnswer:
    """`review` of a job with its circuit open: the digest of the job's recorded patch."""
    found = job_diff(ws, job_id)
    digest = reading.digest_of(ws, found.patch, found.base)
    return _degraded(digest, {"files": digest["files"], "highest_risk": digest["highest_risk"]})


def draft(
    ws: Workspace, kind: DraftKind, base: str = "HEAD", config: gateway.GatewayConfig | None = None
) -> ModelAnswer:
    receipt = Receipt()
    diff = _diff(ws, base, None, receipt)
    return finish(receipt, _ask(ws, "draft", _DRAFT_ASK[kind], diff, receipt, config))
