"""One JSON shape for every record (jsonshape.json_shape): the run summaries and the session
records answer through it, so a nested record, a tuple or a record inside a dict looks the
same whichever door or engine prints it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from autoresearch.experiments.params import LogParams, RunNote
from autoresearch.jsonshape import (
    FieldShape,
    is_empty,
    is_none,
    json_field,
    json_keys,
    json_shape,
    mapping,
    number,
    optional_text,
    text,
    whole,
)
from autoresearch.states import DecisionKind, LaneState
from autoresearch.supervisor.summary import LaneRow


@dataclass(frozen=True)
class Named:
    """A record with a JSON form of its own."""

    value: int

    def to_dict(self) -> dict[str, Any]:
        return {"named": self.value, "pair": (self.value, self.value)}


@dataclass(frozen=True)
class Bare:
    a: int
    b: tuple[str, ...] = ("x",)


@dataclass(frozen=True)
class Outer:
    zeta: int
    alpha: Named
    bare: Bare
    many: tuple[Named, ...]
    inside: dict[str, Any] = field(default_factory=dict)
    none: None = None


class Light(NamedTuple):
    """A record a light command imports: a NamedTuple (no class built with exec), its fields
    written as they are, then what json_extra adds."""

    low: float
    nested: Bare | None = None
    many: tuple[Named, ...] = ()

    def json_extra(self) -> dict[str, object]:
        return {"doubled": self.low * 2}


@pytest.mark.parametrize(
    ("record", "shape"),
    [
        (Bare(1), {"a": 1, "b": ["x"]}),
        (
            Light(0.5, Bare(2), (Named(3),)),
            {
                "low": 0.5,  # an object, not the array that a tuple is
                "nested": {"a": 2, "b": ["x"]},
                "many": [{"named": 3, "pair": [3, 3]}],
                "doubled": 1.0,
            },
        ),
        (
            Outer(
                zeta=1,
                alpha=Named(2),
                bare=Bare(3, ("p", "q")),
                many=(Named(4),),
                inside={"deep": [Named(5), (6, 7)], "state": DecisionKind.KEEP},
            ),
            {
                "zeta": 1,  # the fields in their order, not sorted
                "alpha": {"named": 2, "pair": [2, 2]},  # its own to_dict, tuples as lists
                "bare": {"a": 3, "b": ["p", "q"]},  # no to_dict: its fields
                "many": [{"named": 4, "pair": [4, 4]}],
                "inside": {"deep": [{"named": 5, "pair": [5, 5]}, [6, 7]], "state": "keep"},
                "none": None,
            },
        ),
    ],
    ids=["tuples", "named tuple", "nested"],
)
def test_a_records_json_shape(record: Any, shape: dict[str, Any]) -> None:
    got = json_shape(record)
    assert got == shape
    assert list(got) == list(shape)
    assert json.dumps(got) == json.dumps(shape)


def _halved(value: object) -> object:
    return whole(value) / 2


@dataclass(frozen=True)
class Shaped:
    """A record whose JSON differs from its fields: each way `json_field` says so."""

    state: DecisionKind = field(metadata=json_field(key="status"))
    where: Path = Path("/tmp/x")
    ms: int = field(default=3, metadata=json_field(key="half", convert=_halved))
    secret: str = field(default="s", metadata=json_field(hidden=True))
    unknown: dict[str, object] = field(
        default_factory=lambda: {"z": 1, "where": "lost"}, metadata=json_field(leads=True)
    )

    def json_extra(self) -> dict[str, object]:
        return {"kept": self.state is DecisionKind.KEEP, "paths": (Path("a"),)}


def test_a_fields_metadata_and_json_extra_shape_its_json() -> None:
    """Unknown keys first (a field of the same name wins, in their place), renamed and converted
    fields, a hidden one left out, paths as strings, then what json_extra adds."""
    got = json.dumps(json_shape(Shaped(DecisionKind.KEEP)))
    assert got == (
        '{"z": 1, "where": "/tmp/x", "status": "keep", "half": 1.5, "kept": true, "paths": ["a"]}'
    )


@dataclass(frozen=True)
class Usage:
    tokens: int | None = None
    cost: float | None = None


@dataclass(frozen=True)
class Sparse:
    """A record that writes a field only when it has a value, and a nested one in place."""

    name: str
    score: float | None = field(default=None, metadata=json_field(omit_when=is_none))
    notes: tuple[str, ...] = field(default=(), metadata=json_field(omit_when=is_empty))
    usage: Usage = field(default_factory=Usage, metadata=json_field(inline=True))
    last: str = "z"


@pytest.mark.parametrize(
    ("record", "text_"),
    [
        (Sparse("a"), '{"name": "a", "tokens": null, "cost": null, "last": "z"}'),
        (
            Sparse("a", 0.0, ("n",), Usage(3, 0.5)),
            '{"name": "a", "score": 0.0, "notes": ["n"], "tokens": 3, "cost": 0.5, "last": "z"}',
        ),
        (Sparse("a", None, ()), '{"name": "a", "tokens": null, "cost": null, "last": "z"}'),
    ],
    ids=["omitted", "present", "empty"],
)
def test_a_field_is_left_out_when_its_value_says_so_and_inlined_in_place(
    record: Sparse, text_: str
) -> None:
    """0.0 is a score (only None is left out); an inline record's keys sit where its field is."""
    assert json.dumps(json_shape(record)) == text_


