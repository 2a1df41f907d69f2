"""METRIC and ASI grammar (experiments.md "Grammar")."""

from __future__ import annotations

import pytest

from autoresearch.contracts.metric_lines import (
    MetricScanner,
    parse_asi_line,
    parse_metric_line,
    parse_text,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("METRIC loss=0.5", ("loss", 0.5)),
        ("  METRIC val_bpb=1.25  ", ("val_bpb", 1.25)),
        ("METRIC t=1e3", ("t", 1000.0)),
        ("METRIC t=+5", ("t", 5.0)),
        ("METRIC t=.5", ("t", 0.5)),
        ("METRIC t=-2.5E-3", ("t", -0.0025)),
        ("METRIC latency_µs=12", ("latency_µs", 12.0)),
        ("METRIC p-99.ms=3", ("p-99.ms", 3.0)),
        ("METRIC t=1,000", None),
        ("METRIC t=1_000", None),
        ("METRIC t=0x10", None),
        ("METRIC t=inf", None),
        ("METRIC t=nan", None),
        ("METRIC t=1e999", None),
        ("METRIC t=", None),
        ("METRIC t = 1", None),
        ("METRIC =1", None),
        ("metric t=1", None),
        ("prefix METRIC t=1", None),
        ("METRIC t=1 extra", None),
        ("METRIC __proto__=1", None),
        ("METRIC constructor=1", None),
        ("METRIC prototype=1", None),
        ("METRIC a/b=1", None),
    ],
)
def test_metric_lines(line: str, expected: tuple[str, float] | None) -> None:
    assert parse_metric_line(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ASI hypothesis=bigger batch helps", ("hypothesis", "bigger batch helps")),
        ("ASI ok=true", ("ok", True)),
        ("ASI ok=false", ("ok", False)),
        ("ASI none=null", ("none", None)),
        ("ASI n=42", ("n", 42)),
        ("ASI x=-3.5", ("x", -3.5)),
        ('ASI cfg={"a": 1}', ("cfg", {"a": 1})),
        ("ASI list=[1, 2]", ("list", [1, 2])),
        ('ASI quoted="hi"', ("quoted", "hi")),
        ("ASI broken={not json", ("broken", "{not json")),
        ("ASI next.hint-1=  try lr  ", ("next.hint-1", "try lr")),
        ("ASI __proto__=1", None),
        ("ASI µ=1", None),
    ],
)
def test_asi_lines(line: str, expected: object) -> None:
    assert parse_asi_line(line) == expected


def test_last_occurrence_wins_and_mixed_text() -> None:
    parsed = parse_text("METRIC a=1\nnoise\nMETRIC a=2\nASI h=x\nMETRIC b=3\nASI h=y\n")
    assert parsed.metrics == {"a": 2.0, "b": 3.0}
    assert parsed.asi == {"h": "y"}


def test_scanner_parses_whole_huge_output_in_chunks() -> None:
    scanner = MetricScanner()
    scanner.feed(b"METRIC first=1\n")
    filler = b"x" * 1023 + b"\n"
    for _ in range(1100):  # > 1 MB of output after the METRIC line
        scanner.feed(filler)
    scanner.feed(b"METRIC spl")
    scanner.feed(b"it=2.5\nASI done=true")
    scanner.close()
    assert scanner.result.metrics == {"first": 1.0, "split": 2.5}
    assert scanner.result.asi == {"done": True}


def test_scanner_skips_overlong_lines() -> None:
    scanner = MetricScanner()
    scanner.feed(b"METRIC big=" + b"9" * 100_000 + b"\nMETRIC ok=1\n")
    scanner.close()
    assert scanner.result.metrics == {"ok": 1.0}
