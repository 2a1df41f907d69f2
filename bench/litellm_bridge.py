"""LiteLLM's proxy beside the worker's bridge (issue 37): start-up and fidelity on the bridge's
own test cases, both in front of the same scripted Chat Completions server on 127.0.0.1.

    python -m venv /tmp/litellm-bench/venv
    /tmp/litellm-bench/venv/bin/pip install 'litellm[proxy]'
    PYTHONPATH=src python bench/litellm_bridge.py --litellm /tmp/litellm-bench/venv/bin/litellm

Each case sends the same Anthropic `/v1/messages` requests (tool call and its result, streamed
and not; a gateway 429; an unreachable gateway) to our `worker/bridge.Bridge` and to
`litellm --config` (model `openai/scripted-model` at the scripted server), and checks what
Claude Code relies on. Start-up is the time from starting the proxy (or entering the Bridge)
to its first answered `/v1/messages`. No network: LiteLLM reads its local cost map.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from autoresearch.worker.bridge import Bridge
from autoresearch.worker.gateway import Endpoint, GatewayConfig
from model_server import (  # type: ignore[import-not-found]  # tests/, on sys.path above
    MODEL,
    Exchange,
    ModelServer,
    Reply,
    Tokens,
    ToolCall,
)

KEY = "sk-bench-0123456789abcdef"
TOOLS = [{"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}]
ASK: dict[str, Any] = {"model": "claude-whatever", "max_tokens": 100, "tools": TOOLS,
       "messages": [{"role": "user", "content": "read /x"}]}  # fmt: skip
START_PATIENCE_S = 180.0


def plan(ex: Exchange) -> Reply:
    if "rate limit me" in ex.prompt:
        return Reply(error=(429, "slow down"))
    if not ex.tool_results:
        return Reply(tool_calls=(ToolCall("Read", {"file_path": "/x"}),), tokens=Tokens(50, 5, 10))
    return Reply(text=f"got {ex.tool_results[0]}")


def post(url: str, body: dict[str, Any], timeout: float = 30) -> tuple[int, bytes]:
    headers = {"content-type": "application/json", "x-api-key": KEY,
               "anthropic-version": "2023-06-01"}  # fmt: skip
    request = urllib.request.Request(url + "/v1/messages", json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def events_of(raw: bytes) -> list[dict[str, Any]]:
    lines = raw.decode().splitlines()
    return [json.loads(line[5:]) for line in lines if line.startswith("data:")]


# --- the cases: each returns (passed, what was seen) -----------------------------------------


def _first_call(message: dict[str, Any]) -> dict[str, Any] | None:
    return next((b for b in message.get("content", []) if b.get("type") == "tool_use"), None)


def _follow(call: dict[str, Any], stream: bool) -> dict[str, Any]:
    return {**ASK, "stream": stream, "messages": [
        *ASK["messages"], {"role": "assistant", "content": [call]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": "X!"}]}]}  # fmt: skip


def case_tool_call(url: str) -> tuple[bool, str]:
    status, raw = post(url, ASK)
    message = json.loads(raw)
    call = _first_call(message)
    if status != 200 or call is None:
        return False, f"{status} {raw[:200]!r}"
    ok = call["name"] == "Read" and call["input"] == {"file_path": "/x"}
    ok = ok and message.get("stop_reason") == "tool_use"
    status, raw = post(url, _follow(call, False))
    text = "".join(b.get("text", "") for b in json.loads(raw).get("content", []))
    return ok and text == "got X!", f"stop={message.get('stop_reason')} follow-up={text!r}"


def _stream_grammar(events: list[dict[str, Any]]) -> str | None:
    """What breaks the Messages stream grammar Claude Code parses, or None."""
    kinds = [e.get("type") for e in events]
    if not kinds or kinds[0] != "message_start" or kinds[-1] != "message_stop":
        return f"ends {kinds[:1]}..{kinds[-1:]}"
    opened: set[object] = set()
    for event in events:
        index = event.get("index")
        if event["type"] == "content_block_start":
            opened.add(index)
        elif event["type"] in ("content_block_delta", "content_block_stop") and (
            index not in opened
        ):
            return f"{event['type']} of an unopened block {index}"
    return None if "message_delta" in kinds else "no message_delta"


def case_streamed_tool_call(url: str) -> tuple[bool, str]:
    status, raw = post(url, {**ASK, "stream": True})
    events = events_of(raw)
    broken = _stream_grammar(events)
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    call = next((b for b in starts if b.get("type") == "tool_use"), None)
    if status != 200 or broken or call is None:
        return False, f"{status} {broken or 'no tool_use block'}"
    args = "".join(
        e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta"
    )
    stop = next(e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta")
    usage = next(e["usage"] for e in events if e["type"] == "message_delta")
    _, raw = post(url, _follow({**call, "input": json.loads(args)}, True))
    text = "".join(
        e["delta"].get("text", "") for e in events_of(raw) if e["type"] == "content_block_delta"
    )
    ok = json.loads(args) == {"file_path": "/x"} and stop == "tool_use" and text == "got X!"
    return ok, f"stop={stop} usage={usage} follow-up={text!r}"


def case_usage(url: str) -> tuple[bool, str]:
    """The scripted answer: 50 prompt tokens, 10 of them cached, 5 completion tokens."""
    usage = json.loads(post(url, ASK)[1]).get("usage", {})
    seen = (usage.get("input_tokens"), usage.get("cache_read_input_tokens"),
            usage.get("output_tokens"))  # fmt: skip
    return seen == (40, 10, 5), f"input, cache_read, output = {seen}"


def case_gateway_429(url: str) -> tuple[bool, str]:
    status, raw = post(url, {**ASK, "messages": [{"role": "user", "content": "rate limit me"}]})
    try:
        error = json.loads(raw).get("error", {})
    except ValueError:
        error = {}
    kind = error.get("type") if isinstance(error, dict) else None
    return status == 429 and kind == "rate_limit_error", f"{status} {kind} {raw[:160]!r}"


CASES: dict[str, Callable[[str], tuple[bool, str]]] = {
    "tool call and result (JSON)": case_tool_call,
    "tool call and result (stream)": case_streamed_tool_call,
    "usage with cached tokens": case_usage,
    "gateway 429 as rate_limit_error": case_gateway_429,
}


# --- the two bridges ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Started:
    url: str
    startup_s: float
    cpu_s: float  # CPU the server spent until its first answer: steadier on a shared machine
    rss_mb: float | None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _first_answer(url: str, patience: float) -> None:
    """Wait for the first 200 to the tool-call request (refused connections: not yet up)."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            status, raw = post(url, ASK, timeout=30)
        except OSError:
            time.sleep(0.05)
            continue
        if status == 200:
            return
        raise RuntimeError(f"first answer {status}: {raw[:300]!r}")
    raise TimeoutError(f"no answer from {url} within {patience:.0f} s")


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@contextmanager
def ours(upstream: str) -> Iterator[Started]:
    config = GatewayConfig((Endpoint("primary", upstream + "/v1", "sk-up", (MODEL,)),), 30.0)
    t0, cpu0 = time.monotonic(), time.process_time()
    with Bridge(config) as bridge:
        bridge.token = KEY  # the bench's client sends one key to both
        _first_answer(bridge.url, 10)
        cpu = time.process_time() - cpu0  # the bench's own client and server included
        yield Started(bridge.url, time.monotonic() - t0, cpu, None)


