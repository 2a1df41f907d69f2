"""Requests in the source's (ide-super-worker's) own shapes work verbatim over the real MCP
client: `verification_policy.version: 1`, a check's `timeout_ms`, `permission_mode`,
`job_get`'s `verbose`; an unknown version is refused in one line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from gateway_server import Gateway, Step
from mcp_helpers import connect
from worker_helpers import agent, job_repo

from autoresearch.mcp.server import build_server
from helpers import Repo

pytestmark = pytest.mark.anyio


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return job_repo(tmp_path / "repo")


def source_example(**extra: Any) -> dict[str, Any]:
    """The source README's example job, its paths and agent made local."""
    args: dict[str, Any] = {
        "prompt": "Set VALUE to 2 in src/app.py.",
        "allowed_dirs": ["."],
        "agent": agent("edit", "src/app.py", "VALUE = 2"),
        "permission_mode": "acceptEdits",
        "include_diff": False,
        "verification_policy": {"version": 1, "task_kind": "modifying"},
        "scoped_patch": {"paths": ["src"], "max_diff_bytes": 20000},
        "checks": [
            {
                "name": "unit tests",
                "command": "grep -q 'VALUE = 2' src/app.py",
                "timeout_ms": 600000,
            }
        ],
    }
    args.update(extra)
    return args


async def test_the_source_example_job_is_accepted_as_written(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        started = await t.ok("job_start", source_example())
        job_id = started.data["job_id"]
        done = await t.ok("job_wait", {"job_id": job_id, "timeout_ms": 30_000})
        assert done.data["outcome"]["status"] == "accepted", done.text
        got = await t.ok("job_get", {"job_id": job_id, "verbose": True})
        assert got.data["outcome"]["status"] == "accepted"
    spec_checks = done.data["outcome"]["evidence"]["checks"]
    assert [c["exit_code"] for c in spec_checks] == [0]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"verification_policy": {"version": 2, "task_kind": "modifying"}},
            "verification_policy.version 2 is not supported: use 1 or leave it out",
        ),
        (
            {"permission_mode": "bypassPermissions"},
            "permission_mode bypassPermissions is not supported: jobs run with acceptEdits "
            "(leave it out)",
        ),
        (
            {"checks": [{"command": "true", "timeout_ms": 1000, "timeout_seconds": 1}]},
            "check 'true': give timeout_ms or timeout_seconds, not both",
        ),
    ],
)
async def test_an_unknown_shape_is_refused_in_one_line(
    repo: Repo, change: dict[str, Any], expected: str
) -> None:
    async with connect(build_server(repo.root)) as t:
        message = await t.error("job_start", source_example(**change))
    assert message == expected


async def test_the_source_example_with_its_semantic_gate_runs_as_written(repo: Repo) -> None:
    """The example asks for semantic_gate required; without a reviewer model configured the
    gate fails closed instead of refusing the request."""
    async with connect(build_server(repo.root)) as t:
        started = await t.ok("job_start", source_example(semantic_gate="required"))
        done = await t.ok("job_wait", {"job_id": started.data["job_id"], "timeout_ms": 30_000})
    outcome = done.data["outcome"]
    assert (outcome["status"], outcome["reason_codes"]) == (
        "needs_evidence",
        ["semantic_evidence_missing"],
    )
    assert outcome["verification"]["semantic"] == "missing"


async def test_analyze_takes_the_sources_bounded_globs(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("src/extra.py", "EXTRA = 1\n")
    repo.write("src/deep/more.py", "MORE = 1\n")
    with Gateway([Step(text="two files")]) as gw:
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_URL", gw.url)
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MODELS", "cheap")
        async with connect(build_server(repo.root)) as t:
            await t.ok("analyze", {"question": "What is set?", "files": ["src/*.py"]})
            none = await t.error("analyze", {"question": "?", "files": ["lib/**/*.rs"]})
            out = await t.error("analyze", {"question": "?", "files": ["../*.py"]})
    sent = gw.requests[0]["messages"][1]["content"]
    assert "== src/app.py ==" in sent and "== src/extra.py ==" in sent
    assert "src/deep/more.py" not in sent  # * is one level, ** goes deeper
    assert none == "analyze: no file matches lib/**/*.rs"
    assert out == "analyze: a glob is relative to the repository: ../*.py"
