"""The candidate artifact (supervisor.md §4): pure parsing, schema validation, placeholder.

The git checks (base and candidate commits resolve and match) live in the supervisor; the
messages for them are defined here so that every exact string of §4 sits in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, cast

from autoresearch.contracts.json_input import JsonInputError, load_json
from autoresearch.jsonshape import json_shape
from autoresearch.states import ArtifactStatus

STATUSES = tuple(ArtifactStatus)
PLACEHOLDER_DESCRIPTION = "not-yet-written"
PLACEHOLDER_NOTE = "candidate artifact will be overwritten by the launched session"

MSG_MISSING = "autoresearch_candidate_missing:{path}"
MSG_NOT_JSON = "autoresearch candidate artifact must be valid JSON"
MSG_NOT_OBJECT = "autoresearch candidate artifact must be a JSON object"
MSG_STATUS = "autoresearch candidate artifact status must be candidate|noop|abort|interrupted"
MSG_COMMIT_TYPE = "autoresearch candidate artifact candidate_commit must be string|null"
MSG_BASE_REQUIRED = "autoresearch candidate artifact base_commit is required"
MSG_DESCRIPTION = "autoresearch candidate artifact description is required"
MSG_NOTES = "autoresearch candidate artifact notes must be a string array"
MSG_CREATED_AT = "autoresearch candidate artifact created_at is required"
MSG_BASE_UNRESOLVED = "candidate base_commit does not resolve in git: {raw}"
MSG_BASE_MISMATCH = "candidate base_commit {sha} does not match last kept commit {kept}"
MSG_COMMIT_REQUIRED = "candidate status requires a non-null candidate_commit"
MSG_COMMIT_UNRESOLVED = "candidate_commit does not resolve in git: {raw}"
MSG_COMMIT_NOT_HEAD = "candidate_commit {sha} does not match worktree HEAD {head}"
# Beyond §4: bounded input (json_input's limits apply too) ...
MAX_ARTIFACT_BYTES = 64 * 1024
MAX_DESCRIPTION_CHARS = 2000
MSG_NOT_REGULAR = (
    "autoresearch candidate artifact must be a regular file of at most 64 KiB: {path} {why}"
)
MSG_DESCRIPTION_LONG = (
    f"autoresearch candidate artifact description is longer than {MAX_DESCRIPTION_CHARS} characters"
)
# ... and the run's history belongs to the supervisor, not to the session.
MSG_COMMIT_OFF_BRANCH = "candidate_commit {sha} is not on the run branch {branch}"
MSG_COMMIT_NOT_DESCENDANT = "candidate_commit {sha} does not descend from last kept commit {kept}"


class ArtifactError(ValueError):
    """A candidate artifact failed validation; the message is the contract string."""


class ArtifactShapeError(ArtifactError):
    """The artifact alone is malformed (missing, unreadable, a field of the wrong shape): what
    the session wrote is unusable, yet the repository agrees with the run. Under `run` that is
    a failed session (supervisor/step.py); an artifact that disagrees with git is not one."""


@dataclass(frozen=True)
class CandidateArtifact:
    """A schema-valid artifact (refs not yet checked against git)."""

    status: ArtifactStatus
    candidate_commit: str | None
    base_commit: str
    description: str
    notes: tuple[str, ...]
    created_at: str

    def to_dict(self) -> CandidateJson:
        return cast(CandidateJson, json_shape(self))


class CandidateJson(TypedDict):
    """candidate.json as a session writes it (§4's keys, in their order)."""

    status: ArtifactStatus  # its value, a §4 string
    candidate_commit: str | None
    base_commit: str
    description: str
    notes: list[str]
    created_at: str


def parse_artifact(text: str) -> CandidateArtifact:
    """Validate the artifact's shape; raises ArtifactError with the exact §4 message."""
    try:
        data = load_json(text)
    except JsonInputError as exc:
        detail = str(exc)
        message = MSG_NOT_JSON if detail == "not valid JSON" else f"{MSG_NOT_JSON}: {detail}"
        raise ArtifactShapeError(message) from exc
    if not isinstance(data, dict):
        raise ArtifactShapeError(MSG_NOT_OBJECT)
    if data.get("status") not in STATUSES:
        raise ArtifactShapeError(MSG_STATUS)
    status = ArtifactStatus(data["status"])
    commit = data.get("candidate_commit", ...)
    if commit is not None and not isinstance(commit, str):
        raise ArtifactShapeError(MSG_COMMIT_TYPE)
    base = data.get("base_commit")
    if not isinstance(base, str) or not base.strip():
        raise ArtifactShapeError(MSG_BASE_REQUIRED)
    description = data.get("description")
    if not isinstance(description, str):
        raise ArtifactShapeError(MSG_DESCRIPTION)
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise ArtifactShapeError(MSG_DESCRIPTION_LONG)
    notes = data.get("notes")
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise ArtifactShapeError(MSG_NOTES)
    created_at = data.get("created_at")
    if not isinstance(created_at, str) or not created_at.strip():
        raise ArtifactShapeError(MSG_CREATED_AT)
    return CandidateArtifact(status, commit, base, description, tuple(notes), created_at)


def artifact(
    status: ArtifactStatus,
    candidate_commit: str | None,
    base_commit: str,
    description: str,
    notes: list[str],
    created_at: str,
) -> CandidateJson:
    """An artifact as a session writes it (one line of description)."""
    line = description.splitlines()[0] if description else ""
    return CandidateArtifact(
        status, candidate_commit, base_commit, line, tuple(notes), created_at
    ).to_dict()


def placeholder(base_commit: str, created_at: str) -> CandidateJson:
    """The artifact written before each session: a session that writes nothing is a noop."""
    return CandidateArtifact(
        status=ArtifactStatus.NOOP,
        candidate_commit=None,
        base_commit=base_commit,
        description=PLACEHOLDER_DESCRIPTION,
        notes=(PLACEHOLDER_NOTE,),
        created_at=created_at,
    ).to_dict()


def is_placeholder(data: object) -> bool:
    """True for an artifact that is the supervisor's placeholder, not a session's."""
    return (
        isinstance(data, dict)
        and data.get("status") == ArtifactStatus.NOOP
        and data.get("description") == PLACEHOLDER_DESCRIPTION
        and data.get("notes") == [PLACEHOLDER_NOTE]
    )
