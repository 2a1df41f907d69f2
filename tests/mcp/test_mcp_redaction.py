"""One redaction at every edge: a key planted in an evaluator's output and one in an
environment variable never reach the ledger, the views, a status, a summary or an MCP result,
while the raw (private) logs keep them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_helpers import connect, mcp_repo

from autoresearch.mcp.server import build_server
from helpers import cli, make_repo, sandbox_text

pytestmark = pytest.mark.anyio

ENV_SECRET = "env-planted-secret-value-0123456789"  # only its variable's name marks it
SHAPED_KEY = "sk-proj-PLANTEDkeyFROMtheEVALUATOR0123"  # a key shape, in no variable
EVALUATOR = f"""\
import json, os, sys
print("using key {SHAPED_KEY} and", os.environ["MY_SERVICE_TOKEN"])
print("Authorization: Bearer", os.environ["MY_SERVICE_TOKEN"], file=sys.stderr)
print(json.dumps({{"pass": True, "score": 1, "note": "{SHAPED_KEY}"}}))
"""
HARNESS = f"""\
#!/bin/bash
echo "key {SHAPED_KEY} token $MY_SERVICE_TOKEN"
echo "METRIC score=$(cat value.txt)"
"""


@pytest.fixture(autouse=True)
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", ENV_SECRET)


def assert_clean(text: str, where: str) -> None:
    assert ENV_SECRET not in text, where
    assert SHAPED_KEY not in text, where


async def test_a_supervised_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.write("scripts/leaky.py", EVALUATOR)
    # The command itself carries a key too: the manifest and status show commands.
    command = f"python3 scripts/leaky.py --api-key {SHAPED_KEY}"
    mission = repo.mission(sandbox=sandbox_text(command=command))
    done = cli("prepare", str(mission), "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert_clean(done.stdout, "prepare --json")
    run_id = json.loads(done.stdout)["run_id"]
    state = repo.root / ".autoresearch"
    run_dir = state / "runs" / run_id

    # Raw logs stay raw (and private): the plant is real.
    logs = "".join(p.read_text() for p in (run_dir / "logs").glob("*evaluator*.log"))
    assert SHAPED_KEY in logs and ENV_SECRET in logs

    views = {
        p.name: p.read_text()
        for p in [*run_dir.glob("*.json"), *run_dir.glob("*.md"), *state.glob("*.json")]
    }
    views["results.tsv"] = (state / "worktrees" / run_id / "results.tsv").read_text()
    assert {"manifest.json", "iteration-ledger.json", "latest-evaluator-result.json"} <= set(views)
    for name, text in views.items():
        assert_clean(text, name)
    assert "[REDACTED]" in views["latest-evaluator-result.json"]
    assert "[REDACTED]" in views["manifest.json"]

    for args in (
        ["status"],
        ["status", "--json"],
        ["status", run_id],
        ["status", run_id, "--json"],
    ):
        shown = cli(*args, cwd=repo.root)
        assert shown.returncode == 0, shown.stderr
        assert_clean(shown.stdout + shown.stderr, " ".join(args))

    async with connect(build_server(repo.root)) as t:
        for name, args in (("run_list", {}), ("run_status", {"run_id": run_id})):
            result = await t.ok(name, args)
            assert_clean(result.text + json.dumps(result.data), name)
        assert "[REDACTED]" in json.dumps((await t.ok("run_status", {"run_id": run_id})).data)


async def test_an_experiment_session(tmp_path: Path) -> None:
    repo = mcp_repo(tmp_path / "repo")
    repo.write("autoresearch.sh", HARNESS)
    async with connect(build_server(repo.root)) as t:
        # the harness prints a key on purpose: init refuses it unless allowed
        refused = await t.error("init_experiment", {"name": "leak", "metric": "score"})
        assert "autoresearch.sh (an API key or token)" in refused
        await t.ok("init_experiment", {"name": "leak", "metric": "score", "allow_secrets": True})
        run = await t.ok("run_experiment", {"timeout_seconds": 60})
        assert_clean(run.text + json.dumps(run.data), "run_experiment")
        assert "[REDACTED]" in run.data["tail"]
        status = await t.ok("experiment_status")
        assert_clean(status.text + json.dumps(status.data), "experiment_status")
        assert "[REDACTED]" in status.data["pending"]["tail"]
    assert SHAPED_KEY in Path(run.data["log_path"]).read_text()  # the raw log keeps it
    for args in (["exp", "status"], ["exp", "status", "--json"], ["exp", "resume-message"]):
        shown = cli(*args, cwd=repo.root)
        assert shown.returncode == 0, shown.stderr
        assert_clean(shown.stdout + shown.stderr, " ".join(args))
    logged = cli("exp", "log", "--status", "keep", "-d", f"base {SHAPED_KEY}", cwd=repo.root)
    assert logged.returncode == 0, logged.stderr
    assert_clean(logged.stdout, "exp log")
    again = cli("exp", "run", cwd=repo.root)
    assert again.returncode == 0, again.stderr
    assert_clean(again.stdout + again.stderr, "exp run")
