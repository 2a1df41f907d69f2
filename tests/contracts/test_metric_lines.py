"""METRIC and ASI grammar (experiments.md "Grammar")."""

from __future__ import annotations

import pytest

from autoresearch.contracts.metric_lines import (
    MetricScanner,
    ParsedLines,
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


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("METRIC t=-inf", None),
        ("METRIC t=Infinity", None),
        ("METRIC t=NaN", None),
        ("METRIC t=0X1F", None),
        ("METRIC t=1e", None),
        ("METRIC t=1.", ("t", 1.0)),
        ("METRIC t=-0", ("t", -0.0)),
        ("METRIC t=1e-3", ("t", 0.001)),
        ("METRIC latency_μs=4", ("latency_μs", 4.0)),  # Greek mu as well as the micro sign
        ("METRIC a-b_c.d=1", ("a-b_c.d", 1.0)),
        ("\tMETRIC\tt=2\t", ("t", 2.0)),
    ],
)
def test_more_metric_lines(line: str, expected: tuple[str, float] | None) -> None:
    assert parse_metric_line(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ASI n=1_000", ("n", "1_000")),
        ("ASI n=0x10", ("n", "0x10")),
        ("ASI n=inf", ("n", "inf")),
        ("ASI n=nan", ("n", "nan")),
        ("ASI n=1e3", ("n", 1000.0)),
        ("ASI n=+5", ("n", 5)),
        ("ASI n=.5", ("n", 0.5)),
        ("ASI s=True", ("s", "True")),
        ("ASI empty=", ("empty", "")),
        ('ASI broken="unterminated', ("broken", '"unterminated')),
        ("ASI a=b=c", ("a", "b=c")),
    ],
)
def test_more_asi_lines(line: str, expected: object) -> None:
    assert parse_asi_line(line) == expected


def test_two_streams_share_one_result_and_the_last_line_wins() -> None:
    shared = ParsedLines()
    out, err = MetricScanner(shared), MetricScanner(shared)
    out.feed(b"METRIC a=1\r\nMETRIC b=")
    err.feed(b"METRIC a=2\n")  # a line on stderr does not mix with stdout's partial line
    out.feed(b"3\nASI h=first\n")
    err.feed(b"ASI h=second")
    out.close()
    err.close()
    assert shared.metrics == {"a": 2.0, "b": 3.0}
    assert shared.asi == {"h": "second"}


def test_metric_line_at_the_top_of_more_than_1_mb_of_text() -> None:
    text = "METRIC top=7\n" + ("y" * 99 + "\n") * 12_000
    assert len(text) > 1_000_000
    assert parse_text(text).metrics == {"top": 7.0}
