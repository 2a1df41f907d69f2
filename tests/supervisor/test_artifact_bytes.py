"""Whether candidate.json holds what a session wrote (sync.ArtifactBytes.from_session): the one
rule behind a resumed run's and a lane's pending artifact, over real files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autoresearch.contracts.candidate import placeholder
from autoresearch.supervisor.sync import read_artifact

SESSION = {"status": "noop", "candidate_commit": None, "base_commit": "c", "description": "d",
           "notes": [], "created_at": "t"}  # fmt: skip


def _write(path: Path, kind: str) -> None:
    if kind == "placeholder":
        path.write_text(json.dumps(placeholder("c", "t")))
    elif kind == "session":
        path.write_text(json.dumps(SESSION))
    elif kind == "broken":
        path.write_text("{not json")
    elif kind == "fifo":
        os.mkfifo(path)


@pytest.mark.parametrize(
    ("kind", "from_session"),
    [
        ("missing", False),  # nothing there: nothing to judge
        ("placeholder", False),  # the supervisor's own
        ("session", True),
        ("broken", True),  # a session's, unparsable: step judges it (and fails the run)
        ("fifo", True),  # refused, never read: step judges that too
    ],
)
def test_what_counts_as_a_sessions_artifact(tmp_path: Path, kind: str, from_session: bool) -> None:
    path = tmp_path / "candidate.json"
    _write(path, kind)
    assert read_artifact(path).from_session is from_session
