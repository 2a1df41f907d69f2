"""Time in one place: ISO timestamps for records, UTC run tags for names."""

from __future__ import annotations

from datetime import UTC, datetime


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