@dataclass(frozen=True)
class Trailing:
    late: int = field(default=1, metadata=json_field(trails=True))
    first: int = 2
    later: int = field(default=3, metadata=json_field(key="z", trails=True))
    second: int = 4


def test_a_trailing_field_is_written_after_the_others_and_mirrored_in_its_place() -> None:
    assert json.dumps(json_shape(Trailing())) == '{"first": 2, "second": 4, "late": 1, "z": 3}'
    assert [key for _, key, _ in json_keys(Trailing)] == ["late", "first", "z", "second"]


class LightShaped(NamedTuple):
    """A NamedTuple whose JSON differs from its fields: said in its static json_fields()."""

    late: int
    usage: Usage
    ms: int = 3
    first: int = 2

    @staticmethod
    def json_fields() -> Mapping[str, Mapping[str, FieldShape]]:
        return {
            "late": json_field(trails=True),
            "usage": json_field(inline=True),
            "ms": json_field(key="half", convert=_halved),
        }


def test_a_named_tuples_json_fields_shape_its_json() -> None:
    """Renamed and converted, inlined in place, written after the others: as a dataclass's
    field metadata says it (noise.NoisePolicy, supervisor/run_summary.RunSummary)."""
    got = json.dumps(json_shape(LightShaped(1, Usage(5, None))))
    assert got == '{"tokens": 5, "cost": null, "half": 1.5, "first": 2, "late": 1}'


def test_a_record_with_inline_keys_has_no_mirrored_schema() -> None:
    with pytest.raises(TypeError, match="none of its fields"):
        json_keys(Sparse)


@pytest.mark.parametrize(
    ("value", "empty"),
    [(None, True), ("", True), ((), True), ([], True), ({}, True), (0, False), ("x", False)],
)
def test_is_empty(value: object, empty: bool) -> None:
    assert is_empty(value) is empty and is_none(value) is (value is None)


def test_the_supervisor_and_the_sessions_share_it() -> None:
    """A run's lane row and a session's log parameters, each through its own to_dict."""
    row = LaneRow(
        1, LaneState.IDLE, None, 2, "c", 3, DecisionKind.KEEP, "r", "e", 4, 1, None, 9, "t"
    )
    assert row.to_dict() == json_shape(row) and list(row.to_dict())[:2] == ["lane", "state"]
    params = LogParams("keep", "d", flag_runs=(RunNote(1, "why"),))
    assert params.to_dict()["flag_runs"] == [{"run_id": 1, "reason": "why"}]
    assert params.to_dict() == json_shape(params)


@pytest.mark.parametrize(
    ("read", "value", "expected"),
    [
        (number, 3, 3.0),
        (number, 2.5, 2.5),
        (whole, 4, 4),
        (text, "a", "a"),
        (optional_text, None, None),
        (optional_text, "b", "b"),
        (mapping, None, {}),
        (mapping, {"k": 1}, {"k": 1}),
    ],
)
def test_a_reader_returns_a_value_of_its_type(
    read: Callable[[object], object], value: object, expected: object
) -> None:
    assert read(value) == expected


@pytest.mark.parametrize(
    ("read", "value"),
    [
        (number, True),
        (number, "3"),
        (whole, 2.0),
        (whole, False),
        (text, 1),
        (optional_text, 0),
        (mapping, [1]),
    ],
)
def test_a_reader_refuses_a_value_of_another_type_by_naming_it(
    read: Callable[[object], object], value: object
) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(value))):
        read(value)


class Misspelt(NamedTuple):
    blocks: bool = True

    @staticmethod
    def json_fields() -> Mapping[str, Mapping[str, FieldShape]]:
        return {"block": json_field(key="spread")}


def test_json_fields_that_name_no_field_are_refused() -> None:
    """A misspelt or renamed field in `json_fields` would drop its JSON key silently
    (review11b): `NoisePolicy` would write `"blocks": true` for `"spread": "blocks"`."""
    with pytest.raises(TypeError, match=r"Misspelt.json_fields names no field \['block'\]"):
        json_shape(Misspelt())
