"""The delegation worker's zero-model MCP tools (worker.md "Zero-model tools"): search,
read_pack, diff_digest, shell, apply_edits, history, get_artifact.

Thin door: each tool parses its arguments, calls one function of
`autoresearch.worker.tools`, and replies with a short text plus the structured result, its
receipt included. Every call is recorded in the worker's metrics (`autoresearch worker stats`).
Paths are sandboxed inside the repository the server acts on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from autoresearch.api import (
    Category,
    QualityMode,
    Workspace,
    find_repo,
    measured,
    model_tools,
    reading,
    search,
    shell,
)
from autoresearch.api import edits as edit_ops
from autoresearch.mcp.support import DESTRUCTIVE, READ_ONLY, WRITES, add_tools, reply, tool_errors

# Reads only, but talks to the gateway: the open world.
READ_ONLY_MODEL = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReceiptOut(_Shape):
    bytes_read: int
    bytes_returned: int
    artifacts: list[str] = Field(description="Refs for get_artifact.")
    truncated: bool


class SearchMatch(_Shape):
    path: str
    line: int
    text: str


class SearchCount(_Shape):
    path: str
    count: int


class SearchOutput(_Shape):
    mode: str
    engine: str = Field(description="ripgrep | git_grep | python")
    matches: list[SearchMatch] | None = None
    files: list[str] | None = None
    counts: list[SearchCount] | None = None
    total_matches: int
    total_files: int
    receipt: ReceiptOut


class PackFile(_Shape):
    path: str
    windows: list[list[int]] = Field(description="[first, last] line numbers, from 1.")


class PackOutput(_Shape):
    files: list[PackFile]
    pack: str
    receipt: ReceiptOut


class DigestFile(_Shape):
    path: str
    added: int
    deleted: int
    status: str
    risk: str = Field(description="low | medium | high")
    hunks: list[str]


class DigestOutput(_Shape):
    base: str
    files: list[DigestFile]
    highest_risk: str | None
    receipt: ReceiptOut


class ShellOutput(_Shape):
    command: str
    exit_code: int | None
    ok: bool
    tool_ok: bool = Field(description="False when the command could not run or timed out.")
    failure_kind: str
    duration_ms: int
    stdout_tail: str
    stderr_tail: str
    receipt: ReceiptOut


class EditResult(_Shape):
    index: int
    path: str
    expected: int
    found: int


class EditsOutput(_Shape):
    applied: bool
    files_changed: list[str]
    edits: list[EditResult]
    receipt: ReceiptOut


class HistoryOutput(_Shape):
    path: str | None
    log: list[str]
    blame: list[str] | None = None
    receipt: ReceiptOut


class ArtifactOutput(_Shape):
    ref: str
    offset: int
    total_bytes: int
    next_offset: int | None
    text: str
    receipt: ReceiptOut


class AttemptOut(_Shape):
    endpoint: str = Field(description="primary | fallback")
    model: str
    status: str = Field(description="HTTP status, timeout, connection_error or bad_response")
    latency_ms: float
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost: float | None = Field(description="From the configured price table; None without one.")
    waited_s: float = Field(description="The wait before this attempt (Retry-After, backoff).")


class QualityRole(_Shape):
    role: str = Field(description="main | independent | red_team | arbiter")
    model: str = Field(description="The model asked for.")
    answered_by: str | None = Field(description="The model the gateway says answered.")
    finish_reason: str | None
    verdict: str | None
    issues: list[str]
    answer: str | None = Field(description="The role's answer when a direct review is needed.")


class QualityOut(_Shape):
    contract_version: str = Field(description="quality.v1")
    mode: str
    status: str = Field(description="passed | needs_direct_review | failed")
    reason_codes: list[str]
    verdict: str | None = Field(description="The arbiter's verdict.")
    agreement: str | None = Field(description="agree | resolved | unresolved (the arbiter's)")
    roles: list[QualityRole]
    model_calls: int


class ModelOutput(_Shape):
    answer: str | None
    degraded: bool = Field(description="True: the circuit is open; evidence is local, no model.")
    endpoint: str | None
    model: str | None
    attempts: list[AttemptOut]
    cost: float | None
    evidence: dict[str, Any] | None
    quality: QualityOut | None = Field(
        default=None,
        description="quality_mode high: the quality.v1 verdict; answer is set "
        "only when its status is passed.",
    )
    receipt: ReceiptOut


QualityModeArg = Annotated[
    Literal["standard", "high"],
    Field(
        description="high: three role branches (main, independent, red team) and an arbiter, "
        "4 model calls; fails closed (quality.status needs_direct_review or failed)."
    ),
]


class EditInput(_Shape):
    path: str = Field(min_length=1)
    old: str = Field(min_length=1, description="Literal text, or a Python regex with regex.")
    new: str = Field(description="Replacement (with regex: \\1 and \\g<name> work).")
    regex: bool = False
    count: int = Field(default=1, ge=0, description="Exactly this many matches, or nothing.")


Paths = Annotated[list[str] | None, Field(max_length=100, description="Inside the repository.")]


def _as_text(structured: BaseModel) -> str:
    """The result serialized as JSON, as the MCP spec asks of a tool with an output schema: a
    host that gives the model only text content sees the data too (Claude Code, Codex and
    Copilot give it the structured content instead, so this costs them nothing)."""
    return json.dumps(structured.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


class WorkerTools:
    """The zero-model tools of one server; `start()` is the directory the server acts on."""

    def __init__(self, start: Callable[[], Path]) -> None:
        self._start = start

    def register(self, server: MCPServer) -> None:
        add_tools(
            server,
            [
                (self.search, "Search the repository", READ_ONLY),
                (self.read_pack, "Keyword and symbol windows from files", READ_ONLY),
                (self.diff_digest, "A digest of the working tree's changes", READ_ONLY),
                (self.shell, "Run one bounded command", DESTRUCTIVE),
                (self.apply_edits, "Apply replacements, all or nothing", WRITES),
                (self.history, "git log and blame, bounded", READ_ONLY),
                (self.get_artifact, "A slice of an artifact", READ_ONLY),
                (self.analyze, "Ask a cheap model about files", READ_ONLY_MODEL),
                (self.review, "A cheap model's review of the changes", READ_ONLY_MODEL),
                (
                    self.draft,
                    "A cheap model's commit message, PR text or changelog",
                    READ_ONLY_MODEL,
                ),
            ],
        )

    def _call(
        self,
        tool: str,
        model: type[BaseModel],
        work: Callable[[Workspace], Any],
        degrade: Callable[[Workspace], Any] | None = None,
        category: Category = Category.ZERO_MODEL,
    ) -> CallToolResult:
        with tool_errors():
            ws = Workspace(find_repo(self._start()))
            fallback = None if degrade is None else (lambda: degrade(ws))
            data = measured(ws, tool, lambda: work(ws), category=category, degrade=fallback)
            structured = model.model_validate(data)
            answer = data.get("answer")
            text = answer if isinstance(answer, str) else _as_text(structured)
            return reply(text, structured)

    async def _model_call(
        self,
        tool: str,
        work: Callable[[Workspace], Any],
        degrade: Callable[[Workspace], Any] | None = None,
        mode: str = "standard",
    ) -> CallToolResult:
        # High quality never falls back to local evidence: an open circuit refuses instead.
        fallback = degrade if mode == "standard" else None
        # Gateway calls wait on the network (and on Retry-After): off the event loop.
        return await anyio.to_thread.run_sync(
            lambda: self._call(tool, ModelOutput, work, fallback, Category.MODEL)
        )

    async def analyze(
        self,
        question: Annotated[str, Field(min_length=1, description="What to find out.")],
        files: Annotated[
            list[str],
            Field(
                min_length=1,
                max_length=50,
                description="Inside the repository; a glob (src/**/*.py) stands for the files "
                "it matches, 50 in all at most.",
            ),
        ],
        quality_mode: QualityModeArg = "standard",
    ) -> Annotated[CallToolResult, ModelOutput]:
        """Ask the gateway's cheap model a read-only question over files (at most 48 KB sent,
        secrets redacted). When its circuit is open, answers with keyword windows instead
        (degraded), except with quality_mode high, which fails closed."""
        mode = QualityMode(quality_mode)
        return await self._model_call(
            "analyze",
            lambda ws: model_tools.analyze(ws, question, files, mode=mode),
            lambda ws: model_tools.analyze_locally(ws, question, files),
            quality_mode,
        )

    async def review(
        self,
        base: Annotated[str, Field(min_length=1, description="Commit to compare with.")] = "HEAD",
        files: Paths = None,
        job_id: Annotated[
            str | None,
            Field(min_length=1, description="Review this finished job's recorded diff instead."),
        ] = None,
        quality_mode: QualityModeArg = "standard",
    ) -> Annotated[CallToolResult, ModelOutput]:
        """A cheap model's review of the working tree's diff against base (bugs, risks, a
        verdict), or with job_id of the diff a finished job recorded, judged against its
        prompt. At most 48 KB sent, secrets redacted. When its circuit is open, answers with
        the diff digest instead (degraded), except with quality_mode high, which fails
        closed."""
        mode = QualityMode(quality_mode)
        if job_id is not None:
            return await self._model_call(
                "review",
                lambda ws: model_tools.review_job(ws, job_id, base, files, mode=mode),
                lambda ws: model_tools.review_job_locally(ws, job_id),
                quality_mode,
            )
        return await self._model_call(
            "review",
            lambda ws: model_tools.review(ws, base, files, mode=mode),
            lambda ws: model_tools.review_locally(ws, base, files),
            quality_mode,
        )

    async def draft(
        self,
        kind: Annotated[
            Literal["commit_message", "pr", "changelog"], Field(description="What to write.")
        ],
        base: Annotated[str, Field(min_length=1, description="Commit to compare with.")] = "HEAD",
    ) -> Annotated[CallToolResult, ModelOutput]:
        """A cheap model's commit message, PR text or changelog entry for the diff since base."""
        return await self._model_call(
            "draft", lambda ws: model_tools.draft(ws, model_tools.DraftKind(kind), base)
        )

    def search(
        self,
        pattern: Annotated[str, Field(min_length=1, description="A regex, or text with literal.")],
        mode: Annotated[
            Literal["lines", "files", "count"], Field(description="lines | files | count")
        ] = "lines",
        paths: Paths = None,
        literal: Annotated[bool, Field(description="The pattern is plain text.")] = False,
        ignore_case: Annotated[bool, Field(description="Case-insensitive.")] = False,
        glob: Annotated[str | None, Field(description="Only files matching, e.g. *.py")] = None,
        max_results: Annotated[
            int, Field(ge=1, le=search.MAX_RESULTS, description="Rows at most.")
        ] = 200,
    ) -> Annotated[CallToolResult, SearchOutput]:
        """Search file contents (ripgrep; git grep or a Python walker when it is missing).

        lines: path, line number and the line (cut at 300 characters, secrets redacted);
        files: matching paths; count: matches per file. At most max_results rows.
        """
        query = search.Query(
            pattern, search.Mode(mode), tuple(paths or ()), literal, ignore_case, glob, max_results
        )
        return self._call("search", SearchOutput, lambda ws: search.search(ws, query))

    def read_pack(
        self,
        files: Annotated[
            list[str],
            Field(min_length=1, max_length=reading.MAX_FILES, description="Inside the repository."),
        ],
        keywords: Annotated[list[str] | None, Field(description="Case-insensitive.")] = None,
        symbols: Annotated[list[str] | None, Field(description="Definitions by name.")] = None,
        window: Annotated[
            int, Field(ge=0, le=reading.MAX_WINDOW, description="Lines around each hit.")
        ] = 3,
    ) -> Annotated[CallToolResult, PackOutput]:
        """Windows of lines around keywords and symbol definitions in chosen files.

        Inline payload at most 16 KB; a larger pack is kept whole as an artifact (receipt).
        Without keywords or symbols, the first 100 lines of each file.
        """
        return self._call(
            "read_pack",
            PackOutput,
            lambda ws: reading.read_pack(ws, files, keywords or [], symbols or [], window),
        )

    def diff_digest(
        self,
        base: Annotated[str, Field(min_length=1, description="Commit to compare with.")] = "HEAD",
        paths: Paths = None,
        max_hunks: Annotated[int, Field(ge=0, le=200, description="Hunk headers per file.")] = 20,
    ) -> Annotated[CallToolResult, DigestOutput]:
        """Changed files since base (tracked files): +/- counts, hunk headers, per-file risk
        (high for build, schema, security files and deletions). The full diff is an artifact."""
        return self._call(
            "diff_digest", DigestOutput, lambda ws: reading.diff_digest(ws, base, paths, max_hunks)
        )

    async def shell(
        self,
        command: Annotated[str, Field(min_length=1, description="Run by bash -c.")],
        cwd: Annotated[str, Field(description="Inside the repository.")] = ".",
        timeout_seconds: Annotated[
            float,
            Field(gt=0, le=shell.MAX_TIMEOUT_SECONDS, description="Then the group is killed."),
        ] = 120,
        allow_destructive: Annotated[
            bool, Field(description="Run rm, git reset --hard, … anyway.")
        ] = False,
    ) -> Annotated[CallToolResult, ShellOutput]:
        """Run one bounded command; the digest separates "the tool worked" (tool_ok) from "the
        tests failed" (failure_kind: test_failure | typecheck_failure | lint_failure |
        build_failure | missing_command | timeout | command_failed | none). Destructive
        commands (rm, git reset --hard, git clean, git push, …) are refused unless
        allow_destructive. Output tails are 4 KB; the whole log is an artifact."""
        request = shell.ShellRequest(command, cwd, timeout_seconds, allow_destructive)

        def work() -> CallToolResult:
            return self._call("shell", ShellOutput, lambda ws: shell.shell(ws, request))

        # A long command must not stall the server's other calls.
        return await anyio.to_thread.run_sync(work)

    def apply_edits(
        self,
        edits: Annotated[
            list[EditInput],
            Field(min_length=1, max_length=edit_ops.MAX_EDITS, description="Applied in order."),
        ],
        dry_run: Annotated[bool, Field(description="Check the counts, write nothing.")] = False,
    ) -> Annotated[CallToolResult, EditsOutput]:
        """Literal or regex replacements, each with its expected match count (default 1). All
        counts are checked before any file is written: the batch applies whole or not at all,
        even if the server is killed midway."""
        batch = [edit_ops.Edit(e.path, e.old, e.new, e.regex, e.count) for e in edits]
        return self._call(
            "apply_edits", EditsOutput, lambda ws: edit_ops.apply_edits(ws, batch, dry_run)
        )

    def history(
        self,
        path: Annotated[str | None, Field(description="A file (default: the repository).")] = None,
        limit: Annotated[
            int, Field(ge=1, le=reading.MAX_HISTORY, description="Commits at most.")
        ] = 20,
        start_line: Annotated[int | None, Field(ge=1, description="Blame from here.")] = None,
        end_line: Annotated[int | None, Field(ge=1, description="Blame to here.")] = None,
    ) -> Annotated[CallToolResult, HistoryOutput]:
        """git log of a file (or the repository), and git blame of a line range, bounded."""
        lines = None if start_line is None else (start_line, end_line or start_line)
        return self._call(
            "history", HistoryOutput, lambda ws: reading.history(ws, path, limit, lines)
        )

    def get_artifact(
        self,
        ref: Annotated[str, Field(min_length=1, description="From a receipt's artifacts.")],
        offset: Annotated[int, Field(ge=0, description="First byte.")] = 0,
        length: Annotated[
            int, Field(ge=1, le=reading.MAX_SLICE, description="Bytes at most.")
        ] = 16384,
    ) -> Annotated[CallToolResult, ArtifactOutput]:
        """A slice of an artifact (bytes offset..offset+length); next_offset for the rest."""
        return self._call(
            "get_artifact", ArtifactOutput, lambda ws: reading.get_artifact(ws, ref, offset, length)
        )
