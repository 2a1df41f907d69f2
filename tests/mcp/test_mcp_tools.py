"""The MCP tools through the real client, in memory, on real repositories."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from mcp_helpers import TOOL_NAMES, Progress, connect, mcp_repo, settle
from pydantic import BaseModel

from autoresearch.experiments import InitResult, LogReport, NotesResult, RunReport, StatusReport
from autoresearch.mcp import schemas
from autoresearch.mcp.server import build_server
from autoresearch.paths import session_paths
from autoresearch.supervisor.summary import StopOutcome
from helpers import Repo, git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return mcp_repo(tmp_path / "repo")


@pytest.fixture
def checked(tmp_path: Path) -> Repo:
    return mcp_repo(tmp_path / "repo", checks=True)


@pytest.mark.anyio
async def test_every_tool_is_listed_with_schemas_annotations_and_descriptions(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        tools = {tool.name: tool for tool in (await t.client.list_tools()).tools}
        assert set(tools) == TOOL_NAMES
        for tool in tools.values():
            assert tool.description and tool.title and tool.annotations
            assert tool.output_schema and tool.output_schema["type"] == "object"
            # only the model tools talk to the gateway
            model_tool = tool.name in {"analyze", "review", "draft"}
            assert tool.annotations.open_world_hint is model_tool
            for prop in tool.input_schema.get("properties", {}).values():
                assert prop.get("description"), (tool.name, prop)
        hints = {name: tool.annotations for name, tool in tools.items()}
        read_only = {n for n, h in hints.items() if h and h.read_only_hint}
        destructive = {n for n, h in hints.items() if h and h.destructive_hint}
        jobs_read = {"job_get", "job_wait", "job_tail", "job_list"}
        worker_read = {"search", "read_pack", "diff_digest", "history", "get_artifact"}
        worker_read |= {"analyze", "review", "draft"}
        assert read_only == {
            "experiment_status",
            "run_list",
            "run_status",
            *jobs_read,
            *worker_read,
        }
        jobs_destroy = {"job_cancel", "job_apply", "job_discard"}
        assert destructive == {"log_experiment", "run_stop", *jobs_destroy, "shell"}
        run_args = tools["run_experiment"].input_schema["properties"]
        assert run_args["timeout_seconds"]["default"] == 600
        assert run_args["timeout_seconds"]["exclusiveMinimum"] == 0
        assert "timeout_seconds + checks_timeout_seconds" in tools["run_experiment"].description
        for name in ("run_list", "run_status", "run_stop"):
            assert "stays on the command line" in (tools[name].description or ""), name
        instructions = (t.client.instructions or "").lower()
        assert "run_experiment" in instructions and "never game the benchmark" in instructions


@pytest.mark.anyio
async def test_a_whole_session_keep_discard_notes_status(repo: Repo) -> None:
    repo.write("delay.txt", "2.2\n")
    async with connect(build_server(repo.root)) as t:
        init = await t.ok("init_experiment", {"name": "speed up", "metric": "score"})
        assert init.data["created"] and init.data["branch"].startswith("autoresearch/speed-up-")
        assert "session #1 started" in init.text

        progress = Progress()
        run = await t.ok("run_experiment", {}, progress_callback=progress)
        await settle()
        assert run.data["status"] == "pass" and run.data["metric"] == 100
        assert run.data["suggested_status"] == "keep"
        assert "use these values in log" in run.text and "--- tail ---" in run.text
        assert progress.events, "no progress notification during run_experiment"
        values = [p for p, _, _ in progress.events]
        assert values == sorted(values) and all(total == 900 for _, total, _ in progress.events)
        assert any("warming up" in (m or "") for _, _, m in progress.events)
        repo.root.joinpath("delay.txt").unlink()

        kept = await t.ok("log_experiment", {"status": "keep", "description": "baseline"})
        assert kept.data["baseline"]["run"] == 1 and "logged as keep" in kept.text

        repo.write("value.txt", "90\n")
        await t.ok("run_experiment", {"timeout_seconds": 30})
        better = await t.ok(
            "log_experiment",
            {
                "status": "keep",
                "description": "smaller value",
                "asi": {"hypothesis": "less is more"},
            },
        )
        assert better.data["git"]["action"] == "committed"
        assert better.data["best"]["metric"] == 90

        repo.write("value.txt", "95\n")
        await t.ok("run_experiment", {})
        worse = await t.ok("log_experiment", {"status": "discard", "description": "worse"})
        assert worse.data["git"]["action"] == "reverted"
        assert Path(worse.data["git"]["patch_path"]).is_file()
        assert repo.root.joinpath("value.txt").read_text() == "90\n"

        notes = await t.ok("update_notes", {"body": "# Plan\nshrink it\n", "append_idea": "try 80"})
        assert notes.data["ideas"] == ["try 80"] and "saved" in notes.text

        status = await t.ok("experiment_status", {"last": 2})
        assert status.data["counts"] == {"keep": 2, "discard": 1, "crash": 0, "checks_failed": 0}
        assert [h["run"] for h in status.data["history"]] == [2, 3]
        assert status.data["history"][0]["hypothesis"] == "less is more"
        assert status.data["pending"] is None and status.data["ideas"] == ["try 80"]
        assert "best kept:   #2 90" in status.text
        resume = await t.ok("experiment_status", {"resume": True})
        assert "Continue the autoresearch loop now." in resume.text
        assert "never game the benchmark" in resume.text


@pytest.mark.anyio
async def test_failed_benchmark_is_a_result_and_crash_reverts(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        await t.ok("run_experiment", {})
        await t.ok("log_experiment", {"status": "keep", "description": "baseline"})
        repo.write("crash.flag", "")
        run = await t.ok("run_experiment", {})
        assert run.data["status"] == "fail" and run.data["suggested_status"] == "crash"
        assert "FAILED (exit 3)" in run.text
        refused = await t.error("log_experiment", {"status": "keep", "description": "boom"})
        assert refused == ("cannot keep run #2: the benchmark did not pass (fail); log it as crash")
        crash = await t.ok("log_experiment", {"status": "crash", "description": "boom"})
        assert crash.data["git"]["action"] == "reverted"
        assert not repo.root.joinpath("crash.flag").exists()


@pytest.mark.anyio
async def test_keep_is_refused_after_failed_checks(checked: Repo) -> None:
    async with connect(build_server(checked.root)) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        checked.write("broken.flag", "")
        run = await t.ok("run_experiment", {})
        assert run.data["checks"]["status"] == "fail"
        assert run.data["suggested_status"] == "checks_failed"
        assert "--- checks tail ---" in run.text and "1 test failed" in run.text
        message = await t.error("log_experiment", {"status": "keep", "description": "x"})
        assert message == "cannot keep run #1: the checks failed (fail); log it as checks_failed"
        logged = await t.ok("log_experiment", {"status": "checks_failed", "description": "x"})
        assert logged.data["status"] == "checks_failed"


@pytest.mark.anyio
async def test_errors_reach_the_model_as_readable_messages(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")  # no harness yet
    async with connect(build_server(repo.root)) as t:
        for name, args in (
            ("experiment_status", {}),
            ("run_experiment", {}),
            ("log_experiment", {"status": "discard", "description": "x"}),
            ("update_notes", {"append_idea": "x"}),
        ):
            message = await t.error(name, args)
            assert message.startswith("no active experiment session on branch main"), message
        phase_1 = await t.error("init_experiment", {"name": "n", "metric": "score"})
        assert "autoresearch.sh is missing" in phase_1 and "Phase 1 comes first" in phase_1

        repo.write("autoresearch.sh", "echo METRIC score=1\n")
        missing = await t.error("init_experiment", {"name": "n"})
        assert missing == "init: metric required for a new session"
        bad_name = await t.error("init_experiment", {"name": "n", "metric": "a b"})
        assert bad_name.startswith("init: invalid metric name 'a b'")

        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        no_pending = await t.error("log_experiment", {"status": "keep", "description": "x"})
        assert no_pending == "no pending run available. Run run_experiment first."
        empty = await t.error("update_notes", {})
        assert empty.startswith("notes: give a body")
        await t.ok("run_experiment", {})
        unknown = await t.error(
            "log_experiment",
            {
                "status": "keep",
                "description": "x",
                "flag_runs": [{"run_id": 9, "reason": "noisy"}],
            },
        )
        assert unknown == "log: run #9 is not a logged run of this session"


@pytest.mark.anyio
async def test_arguments_are_validated_against_the_input_schema(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        for name, args, word in (
            ("init_experiment", {"name": "n", "metric": "score", "direction": "up"}, "direction"),
            ("init_experiment", {"name": "n", "metric": "score", "max_iterations": -1}, "max"),
            ("run_experiment", {"timeout_seconds": 0}, "timeout_seconds"),
            ("run_experiment", {"checks_timeout_seconds": -5}, "checks_timeout_seconds"),
            ("log_experiment", {"status": "maybe", "description": "x"}, "status"),
            ("log_experiment", {"status": "keep", "description": ""}, "description"),
            ("experiment_status", {"last": -1}, "last"),
            ("run_status", {"run_id": ""}, "run_id"),
        ):
            message = await t.error(name, args)
            assert "validation error" in message and word in message, message


@pytest.mark.anyio
async def test_unexpected_errors_give_a_message_without_a_traceback(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        # The run's log taken by a folder: writing it fails with an OSError the engine does not
        # name, as a broken disk would.
        session_paths(repo.root, 1).run_log(1).mkdir(parents=True)
        message = await t.error("run_experiment", {"timeout_seconds": 5})
        assert message.startswith("internal error (IsADirectoryError: "), message
        assert "Traceback" not in message
        # the CLI's line: the traceback is in the crash log it names
        log = Path(message.rsplit("(details in ", 1)[1].rstrip(")"))
        assert "Traceback" in log.read_text() and "run-0001.log" in log.read_text()


@pytest.mark.anyio
async def test_run_experiment_is_bounded_by_its_timeouts(checked: Repo) -> None:
    async with connect(build_server(checked.root)) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        checked.write("slow.flag", "")
        started = time.monotonic()
        run = await t.ok("run_experiment", {"timeout_seconds": 1, "checks_timeout_seconds": 1})
        assert run.data["status"] == "timeout" and run.data["timed_out"]
        assert time.monotonic() - started < 6
        assert run.data["checks"] is None  # the checks only follow a passing benchmark

        checked.root.joinpath("slow.flag").unlink()
        checked.write("hang.flag", "")
        started = time.monotonic()
        run = await t.ok("run_experiment", {"timeout_seconds": 5, "checks_timeout_seconds": 1})
        assert run.data["status"] == "pass" and run.data["checks"]["status"] == "timeout"
        assert time.monotonic() - started < 6
        assert "abandoned run #1" in " ".join(run.data["messages"])


@pytest.mark.anyio
async def test_run_experiment_answers_at_its_limit_and_the_run_finishes_in_the_background(
    repo: Repo,
) -> None:
    # limit: 1 + 0.5 - 1.2 = 0.3 s
    async with connect(build_server(repo.root, run_slack=-1.2)) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score"})
        repo.write("slow.flag", "")
        started = time.monotonic()
        message = await t.error(
            "run_experiment", {"timeout_seconds": 1, "checks_timeout_seconds": 0.5}
        )
        assert time.monotonic() - started < 1
        assert message.startswith("run_experiment gave up waiting after 0s")
        assert "experiment_status" in message
        status = await t.ok("experiment_status")
        assert status.data["pending"]["state"] == "running"
        deadline = time.monotonic() + 10
        while True:  # the background run ends at its own timeout and waits for its log
            result = await t.client.call_tool(
                "log_experiment", {"status": "crash", "description": "too slow"}
            )
            if not result.is_error:
                break
            assert time.monotonic() < deadline, result.content
            await settle()
        assert result.structured_content and result.structured_content["run"] == 1


@pytest.mark.anyio
async def test_a_worktree_session_is_followed_by_the_server(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        init = await t.ok("init_experiment", {"name": "side", "metric": "score", "worktree": True})
        worktree = Path(init.data["worktree"])
        assert worktree != repo.root and init.data["directory"] == str(worktree)
        assert git(repo.root, "branch", "--show-current") == "main"
        # an MCP caller cannot `cd`: the text says that this server now acts in the worktree
        assert f"in the worktree {worktree}: this server's tools act there" in init.text
        # the CLI's instruction `cd <path>` as a word: a bare "cd " also matches a hash (f1c33cd)
        assert not re.search(r"(^|\s)cd\s", init.text), init.text
        (worktree / "value.txt").write_text("42\n")
        run = await t.ok("run_experiment", {})
        assert run.data["metric"] == 42
        status = await t.ok("experiment_status")
        assert status.data["session"]["directory"] == str(worktree)


@pytest.mark.parametrize(
    ("result", "model"),
    [
        (InitResult, schemas.InitOutput),
        (RunReport, schemas.RunOutput),
        (LogReport, schemas.LogOutput),
        (NotesResult, schemas.NotesOutput),
        (StatusReport, schemas.SessionStatus),  # experiment_status adds resume_message
        (StopOutcome, schemas.StopOutput),
    ],
)
def test_output_models_mirror_the_core_results(result: type, model: type[BaseModel]) -> None:
    """A field added to a core result must be added to its output model (extra is forbidden)."""
    assert set(result.__dataclass_fields__) == set(model.model_fields)


@pytest.mark.anyio
async def test_reinit_changes_only_the_fields_given_and_an_empty_list_clears(repo: Repo) -> None:
    async with connect(build_server(repo.root)) as t:
        await t.ok("init_experiment", {"name": "n", "metric": "score", "scope": ["src/"]})
        goal = await t.ok("init_experiment", {"goal": "faster"})
        assert goal.data["created"] is False and goal.data["updated"] == ["goal"]
        assert goal.data["session"]["scope"] == ["src/"]
        cleared = await t.ok("init_experiment", {"scope": []})
        assert cleared.data["updated"] == ["scope"] and cleared.data["session"]["scope"] == []
        nothing = await t.ok("init_experiment", {})
        assert "no field given: the session is unchanged" in nothing.text
