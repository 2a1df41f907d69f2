"""Machine-wide coordination of jobs: two repositories' jobs, started by separate `autoresearch
job` processes, share the machine's heavy slots and its bounded queue (flock'd files under
$XDG_STATE_HOME); a full queue or a server past its running-job cap is the retryable
`worker_busy` error; a runner that waits past the acquire timeout ends its job failed with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from mcp_helpers import connect
from worker_helpers import UNBOXED, agent, job_repo

from autoresearch.locks import FileLock
from autoresearch.mcp.server import build_server
from autoresearch.worker import slots
from helpers import Repo, cli

CHECK = "grep -q 'VALUE = 2' src/app.py"


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    monkeypatch.setenv(slots.ENV_HEAVY_MAX, "1")
    monkeypatch.setenv(slots.ENV_QUEUE_MAX, "1")
    return folder / "autoresearch" / "worker"


def start(repo: Repo, agent_spec: str) -> tuple[int, dict[str, object] | str]:
    done = cli(
        "job", "start", "Set VALUE to 2.", "--json", "--task-kind", "modifying",
        "--agent", agent_spec, "--scope", "src", "--check", CHECK, *UNBOXED, cwd=repo.root,
    )  # fmt: skip
    return done.returncode, (json.loads(done.stdout) if done.returncode == 0 else done.stderr)


def state_of(repo: Repo, job_id: str) -> dict[str, object]:
    done = cli("job", "get", job_id, "--json", cwd=repo.root)
    return dict(json.loads(done.stdout))


def wait_for_state(repo: Repo, job_id: str, wanted: str, limit: float = 30.0) -> None:
    end = time.monotonic() + limit
    while state_of(repo, job_id)["state"] != wanted:
        assert time.monotonic() < end, f"{job_id} never became {wanted}"
        time.sleep(0.2)


def test_two_repositories_share_the_machine_slot_and_queue(tmp_path: Path, state: Path) -> None:
    first, second, third = (job_repo(tmp_path / name) for name in ("one", "two", "three"))
    gate = tmp_path / "gate"
    code, a = start(first, agent("wait", str(gate), "src/app.py", "VALUE = 2"))
    assert code == 0 and isinstance(a, dict)
    wait_for_state(first, str(a["job_id"]), "running")
    code, b = start(second, agent("edit", "src/app.py", "VALUE = 2"))
    assert code == 0 and isinstance(b, dict)
    time.sleep(1.5)  # the second repository's runner polls, but the machine's one slot is taken
    assert state_of(second, str(b["job_id"]))["state"] == "queued"
    code, refused = start(third, agent("edit", "src/app.py", "VALUE = 2"))
    assert code == 2 and isinstance(refused, str)
    assert refused.startswith("autoresearch: worker_busy (retryable): 1 jobs already wait")
    assert json.loads(cli("job", "list", "--json", cwd=third.root).stdout) == {"jobs": []}
    gate.touch()
    for repo, job in ((first, a), (second, b)):
        waited = cli("job", "wait", str(job["job_id"]), "--json", cwd=repo.root)
        assert waited.returncode == 0, waited.stdout
    a_end = state_of(first, str(a["job_id"]))["finished_at"]
    b_start = state_of(second, str(b["job_id"]))["started_at"]
    assert isinstance(a_end, str) and isinstance(b_start, str) and b_start >= a_end
    assert not any((state / "queue").iterdir())  # every ticket removed by its runner


def test_a_runner_that_waits_past_the_timeout_fails_busy(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(slots.ENV_ACQUIRE_TIMEOUT, "1")
    repo = job_repo(tmp_path / "repo")
    holder = FileLock(state / "heavy-0.lock")  # another process's job holds the one slot
    assert holder.try_acquire()
    try:
        code, job = start(repo, agent("edit", "src/app.py", "VALUE = 2"))
        assert code == 0 and isinstance(job, dict)
        waited = cli("job", "wait", str(job["job_id"]), "--json", cwd=repo.root)
    finally:
        holder.release()
    data = json.loads(waited.stdout)
    assert data["state"] == "failed" and data["outcome"]["retryable"] is True
    assert data["error"].startswith("worker_busy (retryable): no job slot came free in 1 s")


def test_stale_tickets_are_dropped_and_held_ones_count(tmp_path: Path) -> None:
    queue = tmp_path / "queue"
    queue.mkdir()
    old, held, young = queue / "job_old", queue / "job_held", queue / "job_young"
    for ticket in (old, held, young):
        ticket.touch()
    past = time.time() - 2 * slots.TICKET_GRACE_SECONDS
    os.utime(old, (past, past))
    os.utime(held, (past, past))
    lock = FileLock(held)
    assert lock.try_acquire()
    try:
        assert slots.live_tickets(tmp_path, time.time()) == 2
    finally:
        lock.release()
    assert not old.exists() and held.exists() and young.exists()


@pytest.mark.parametrize(
    ("env", "limits"),
    [
        ({}, slots.Limits(2, 8, 600.0, 4)),
        ({slots.ENV_HEAVY_MAX: "0", slots.ENV_RUNNING_MAX: "500"}, slots.Limits(1, 8, 600.0, 100)),
        ({slots.ENV_QUEUE_MAX: "x", slots.ENV_ACQUIRE_TIMEOUT: "2.5"}, slots.Limits(2, 8, 2.5, 4)),
    ],
)
def test_limits_from_the_environment(env: dict[str, str], limits: slots.Limits) -> None:
    assert slots.Limits.from_env(env) == limits


def test_the_coordination_dir_respects_xdg_state_home() -> None:
    assert slots.coordination_dir({"XDG_STATE_HOME": "/s", "HOME": "/h"}) == Path(
        "/s/autoresearch/worker"
    )
    assert slots.coordination_dir({"HOME": "/h"}) == Path("/h/.local/state/autoresearch/worker")
    assert slots.coordination_dir({slots.ENV_DIR: "/c"}) == Path("/c")


@pytest.mark.anyio
async def test_a_server_past_its_running_cap_is_busy(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(slots.ENV_RUNNING_MAX, "1")
    monkeypatch.setenv(slots.ENV_QUEUE_MAX, "8")
    repo = job_repo(tmp_path / "repo")
    gate = tmp_path / "gate"
    job = {
        "prompt": "Set VALUE to 2.",
        "agent": agent("wait", str(gate), "src/app.py", "VALUE = 2"),
        "sandbox": "none",  # the gate is outside the repository
    }
    async with connect(build_server(repo.root)) as t:
        first = await t.ok("job_start", job)
        message = await t.error("job_start", job)
        assert message == (
            "worker_busy (retryable): this server already has 1 live jobs "
            f"({slots.ENV_RUNNING_MAX}=1); retry later"
        )
        gate.touch()
        await t.ok("job_wait", {"job_id": first.data["job_id"], "timeout_ms": 60_000})
        await t.ok("job_start", {**job, "agent": agent("edit", "src/app.py", "VALUE = 2")})


# --- gateway-call (lite) slots -----------------------------------------------------------------

HOLD_LITE = """
import sys, time
from pathlib import Path
from autoresearch.worker import slots
with slots.lite_slot(slots.Limits(lite_max=1), Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold_lite(root: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process (another MCP server) holding the machine's one gateway-call slot."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_LITE, str(root), str(seconds)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_a_gateway_call_waits_for_another_process_slot(tmp_path: Path) -> None:
    child = hold_lite(tmp_path, 1.0)
    t0 = time.monotonic()
    with slots.lite_slot(slots.Limits(lite_max=1, acquire_timeout=30), tmp_path):
        waited = time.monotonic() - t0
    child.wait(timeout=30)
    assert waited > 0.5


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        (
            slots.Limits(lite_max=1, lite_queue_max=0),
            "worker_busy (retryable): 0 gateway calls already wait for one of the machine's 1 "
            f"slots ({slots.ENV_LITE_QUEUE_MAX}=0); retry later",
        ),
        (
            slots.Limits(lite_max=1, acquire_timeout=0.3),
            "worker_busy (retryable): no gateway slot came free in 0.3 s; retry later",
        ),
    ],
)
def test_a_gateway_call_past_the_lite_queue_or_timeout_is_busy(
    tmp_path: Path, limits: slots.Limits, message: str
) -> None:
    child = hold_lite(tmp_path, 5.0)
    try:
        with pytest.raises(slots.WorkerBusy) as raised, slots.lite_slot(limits, tmp_path):
            pass
    finally:
        child.kill()
        child.wait()
    assert raised.value.message == message
