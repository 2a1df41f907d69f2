"""Candidate artifact schema validation (supervisor.md §4): the exact messages."""

from __future__ import annotations

import json

import pytest

from autoresearch.contracts.candidate import (
    ArtifactShapeError,
    is_placeholder,
    parse_artifact,
    placeholder,
)


def base(**changes: object) -> str:
    data: dict[str, object] = {
        "status": "candidate",
        "candidate_commit": "abc",
        "base_commit": "def",
        "description": "d",
        "notes": [],
        "created_at": "2026-01-01T00:00:00Z",
    }
    for key, value in changes.items():
        if value is ...:
            data.pop(key)
        else:
            data[key] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "autoresearch candidate artifact must be valid JSON"),
        ("[]", "autoresearch candidate artifact must be a JSON object"),
        (
            base(status="done"),
            "autoresearch candidate artifact status must be candidate|noop|abort|interrupted",
        ),
        (
            base(status=...),
            "autoresearch candidate artifact status must be candidate|noop|abort|interrupted",
        ),
        (
            base(candidate_commit=5),
            "autoresearch candidate artifact candidate_commit must be string|null",
        ),
        (
            base(candidate_commit=...),
            "autoresearch candidate artifact candidate_commit must be string|null",
        ),
        (base(base_commit=...), "autoresearch candidate artifact base_commit is required"),
        (base(base_commit=""), "autoresearch candidate artifact base_commit is required"),
        (base(description=...), "autoresearch candidate artifact description is required"),
        (base(description=None), "autoresearch candidate artifact description is required"),
        (base(notes="x"), "autoresearch candidate artifact notes must be a string array"),
        (base(notes=[1]), "autoresearch candidate artifact notes must be a string array"),
        (base(notes=...), "autoresearch candidate artifact notes must be a string array"),
        (base(created_at=...), "autoresearch candidate artifact created_at is required"),
        (base(created_at=" "), "autoresearch candidate artifact created_at is required"),
    ],
)
def test_schema_errors(text: str, message: str) -> None:
    # every one a shape error: under `run` a failed session, not the run's end (issue 38)
    with pytest.raises(ArtifactShapeError) as info:
        parse_artifact(text)
    assert str(info.value) == message


def test_valid_and_empty_description() -> None:
    artifact = parse_artifact(base(description="", candidate_commit=None, status="noop"))
    assert artifact.description == ""
    assert artifact.candidate_commit is None


def test_placeholder_shape() -> None:
    data = placeholder("abc123", "2026-01-01T00:00:00Z")
    assert data == {
        "status": "noop",
        "candidate_commit": None,
        "base_commit": "abc123",
        "description": "not-yet-written",
        "notes": ["candidate artifact will be overwritten by the launched session"],
        "created_at": "2026-01-01T00:00:00Z",
    }
    assert is_placeholder(data)
    assert not is_placeholder({**data, "description": "mine"})
