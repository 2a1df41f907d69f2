"""Time in one place: ISO timestamps for records, UTC run tags for names, and the `Clock` that
measures durations (passed in where a test needs time to move by hand)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """What the core reads to measure how long something took (a throttle, a budget)."""

    def monotonic(self) -> float: ...


class SystemClock:
    """The machine's monotonic clock: what production code passes."""

    def monotonic(self) -> float:
        return time.monotonic()


SYSTEM_CLOCK: Clock = SystemClock()


def utc_now_iso() -> str:
    """An ISO-8601 UTC timestamp with milliseconds and a Z suffix."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run_tag_now() -> str:
    """The default run tag: UTC `YYYYMMDDTHHMMSSZ`."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def today_compact() -> str:
    """UTC `YYYYMMDD`, used in experiment session branch names."""
    return datetime.now(UTC).strftime("%Y%m%d")


def seconds_between(start_iso: str, end_iso: str | None = None) -> float:
    """Seconds from one ISO timestamp to another (default: now)."""
    start = datetime.fromisoformat(start_iso.replace("Z", "+00:00"))
    end = datetime.fromisoformat(end_iso.replace("Z", "+00:00")) if end_iso else datetime.now(UTC)
    return max(0.0, (end - start).total_seconds())
