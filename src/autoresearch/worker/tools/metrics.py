"""Metrics: one JSONL row per tool call under `.autoresearch/worker/metrics.jsonl`, and the
summary `autoresearch worker stats` prints and gates on.

A row: `ts`, `tool`, `category` (zero_model), `status` (ok | error), `error_kind` (the
error's class, or the shell's `failure_kind`), `bytes_read`, `bytes_returned`, `artifacts`,
`truncated`, `latency_ms`. Rows are redacted, appended with one write each (O_APPEND: rows of
concurrent servers interleave whole), to a private file. A torn or foreign line is skipped
by the reader and counted, never fatal.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import NotRequired, TypedDict, TypeVar

from autoresearch.clock import utc_now_iso
from autoresearch.errors import AutoresearchError, RefusedError
from autoresearch.fsutil import private_open
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.redact import redact_value
from autoresearch.worker.tools.base import Workspace
from autoresearch.worker.tools.shell import FailureKind

METRICS_FILE = "metrics.jsonl"


class Category(StrEnum):
    ZERO_MODEL = "zero_model"
    MODEL = "model"  # analyze, review, draft: one row per call
    GATEWAY_ATTEMPT = "gateway_attempt"  # and one per HTTP attempt they made


class Status(StrEnum):
    OK = "ok"
    ERROR = "error"


class MetricsRow(TypedDict):
    """One line of metrics.jsonl: a tool call's row, or a gateway attempt's (tool `gateway`
    for the model tools, `bridge` for a claude job's requests)."""

    ts: str
    tool: str
    category: Category
    for_tool: NotRequired[str]  # a gateway attempt: the tool or job that made it
    status: NotRequired[Status]
    error_kind: NotRequired[str | None]
    degraded: NotRequired[bool]  # the circuit was open: local evidence answered
    bytes_read: NotRequired[int]
    bytes_returned: NotRequired[int]
    artifacts: NotRequired[list[str]]
    truncated: NotRequired[bool]
    latency_ms: NotRequired[float]
    cost: NotRequired[float | None]
    # a gateway attempt's
    http_status: NotRequired[str]
    endpoint: NotRequired[str]
    model: NotRequired[str]
    stream: NotRequired[bool]
    prompt_tokens: NotRequired[int]
    completion_tokens: NotRequired[int]
    cached_tokens: NotRequired[int]
    waited_s: NotRequired[float]


def metrics_path(ws: Workspace) -> Path:
    return ws.state / METRICS_FILE


def record(ws: Workspace, row: MetricsRow) -> None:
    line = json.dumps(redact_value(row), ensure_ascii=False, sort_keys=True) + "\n"
    with private_open(metrics_path(ws), "ab", buffering=0) as handle:
        handle.write(line.encode())


Result = TypeVar("Result", bound=Mapping[str, object])  # a tool's answer, with its receipt


def measured(
    ws: Workspace,
    tool: str,
    work: Callable[[], Result],
    *,
    category: Category = Category.ZERO_MODEL,
    degrade: Callable[[], Result] | None = None,
) -> Result:
    """Run one tool call behind its circuit breaker and record its row, whether it answers,
    raises or is refused. With `degrade`, an open circuit answers with it instead."""
    from autoresearch.worker.tools.circuits import Breakers, classify_exception, classify_result

    breakers = Breakers(ws)
    t0 = time.monotonic()
    row: MetricsRow = {"ts": utc_now_iso(), "tool": tool, "category": category}
    try:
        try:
            breakers.check(tool)
        except RefusedError:
            if degrade is None:
                raise
            result = degrade()
            row["degraded"] = True
        else:
            try:
                result = work()
            except Exception as exc:
                error_class = classify_exception(exc)
                if error_class is not None:
                    breakers.record(tool, error_class)
                raise
            breakers.record(tool, classify_result(result))
    except Exception as exc:
        record_safely(ws, _errored(row, exc, t0))
        raise
    record_safely(ws, _answered(row, result, t0))
    return result


def _errored(row: MetricsRow, exc: Exception, t0: float) -> MetricsRow:
    """`row` of a call that raised (or was refused): nothing read, nothing returned."""
    return {**row, "status": Status.ERROR, "error_kind": _kind(exc), "bytes_read": 0,
            "bytes_returned": 0, "artifacts": [], "truncated": False,
            "latency_ms": round((time.monotonic() - t0) * 1000, 1)}  # fmt: skip


def _answered(row: MetricsRow, result: Mapping[str, object], t0: float) -> MetricsRow:
    """`row` of an answered call, from its result's receipt (a shell's failure_kind is its
    error kind)."""
    receipt = result.get("receipt")
    counts = receipt if isinstance(receipt, dict) else {}
    failure = result.get("failure_kind")
    found: MetricsRow = {
        **row,
        "status": Status.OK,
        "error_kind": None if failure in (None, FailureKind.NONE) else str(failure),
        "bytes_read": counts.get("bytes_read", 0),
        "bytes_returned": counts.get("bytes_returned", 0),
        "artifacts": counts.get("artifacts", []),
        "truncated": counts.get("truncated", False),
        "latency_ms": round((time.monotonic() - t0) * 1000, 1),
    }
    cost = result.get("cost")
    if isinstance(cost, int | float):
        found["cost"] = cost
    return found


def _kind(exc: Exception) -> str:
    # The structured class of the failure (a refusal, a missing file…), not its message.
    if isinstance(exc, AutoresearchError):
        code = exc.message.split(":", 1)[0]
        return code if code.startswith("autoresearch_") else type(exc).__name__
    return "internal_error"


def record_safely(ws: Workspace, row: MetricsRow) -> None:
    # A full disk must not turn an answered call into a failed one.
    with contextlib.suppress(OSError):
        record(ws, row)


@dataclass
class ToolStats:
    tool: str
    calls: int = 0
    errors: int = 0
    bytes_read: int = 0
    bytes_returned: int = 0
    truncated: int = 0
    # the raw readings stay in memory: the JSON has their percentiles (json_extra)
    latencies: list[float] = field(default_factory=list, metadata=json_field(hidden=True))

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    def json_extra(self) -> dict[str, object]:
        """What the counts come to, rounded to 4 places as the summary has always shown."""
        saved = round(self.bytes_returned / self.bytes_read, 4) if self.bytes_read else None
        return {
            "error_rate": round(self.error_rate, 4),
            "latency_p50_ms": percentile(self.latencies, 50),
            "latency_p95_ms": percentile(self.latencies, 95),
            "saved_ratio": saved,
        }


@dataclass
class Summary:
    tools: list[ToolStats]
    total: ToolStats
    skipped_lines: int
    over_threshold: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def percentile(values: list[float], p: int) -> float | None:
    """Nearest-rank percentile (pure)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summarize(lines: Iterable[str], max_error_rate: float | None = None) -> Summary:
    """Per-tool and total counts from metrics lines; tools over the error rate named (pure)."""
    by_tool: dict[str, ToolStats] = {}
    total = ToolStats("total")
    skipped = 0
    for line in lines:
        try:
            row = json.loads(line)
            tool, status = str(row["tool"]), row["status"]
        except (ValueError, KeyError, TypeError):
            skipped += 1
            continue
        for stats in (by_tool.setdefault(tool, ToolStats(tool)), total):
            stats.calls += 1
            stats.errors += status != Status.OK
            stats.bytes_read += int(row.get("bytes_read") or 0)
            stats.bytes_returned += int(row.get("bytes_returned") or 0)
            stats.truncated += bool(row.get("truncated"))
            stats.latencies.append(float(row.get("latency_ms") or 0))
    tools = sorted(by_tool.values(), key=lambda t: t.tool)
    over = []
    if max_error_rate is not None:
        over = [t.tool for t in [*tools, total] if t.error_rate > max_error_rate]
    return Summary(tools, total, skipped, over)


def load(ws: Workspace, max_error_rate: float | None = None) -> Summary:
    path = metrics_path(ws)
    if not path.is_file():
        return summarize([], max_error_rate)
    with path.open(encoding="utf-8", errors="replace") as handle:
        return summarize(handle, max_error_rate)


def render_metrics(summary: Summary) -> str:
    rows = [
        f"{'tool':<14}{'calls':>7}{'errors':>8}{'err%':>7}{'read':>12}{'returned':>11}"
        f"{'p50 ms':>9}{'p95 ms':>9}"
    ]
    for t in [*summary.tools, summary.total]:
        rows.append(
            f"{t.tool:<14}{t.calls:>7}{t.errors:>8}{100 * t.error_rate:>6.1f}%"
            f"{t.bytes_read:>12}{t.bytes_returned:>11}"
            f"{_ms(percentile(t.latencies, 50)):>9}{_ms(percentile(t.latencies, 95)):>9}"
        )
    if summary.skipped_lines:
        rows.append(f"({summary.skipped_lines} unreadable metrics lines skipped)")
    if summary.over_threshold:
        rows.append("error rate over the threshold: " + ", ".join(summary.over_threshold))
    return "\n".join(rows)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
