"""The METRIC and ASI line grammar (experiments.md "Grammar"), pure and streaming.

`MetricScanner` consumes output chunk by chunk so that a multi-gigabyte log is parsed whole in
bounded memory; `parse_metric_line` / `parse_asi_line` are the table-tested pieces.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from autoresearch.streams import LineSplitter

_METRIC = re.compile(r"^\s*METRIC\s+([A-Za-z0-9_.\-\u00b5\u03bc]+)=(\S+)\s*$")
_ASI = re.compile(r"^\s*ASI\s+([A-Za-z0-9_.\-]+)=(.*)$")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_INTEGER = re.compile(r"^[+-]?\d+$")
IGNORED_NAMES = frozenset({"__proto__", "constructor", "prototype"})


def parse_number(text: str) -> float | None:
    """A finite decimal or scientific number, else None (`1_000`, hex, inf, nan are not)."""
    if not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def parse_metric_line(line: str) -> tuple[str, float] | None:
    """(name, value) for a valid `METRIC name=value` line, else None."""
    match = _METRIC.match(line)
    if match is None or match.group(1) in IGNORED_NAMES:
        return None
    value = parse_number(match.group(2))
    return None if value is None else (match.group(1), value)


def parse_asi_value(raw: str) -> Any:
    """Typed ASI value: literals, numbers, JSON for `{`/`[`/`"`, else the string."""
    text = raw.strip()
    literals: dict[str, Any] = {"true": True, "false": False, "null": None}
    if text in literals:
        return literals[text]
    if _INTEGER.match(text):
        try:
            return int(text)
        except ValueError:  # longer than Python converts: keep it as text
            return text
    number = parse_number(text)
    if number is not None:
        return number
    if text[:1] in ("{", "[", '"'):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def parse_asi_line(line: str) -> tuple[str, Any] | None:
    """(key, value) for a valid `ASI key=value` line, else None."""
    match = _ASI.match(line)
    if match is None or match.group(1) in IGNORED_NAMES:
        return None
    return match.group(1), parse_asi_value(match.group(2))


@dataclass
class ParsedLines:
    """Metrics and ASI found in an output; the last occurrence of a name wins."""

    metrics: dict[str, float] = field(default_factory=dict)
    asi: dict[str, object] = field(default_factory=dict)

    def add_line(self, line: str) -> None:
        if "METRIC" in line:
            metric = parse_metric_line(line)
            if metric is not None:
                self.metrics[metric[0]] = metric[1]
                return
        if "ASI" in line:
            asi = parse_asi_line(line)
            if asi is not None:
                self.asi[asi[0]] = asi[1]


def parse_text(text: str) -> ParsedLines:
    """Parse a whole output held in memory."""
    parsed = ParsedLines()
    for line in text.split("\n"):  # exactly the lines the streaming scanner sees
        parsed.add_line(line.rstrip("\r"))
    return parsed


class MetricScanner:
    """A stream consumer: feed it bytes, read `.result` when the stream is closed."""

    def __init__(self, result: ParsedLines | None = None) -> None:
        # One scanner per stream (lines must not mix), optionally sharing one result.
        self.result = result if result is not None else ParsedLines()
        self._lines = LineSplitter(self._on_line, max_line=64 * 1024)

    def _on_line(self, raw: bytes) -> None:
        if b"METRIC" in raw or b"ASI" in raw:
            self.result.add_line(raw.decode("utf-8", "replace").rstrip("\r"))

    def feed(self, data: bytes) -> None:
        self._lines.feed(data)

    def close(self) -> None:
        self._lines.close()
