"""The gateway and the model tools against a real scripted HTTP server on 127.0.0.1: 429 with
Retry-After, 500s, timeouts, a dead primary with a live fallback; through the real MCP client
for analyze / review / draft, their metrics rows and the degraded answer of an open circuit."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from gateway_server import Gateway, Step
from mcp_helpers import connect
from worker_helpers import job_repo

from autoresearch.confine import SandboxMode
from autoresearch.mcp.server import build_server
from autoresearch.worker import gateway, upstream
from autoresearch.worker.gateway import Endpoint, GatewayConfig, GatewayError, Price, Usage
from autoresearch.worker.tools import circuits
from helpers import Repo, cli

SECRET = "sk-gatewaytest0123456789abcdef"


@pytest.mark.parametrize(
    ("status", "retry_after", "attempt", "delay"),
    [
        (429, "2", 0, 2.0),
        (429, "100", 0, 30.0),  # capped
        (429, None, 1, 1.0),  # backoff 0.5 * 2**1
        (503, None, 2, 2.0),
        (500, "garbage", 0, 0.5),
        (408, None, 0, 0.5),
        (409, "0", 0, 0.0),
        (None, None, 3, 4.0),  # timeout or refused connection
        (None, None, 10, 8.0),  # backoff capped
        (400, "5", 0, None),
        (401, None, 0, None),
        (404, None, 0, None),
    ],
)
def test_retry_delay(
    status: int | None, retry_after: str | None, attempt: int, delay: float | None
) -> None:
    assert gateway.retry_delay(status, retry_after, attempt, 30.0, 0.5) == delay


def test_retry_after_as_an_http_date() -> None:
    assert (
        gateway.retry_delay(429, "Wed, 21 Oct 2015 07:28:05 GMT", 0, 30, 0.5, now=1445412480.0)
        == 5.0
    )


def test_cost_of() -> None:
    assert gateway.cost_of(None, 1000, 100, 0) is None
    assert gateway.cost_of(Price(1.0, 2.0, 0.1), 1_000_000, 500_000, 400_000) == pytest.approx(
        0.6 + 1.0 + 0.04
    )


@pytest.mark.parametrize(
    ("usage", "counts"),
    [
        ({"prompt_tokens": 100, "completion_tokens": 7,
          "prompt_tokens_details": {"cached_tokens": 40}}, (100, 7, 40)),
        ({"prompt_tokens": 10, "completion_tokens": 3}, (10, 3, 0)),
        ({"prompt_tokens": None, "prompt_tokens_details": None}, (0, 0, 0)),
        ({"prompt_tokens": 5, "prompt_tokens_details": [1]}, (5, 0, 0)),
        ({}, (0, 0, 0)),
        (None, (0, 0, 0)),
        ([1, 2], (0, 0, 0)),
    ],
)  # fmt: skip
def test_usage_of_an_answer(usage: object, counts: tuple[int, int, int]) -> None:
    found = Usage.of(usage)
    assert (found.prompt, found.completion, found.cached) == counts


def test_usage_cost_is_cost_of_its_counts() -> None:
    price = Price(1.0, 2.0, 0.1)
    assert Usage(1_000_000, 500_000, 400_000).cost(price) == gateway.cost_of(
        price, 1_000_000, 500_000, 400_000
    )
    assert Usage(1000, 100, 0).cost(None) is None


def dead_url() -> str:
    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def config(*endpoints: Endpoint, timeout: float = 5.0, attempts: int = 3) -> GatewayConfig:
    return GatewayConfig(
        endpoints, timeout, attempts, backoff_base=0.05, prices={"m1": Price(1.0, 2.0, 0.5)}
    )


MSG = [{"role": "user", "content": "hi"}]


def test_429_retry_after_then_500_then_success() -> None:
    with Gateway([Step(429, {"Retry-After": "1"}), Step(500), Step(text="ok")]) as gw:
        done = gateway.complete(config(Endpoint("primary", gw.url, "k", ("m1",))), MSG)
        gaps = [b - a for a, b in zip(gw.times, gw.times[1:], strict=False)]
    assert done.text == "ok" and done.endpoint == "primary"
    assert [a.status for a in done.attempts] == ["429", "500", "200"]
    assert gaps[0] >= 0.95, "Retry-After was not honoured"
    assert [a.waited_s for a in done.attempts] == [0.0, 1.0, 0.1]
    last = done.attempts[-1]
    assert (last.prompt_tokens, last.completion_tokens, last.cached_tokens) == (1000, 100, 400)
    assert last.cost == pytest.approx((600 * 1.0 + 400 * 0.5 + 100 * 2.0) / 1e6)
    assert gw.auth == ["Bearer k"] * 3


def test_retries_reuse_one_connection() -> None:
    """One httpx2 client per endpoint: a model's retries ride one kept-alive connection (the
    urllib client opened a new one for each attempt)."""
    with Gateway([Step(429, {"Retry-After": "0"}), Step(500), Step(text="ok")]) as gw:
        done = gateway.complete(config(Endpoint("primary", gw.url, "k", ("m1",))), MSG)
    assert [a.status for a in done.attempts] == ["429", "500", "200"]
    assert len(gw.peers) == 3 and len(set(gw.peers)) == 1, gw.peers


def test_without_httpx2_the_worker_imports_and_its_first_call_says_what_to_install() -> None:
    """The core install has no httpx2: the job runner still imports, the gateway's first call
    is one clear error (a real interpreter with httpx2 made unimportable)."""
    script = (
        "import sys; sys.modules['httpx2'] = None\n"
        "import autoresearch.worker.runner, autoresearch.worker.bridge\n"
        "from autoresearch.errors import ContractError\n"
        "from autoresearch.worker import gateway as g\n"
        "cfg = g.GatewayConfig((g.Endpoint('primary', 'http://127.0.0.1:9/v1', '', ('m',)),))\n"
        "try:\n"
        "    g.complete(cfg, [])\n"
        "except ContractError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == upstream.MSG_NO_HTTPX


def test_a_timeout_is_retried() -> None:
    with Gateway([Step(hang=2.0), Step(text="late but fine")]) as gw:
        t0 = time.monotonic()
        done = gateway.complete(config(Endpoint("primary", gw.url, "", ("m1",)), timeout=0.3), MSG)
    assert [a.status for a in done.attempts] == ["timeout", "200"]
    assert time.monotonic() - t0 < 2.0


def test_a_dead_primary_falls_back_and_a_4xx_is_not_retried() -> None:
    with Gateway([Step(400), Step(text="from fallback")]) as gw:
        cfg = config(
            Endpoint("primary", dead_url(), "", ("m1",)),
            Endpoint("fallback", gw.url, "", ("bad-model", "m2")),
            attempts=2,
        )
        done = gateway.complete(cfg, MSG)
    assert [(a.endpoint, a.model, a.status) for a in done.attempts] == [
        ("primary", "m1", "connection_error"),
        ("primary", "m1", "connection_error"),
        ("fallback", "bad-model", "400"),  # no retry on a bad request: the next model
        ("fallback", "m2", "200"),
    ]
    assert done.text == "from fallback" and done.model == "m2"


def test_everything_failing_is_one_structured_error() -> None:
    with Gateway([Step(503)] * 2) as gw, pytest.raises(GatewayError) as caught:
        gateway.complete(config(Endpoint("primary", gw.url, "", ("m1",)), attempts=2), MSG)
    assert caught.value.message.startswith("autoresearch_gateway_failed")
    assert [a.status for a in caught.value.attempts] == ["503", "503"]


def test_config_from_environment_and_file(tmp_path: Path) -> None:
    (tmp_path / "autoresearch").mkdir()
    (tmp_path / "autoresearch" / "gateway.json").write_text(
        json.dumps(
            {
                "url": "http://file/v1",
                "models": "a,b",
                "prices": {"a": {"prompt": 1, "completion": 2}},
            }
        )
    )
    env = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "AUTORESEARCH_GATEWAY_MODELS": "x",
        "AUTORESEARCH_GATEWAY_FALLBACK_URL": "http://fb/v1/",
        "AUTORESEARCH_GATEWAY_FALLBACK_MODELS": "y",
    }
    cfg = gateway.load_config(env)
    assert [(e.label, e.url, e.models) for e in cfg.endpoints] == [
        ("primary", "http://file/v1", ("x",)),
        ("fallback", "http://fb/v1", ("y",)),
    ]
    assert cfg.prices["a"] == Price(1.0, 2.0, 0.0)
    with pytest.raises(Exception, match="autoresearch_gateway_unconfigured"):
        gateway.load_config({"XDG_CONFIG_HOME": str(tmp_path / "none")})


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    repo = job_repo(tmp_path / "repo")
    repo.write("src/keys.py", f'KEY = "{SECRET}"\ndef load():\n    return KEY\n')
    repo.commit("keys")
    return repo


@pytest.mark.anyio
async def test_model_tools_through_mcp_with_fallback_metrics_and_a_degraded_circuit(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        Step(500, {"Retry-After": "0"}),
        Step(text="load() returns KEY (src/keys.py:3)"),
        Step(text="ship"),
        Step(text="Set VALUE to 2"),
        *[Step(400)] * circuits.THRESHOLD,
    ]
    with Gateway(script) as gw:
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_URL", dead_url())
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MODELS", "cheap")
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MAX_ATTEMPTS", "1")
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_FALLBACK_URL", gw.url)
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_FALLBACK_MODELS", "cheap")
        async with connect(build_server(repo.root)) as t:
            monkeypatch.setenv("AUTORESEARCH_GATEWAY_MAX_ATTEMPTS", "2")
            answer = await t.ok(
                "analyze", {"question": "What does load return?", "files": ["src/keys.py"]}
            )
            assert answer.data["answer"].startswith("load() returns KEY")
            assert [(a["endpoint"], a["status"]) for a in answer.data["attempts"]] == [
                ("primary", "connection_error"),
                ("primary", "connection_error"),
                ("fallback", "500"),
                ("fallback", "200"),
            ]
            repo.write("src/app.py", "VALUE = 2\n")
            assert (await t.ok("review", {})).data["answer"] == "ship"
            assert (await t.ok("draft", {"kind": "commit_message"})).data[
                "answer"
            ] == "Set VALUE to 2"
            monkeypatch.setenv("AUTORESEARCH_GATEWAY_URL", gw.url)  # now only 400s
            monkeypatch.delenv("AUTORESEARCH_GATEWAY_FALLBACK_URL")
            monkeypatch.setenv("AUTORESEARCH_GATEWAY_MAX_ATTEMPTS", "1")
            for _ in range(circuits.THRESHOLD):
                err = await t.error("analyze", {"question": "load?", "files": ["src/keys.py"]})
                assert err.startswith("autoresearch_gateway_failed")
            degraded = await t.ok(
                "analyze", {"question": "What does load return?", "files": ["src/keys.py"]}
            )
            assert degraded.data["degraded"] is True and degraded.data["answer"] is None
            assert "def load" in degraded.data["evidence"]["pack"]
            assert SECRET not in json.dumps(degraded.data)
        sent = json.dumps(gw.requests)
    assert "src/keys.py" in sent and SECRET not in sent, "a secret reached the gateway"
    state = repo.root / ".autoresearch" / "worker"
    rows = [json.loads(x) for x in (state / "metrics.jsonl").read_text().splitlines()]
    attempts = [r for r in rows if r["category"] == "gateway_attempt"]
    assert [(r["endpoint"], r["status"], r["http_status"]) for r in attempts[:4]] == [
        ("primary", "error", "connection_error"),
        ("primary", "error", "connection_error"),
        ("fallback", "error", "500"),
        ("fallback", "ok", "200"),
    ]
    assert attempts[3]["prompt_tokens"] == 1000 and attempts[3]["for_tool"] == "analyze"
    done = cli("worker", "stats", "--json", cwd=repo.root)
    tools = {x["tool"]: x for x in json.loads(done.stdout)["tools"]}
    assert tools["analyze"]["calls"] == 7 and tools["analyze"]["errors"] == circuits.THRESHOLD
    assert tools["gateway"]["calls"] == len(attempts)


@pytest.mark.anyio
async def test_review_of_a_job_sends_its_recorded_diff_and_task(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from worker_helpers import agent

    secret_line = f'TOKEN = "{SECRET}"'
    with Gateway([Step(text="ship: it sets VALUE")]) as gw:
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_URL", gw.url)
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MODELS", "cheap")
        async with connect(build_server(repo.root)) as t:
            start = {
                "prompt": "Set VALUE to 2 in src/app.py.",
                "verification_policy": {"task_kind": "modifying"},
                "agent": agent("edit", "src/app.py", f"VALUE = 2\n{secret_line}"),
                "scoped_patch": {"paths": ["src"]},
                "checks": [{"name": "v", "command": "grep -q 'VALUE = 2' src/app.py"}],
                "isolation": "worktree",
            }
            job_id = (await t.ok("job_start", start)).data["job_id"]
            await t.ok("job_wait", {"job_id": job_id, "timeout_ms": 30_000})
            repo.write("src/app.py", "VALUE = 3\n")  # the working tree is not what is reviewed
            answer = await t.ok("review", {"job_id": job_id})
            assert answer.data["answer"] == "ship: it sets VALUE"
            assert answer.data["receipt"]["bytes_read"] > 0
            err = await t.error("review", {"job_id": job_id, "base": "HEAD~1"})
            assert "omit base and files" in err
            missing = await t.error("review", {"job_id": "job_000000000000"})
            assert missing.startswith("autoresearch_job_not_found")
        [request] = gw.requests
    sent = request["messages"][1]["content"]
    assert "Set VALUE to 2 in src/app.py." in sent and "+VALUE = 2" in sent
    assert "VALUE = 3" not in sent
    assert SECRET not in json.dumps(gw.requests), "a secret reached the gateway"


def test_review_of_a_running_job_is_refused_until_it_ends(repo: Repo) -> None:
    from autoresearch.errors import ContractError
    from autoresearch.worker import jobs
    from autoresearch.worker.model import JobRequest
    from autoresearch.worker.tools.base import Workspace
    from autoresearch.worker.tools.model_tools import review_job

    pidfile = repo.root.parent / "pids"
    from worker_helpers import agent, wait_for_file

    view = jobs.start(
        repo.root,
        JobRequest(prompt="hang", agent=agent("hang", str(pidfile)), sandbox=SandboxMode.NONE),
    )
    try:
        wait_for_file(pidfile)
        with pytest.raises(ContractError, match="autoresearch_job_running"):
            review_job(Workspace(repo.root), view.job.job_id)
    finally:
        jobs.cancel(repo.root, view.job.job_id, wait_seconds=10)
