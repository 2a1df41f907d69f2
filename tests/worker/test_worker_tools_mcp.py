"""The worker's zero-model tools from the planning agent's side: the real MCP client against
the in-memory server, a real git repository, real ripgrep, git grep and shell commands."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from worker_helpers import job_repo

from autoresearch.mcp.server import build_server
from helpers import Repo, cli

pytestmark = pytest.mark.anyio

SECRET_ENV = "sk9Zq2VxLw4Rt7Yp1Mn3Kd"  # the value of a secret-named variable, no known shape
SECRET_FILE = "sk-live0123456789abcdefABCDEF"  # a known key shape planted in a file


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("I16_TEST_API_KEY", SECRET_ENV)
    repo = job_repo(tmp_path / "repo")
    repo.write("src/lib.py", "def helper(x):\n    return x + 1\n\n\nclass Thing:\n    pass\n")
    repo.write("src/config.py", f'API = "{SECRET_FILE}"\nOTHER = 1\n')
    repo.write(
        "tests/test_app.py", "from src.app import VALUE\n\ndef test_v():\n    assert VALUE == 1\n"
    )
    repo.commit("more")
    return repo


def receipt_ok(data: dict[str, Any]) -> dict[str, Any]:
    r = data["receipt"]
    assert r["bytes_returned"] > 0 and r["bytes_read"] >= 0
    assert isinstance(r["artifacts"], list) and isinstance(r["truncated"], bool)
    return r


async def test_every_tool_answers_with_its_receipt(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        found = await t.ok("search", {"pattern": "VALUE", "mode": "lines"})
        assert found.data["engine"] == "ripgrep"
        assert {m["path"] for m in found.data["matches"]} == {"src/app.py", "tests/test_app.py"}
        assert receipt_ok(found.data)["bytes_read"] > 0
        files = await t.ok("search", {"pattern": "def ", "mode": "files", "paths": ["src"]})
        assert files.data["files"] == ["src/lib.py"]
        counts = await t.ok("search", {"pattern": "VALUE", "mode": "count", "literal": True})
        assert {c["path"]: c["count"] for c in counts.data["counts"]} == {
            "src/app.py": 1,
            "tests/test_app.py": 2,
        }

        pack = await t.ok("read_pack", {"files": ["src/lib.py"], "symbols": ["Thing"], "window": 1})
        assert "class Thing" in pack.data["pack"] and "return x" not in pack.data["pack"]
        assert pack.data["files"] == [{"path": "src/lib.py", "windows": [[4, 6]]}]
        assert receipt_ok(pack.data)["bytes_read"] == len((repo.root / "src/lib.py").read_bytes())

        edited = await t.ok(
            "apply_edits",
            {
                "edits": [
                    {"path": "src/app.py", "old": "VALUE = 1", "new": "VALUE = 2"},
                    {
                        "path": "src/lib.py",
                        "old": r"x \+ (\d)",
                        "new": r"x + \g<1>0",
                        "regex": True,
                    },
                ]
            },
        )
        assert edited.data["files_changed"] == ["src/app.py", "src/lib.py"]
        assert (repo.root / "src/lib.py").read_text().count("x + 10") == 1
        receipt_ok(edited.data)

        digest = await t.ok("diff_digest", {})
        paths = {f["path"]: f for f in digest.data["files"]}
        assert set(paths) == {"src/app.py", "src/lib.py"}
        assert paths["src/app.py"]["added"] == 1 and paths["src/app.py"]["hunks"][0].startswith(
            "@@"
        )
        ref = receipt_ok(digest.data)["artifacts"][0]

        piece = await t.ok("get_artifact", {"ref": ref, "offset": 0, "length": 10})
        assert piece.data["text"] == "diff --git" and piece.data["next_offset"] == 10
        assert piece.data["receipt"]["truncated"] is True

        run = await t.ok("shell", {"command": "python3 -m pytest -q tests", "timeout_seconds": 60})
        assert run.data["failure_kind"] == "test_failure" and run.data["tool_ok"] is True
        assert run.data["ok"] is False and run.data["exit_code"] == 1
        receipt_ok(run.data)

        log = await t.ok("history", {"path": "src/lib.py", "start_line": 1, "end_line": 2})
        assert log.data["log"][0].endswith("more") and len(log.data["blame"]) == 2
        receipt_ok(log.data)


async def test_the_text_content_carries_the_structured_result_as_json(repo: Repo) -> None:
    """A host that shows the model only text content (no structuredContent) sees the data too:
    the text is the result serialized as JSON, as the MCP spec asks of a tool with an output
    schema (it was a one-line summary, `{} (read N B, returned M B)` for read_pack)."""
    async with connect(build_server(repo.root)) as t:
        replies = [
            await t.ok("search", {"pattern": "VALUE", "mode": "lines"}),
            await t.ok("read_pack", {"files": ["src/lib.py"], "symbols": ["Thing"]}),
            await t.ok("history", {"path": "src/lib.py"}),
            await t.ok("shell", {"command": "git status --short"}),
        ]
        (repo.root / "src/app.py").write_text("VALUE = 3\n")  # a change to digest
        digest = await t.ok("diff_digest", {})
        replies.append(digest)
        ref = digest.data["receipt"]["artifacts"][0]
        replies.append(await t.ok("get_artifact", {"ref": ref, "offset": 0, "length": 10}))
    for reply in replies:
        assert json.loads(reply.text) == reply.data, reply.text


async def test_shell_failure_kinds_and_destructive_refusal(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        ok = await t.ok("shell", {"command": "echo hi"})
        assert ok.data["failure_kind"] == "none" and ok.data["stdout_tail"] == "hi\n"
        missing = await t.ok("shell", {"command": "no-such-command-i16 --x"})
        assert missing.data["failure_kind"] == "missing_command" and not missing.data["tool_ok"]
        slow = await t.ok("shell", {"command": "sleep 20", "timeout_seconds": 0.5})
        assert slow.data["failure_kind"] == "timeout" and slow.data["duration_ms"] < 10_000
        refused = await t.error("shell", {"command": "cd src && rm -rf ."})
        assert refused.startswith("autoresearch_destructive_command: refused (rm)")
        assert (repo.root / "src/app.py").exists()
        refused = await t.error("shell", {"command": "git reset --hard HEAD~1"})
        assert "git reset --hard" in refused
        allowed = await t.ok("shell", {"command": "rm docs/readme.md", "allow_destructive": True})
        assert allowed.data["ok"] and not (repo.root / "docs/readme.md").exists()


async def test_apply_edits_with_a_wrong_count_writes_nothing(repo: Repo) -> None:
    before = {p: (repo.root / p).read_bytes() for p in ("src/app.py", "src/lib.py")}
    async with connect(build_server(repo.root)) as t:
        message = await t.error(
            "apply_edits",
            {
                "edits": [
                    {"path": "src/app.py", "old": "VALUE", "new": "V"},
                    {"path": "src/lib.py", "old": "return", "new": "yield", "count": 2},
                ]
            },
        )
    assert message.startswith("autoresearch_edit_count_mismatch: nothing written")
    assert "edit 1 (src/lib.py): expected 2, found 1" in message
    assert {p: (repo.root / p).read_bytes() for p in before} == before


def escapes(repo: Repo, outside: Path) -> list[str]:
    (outside / "secret.txt").write_text("outside\n")
    os.symlink(outside, repo.root / "link_out")
    os.symlink(outside / "secret.txt", repo.root / "src/file_link")
    os.symlink(outside / "nope", repo.root / "src/dangling")
    return [
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        str(outside / "secret.txt"),
        "/etc/passwd",
        "link_out/secret.txt",
        "src/file_link",
        "src/dangling",
        "%2e%2e/outside/secret.txt",
        "src/%2e%2e%2f%2e%2e%2foutside",
    ]


async def test_path_escapes_are_refused_by_every_tool(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    table = escapes(repo, outside)
    calls = [
        ("search", lambda p: {"pattern": "outside", "paths": [p]}),
        ("read_pack", lambda p: {"files": [p]}),
        ("apply_edits", lambda p: {"edits": [{"path": p, "old": "outside", "new": "x"}]}),
        ("history", lambda p: {"path": p}),
        ("diff_digest", lambda p: {"paths": [p]}),
        ("shell", lambda p: {"command": "cat secret.txt", "cwd": p}),
    ]
    async with connect(build_server(repo.root)) as t:
        for tool, args in calls:
            for path in table:
                message = await t.error(tool, args(path))
                assert message.startswith("autoresearch_path_outside_sandbox"), (
                    tool,
                    path,
                    message,
                )
    assert (outside / "secret.txt").read_text() == "outside\n"


async def test_a_planted_secret_never_leaves(repo: Repo) -> None:
    repo.write("logs/run.log", f"token Bearer {SECRET_ENV}\nkey {SECRET_FILE}\n")
    async with connect(build_server(repo.root)) as t:
        outputs = [
            await t.ok("search", {"pattern": "sk-|Bearer|API"}),
            await t.ok(
                "read_pack", {"files": ["src/config.py", "logs/run.log"], "keywords": ["key"]}
            ),
            await t.ok(
                "shell", {"command": "echo $I16_TEST_API_KEY; cat logs/run.log src/config.py"}
            ),
            await t.ok("shell", {"command": "yes $I16_TEST_API_KEY | head -c 200000"}),
            await t.ok(
                "apply_edits", {"edits": [{"path": "src/config.py", "old": "OTHER", "new": "X"}]}
            ),
            await t.ok("diff_digest", {}),
        ]
        texts = [o.text + json.dumps(o.data) for o in outputs]
        for out in outputs:
            for ref in out.data["receipt"]["artifacts"]:
                piece = await t.ok("get_artifact", {"ref": ref, "length": 65536})
                texts.append(piece.text + json.dumps(piece.data))
    assert outputs[3].data["receipt"]["artifacts"], "the long output is kept as an artifact"
    state = repo.root / ".autoresearch" / "worker"
    texts += [p.read_text() for p in (state / "artifacts").iterdir()]
    texts.append((state / "metrics.jsonl").read_text())
    joined = "\n".join(texts)
    assert "[REDACTED]" in joined
    assert SECRET_ENV not in joined and SECRET_FILE not in joined


async def test_metrics_rows_and_the_stats_gate(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        await t.ok("search", {"pattern": "VALUE"})
        await t.ok("search", {"pattern": "VALUE", "mode": "files"})
        await t.error("read_pack", {"files": ["missing.py"]})
        await t.ok("read_pack", {"files": ["src/app.py"]})
    path = repo.root / ".autoresearch" / "worker" / "metrics.jsonl"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["tool"], r["status"]) for r in rows] == [
        ("search", "ok"),
        ("search", "ok"),
        ("read_pack", "error"),
        ("read_pack", "ok"),
    ]
    assert rows[2]["error_kind"] == "NotFoundError"
    assert all(r["category"] == "zero_model" and r["latency_ms"] >= 0 for r in rows)
    with path.open("a") as handle:
        handle.write('{"torn": \n')

    done = cli("worker", "stats", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    tools = {t["tool"]: t for t in summary["tools"]}
    assert tools["search"]["calls"] == 2 and tools["search"]["errors"] == 0
    assert tools["read_pack"]["error_rate"] == 0.5 and summary["total"]["calls"] == 4
    assert summary["skipped_lines"] == 1

    gated = cli("worker", "stats", "--max-error-rate", "0.3", cwd=repo.root)
    assert gated.returncode == 1 and gated.stdout.endswith(
        "error rate over the threshold: read_pack\n"
    )
    assert cli("worker", "stats", "--max-error-rate", "0.5", cwd=repo.root).returncode == 0