@contextmanager
def litellm(program: str, upstream: str) -> Iterator[Started]:
    port = _free_port()
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.yaml"
        config.write_text(
            "model_list:\n  - model_name: claude-whatever\n    litellm_params:\n"
            f"      model: openai/{MODEL}\n      api_base: {upstream}/v1\n"
            "      api_key: sk-up\n"
            f"general_settings:\n  master_key: {KEY}\n"
            "litellm_settings:\n  num_retries: 0\n  telemetry: false\n"
            # the default sends openai/ models to /v1/responses: a Chat Completions gateway
            # (what the worker is configured with) serves only /chat/completions
            "  use_chat_completions_url_for_anthropic_messages: true\n"
            "router_settings:\n  disable_cooldowns: true\n"
        )
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_PROXY": "*"}
        t0 = time.monotonic()
        with (Path(folder) / "log").open("w") as log:
            child = subprocess.Popen(
                [program, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                stdout=subprocess.DEVNULL, stderr=log, env=env,
            )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            try:
                _first_answer(url, START_PATIENCE_S)
            except (RuntimeError, TimeoutError):
                print((Path(folder) / "log").read_text()[-3000:], file=sys.stderr)
                raise
            elapsed = time.monotonic() - t0
            yield Started(url, elapsed, _cpu_s(child.pid), _rss_mb(child.pid))
        finally:
            child.terminate()
            child.wait(timeout=30)


def run_cases(name: str, start: Callable[[str], Any]) -> None:
    with ModelServer(plan, max_requests=1000) as server, start(server.url) as bridge:
        rss = f", RSS {bridge.rss_mb:.0f} MB" if bridge.rss_mb else ""
        load = os.getloadavg()[0]
        print(
            f"## {name}: first answer {bridge.startup_s:.2f} s after start "
            f"(CPU {bridge.cpu_s:.2f} s{rss}; load average {load:.1f})"
        )
        for label, case in CASES.items():
            ok, seen = case(bridge.url)
            print(f"  {'PASS' if ok else 'FAIL'} {label}: {seen}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--litellm", help="the litellm program of a venv with litellm[proxy]")
    args = parser.parse_args()
    run_cases("worker/bridge.Bridge", ours)
    if args.litellm:
        run_cases("litellm --config", lambda up: litellm(args.litellm, up))


if __name__ == "__main__":
    main()
