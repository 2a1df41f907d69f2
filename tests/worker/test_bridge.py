"""The Anthropic-Messages ↔ Chat-Completions bridge: the translation as tables (pure), then the
live bridge on 127.0.0.1 in front of the scripted Chat Completions server (streamed and not,
its token, its bound, a failing gateway)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from gateway_server import Gateway, Step

from autoresearch.contracts.job_result import GatewaySpend
from autoresearch.worker import bridge, translate
from autoresearch.worker.bridge import Bridge
from autoresearch.worker.gateway import Endpoint, GatewayConfig, Usage
from autoresearch.worker.translate import StreamTranslator, to_chat, to_message
from model_server import MODEL, STOP_POLL, Exchange, ModelServer, Reply, Tokens, ToolCall

TOOLS = [{"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}]


@pytest.mark.parametrize(
    ("body", "chat"),
    [
        (  # system as blocks, a plain user turn
            {"system": [{"type": "text", "text": "Be terse."}, {"type": "text", "text": "Go."}],
             "messages": [{"role": "user", "content": "hi"}], "max_tokens": 50},
            {"model": "m", "max_tokens": 50, "messages": [
                {"role": "system", "content": "Be terse.\nGo."},
                {"role": "user", "content": "hi"}]},
        ),
        (  # a tool call and its result, with text after the result
            {"messages": [
                {"role": "user", "content": [{"type": "text", "text": "read a"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "reading"},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [
                        {"type": "text", "text": "A"}]},
                    {"type": "text", "text": "now b"}]},
            ], "tools": TOOLS, "tool_choice": {"type": "any"}},
            {"model": "m", "messages": [
                {"role": "user", "content": "read a"},
                {"role": "assistant", "content": "reading", "tool_calls": [
                    {"id": "t1", "type": "function",
                     "function": {"name": "Read", "arguments": '{"path": "a"}'}}]},
                {"role": "tool", "tool_call_id": "t1", "content": "A"},
                {"role": "user", "content": "now b"}],
             "tools": [{"type": "function", "function": {
                 "name": "Read", "description": "Read a file",
                 "parameters": {"type": "object"}}}],
             "tool_choice": "required"},
        ),
        (  # an error result, an image, a named tool choice, streaming, stop sequences
            {"messages": [
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t2", "content": "no such file",
                     "is_error": True},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": "AAAA"}},
                    {"type": "text", "text": "look"}]},
            ], "tools": TOOLS, "tool_choice": {"type": "tool", "name": "Read"},
             "stream": True, "stop_sequences": ["END"], "temperature": 0},
            {"model": "m", "messages": [
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "t2", "type": "function",
                     "function": {"name": "Read", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "t2", "content": "[tool error] no such file"},
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "text", "text": "look"}]}],
             "tools": [{"type": "function", "function": {
                 "name": "Read", "description": "Read a file",
                 "parameters": {"type": "object"}}}],
             "tool_choice": {"type": "function", "function": {"name": "Read"}},
             "stream": True, "stream_options": {"include_usage": True},
             "stop": ["END"], "temperature": 0},
        ),
    ],
)  # fmt: skip
def test_messages_request_to_chat(body: dict[str, Any], chat: dict[str, Any]) -> None:
    assert to_chat(body, "m") == chat


@pytest.mark.parametrize(
    ("answer", "content", "stop"),
    [
        ({"content": "done"}, [{"type": "text", "text": "done"}], "end_turn"),
        (
            {"content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "Read", "arguments": '{"path": "a"}'}}]},
            [{"type": "tool_use", "id": "c1", "name": "Read", "input": {"path": "a"}}],
            "tool_use",
        ),
        (  # arguments that are not a JSON object still make an object input
            {"content": "hm", "tool_calls": [
                {"id": "c2", "function": {"name": "Bash", "arguments": "ls -l"}}]},
            [{"type": "text", "text": "hm"},
             {"type": "tool_use", "id": "c2", "name": "Bash", "input": {"arguments": "ls -l"}}],
            "tool_use",
        ),
        ({"content": ""}, [{"type": "text", "text": ""}], "end_turn"),
    ],
)  # fmt: skip
def test_chat_answer_to_message(answer: dict[str, Any], content: list, stop: str) -> None:
    data = {
        "choices": [{"message": answer, "finish_reason": "tool_calls" if stop == "tool_use" else "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                  "prompt_tokens_details": {"cached_tokens": 40}},
    }  # fmt: skip
    message = to_message(data, "m", "msg_1")
    assert message["content"] == content and message["stop_reason"] == stop
    assert message["usage"] == {
        "input_tokens": 60, "cache_read_input_tokens": 40,
        "cache_creation_input_tokens": 0, "output_tokens": 7,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("usage", "messages_usage"),
    [
        (Usage(100, 7, 40), (60, 40, 7)),
        (Usage(10, 3, 0), (10, 0, 3)),
        (Usage(5, 1, 9), (0, 9, 1)),  # more cached than prompt: no negative fresh input
        (Usage(), (0, 0, 0)),
    ],
)
def test_gateway_usage_as_messages_usage(
    usage: Usage, messages_usage: tuple[int, int, int]
) -> None:
    fresh, cached, output = messages_usage
    assert translate.anthropic_usage(usage) == {
        "input_tokens": fresh, "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0, "output_tokens": output,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("finish", "tools", "reason"),
    [("stop", False, "end_turn"), ("length", False, "max_tokens"), ("tool_calls", True, "tool_use"),
     (None, True, "tool_use"), (None, False, "end_turn"), ("weird", False, "end_turn")],
)  # fmt: skip
def test_stop_reasons(finish: str | None, tools: bool, reason: str) -> None:
    assert translate.stop_reason(finish, tools) == reason


def test_stream_chunks_become_message_events() -> None:
    t = StreamTranslator("m", "msg_1")
    chunks = [
        {"choices": [{"delta": {"role": "assistant", "content": "Let me "}}]},
        {"choices": [{"delta": {"content": "look."}}]},
        {"choices": [{"delta": {"tool_calls": [
            {"index": 0, "id": "c1", "function": {"name": "Read", "arguments": '{"pa'}}]}}]},
        {"choices": [{"delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": 'th": "a"}'}}]}}]},
        {"choices": [{"delta": {"tool_calls": [
            {"index": 1, "id": "c2", "function": {"name": "Bash", "arguments": "{}"}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 3}},
    ]  # fmt: skip
    events = [e for c in chunks for e in t.feed(c)] + t.finish_events()
    kinds = [(e["type"], e.get("index")) for e in events]
    assert kinds == [
        ("message_start", None),
        ("content_block_start", 0), ("content_block_delta", 0), ("content_block_delta", 0),
        ("content_block_stop", 0),
        ("content_block_start", 1), ("content_block_delta", 1), ("content_block_delta", 1),
        ("content_block_stop", 1),
        ("content_block_start", 2), ("content_block_delta", 2), ("content_block_stop", 2),
        ("message_delta", None), ("message_stop", None),
    ]  # fmt: skip
    assert events[5]["content_block"] == {
        "type": "tool_use",
        "id": "c1",
        "name": "Read",
        "input": {},
    }
    partial = "".join(e["delta"]["partial_json"] for e in events if e.get("index") == 1
                      and e["type"] == "content_block_delta")  # fmt: skip
    assert json.loads(partial) == {"path": "a"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"
    assert events[-2]["usage"]["output_tokens"] == 3 and events[-2]["usage"]["input_tokens"] == 10


def test_an_empty_stream_is_one_empty_text_block() -> None:
    t = StreamTranslator("m", "msg_1")
    events = t.feed({"choices": [{"delta": {}, "finish_reason": "stop"}]}) + t.finish_events()
    assert [e["type"] for e in events] == [
        "message_start", "content_block_start", "content_block_stop", "message_delta",
        "message_stop",
    ]  # fmt: skip


def test_stream_chunks_stop_at_done() -> None:
    """The events' data as httpx2's SSE parser hands them over: non-JSON is skipped."""
    data = ['{"a": 1}', "not json", "[1, 2]", '{"b": 2}', "[DONE]", '{"c": 3}']
    assert list(translate.stream_chunks(data)) == [{"a": 1}, {"b": 2}]


# --- the live bridge ---------------------------------------------------------------------------


def config(url: str) -> GatewayConfig:
    return GatewayConfig(
        (Endpoint("primary", url, "sk-upstreamkey0123456789abcdef", (MODEL,)),), 10.0
    )


def post(b: Bridge, body: dict[str, Any], token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        b.url + "/v1/messages",
        json.dumps(body).encode(),
        {"content-type": "application/json", "x-api-key": token or b.token},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def events_of(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def plan(ex: Exchange) -> Reply:
    if not ex.tool_results:
        return Reply(tool_calls=(ToolCall("Read", {"file_path": "/x"}),), tokens=Tokens(50, 5, 10))
    return Reply(text=f"got {ex.tool_results[0]}")


ASK = {"model": "claude-whatever", "max_tokens": 100, "tools": TOOLS,
       "messages": [{"role": "user", "content": "read /x"}]}  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
def test_the_bridge_round_trips_a_tool_call(stream: bool) -> None:
    rows: list[bridge.Exchange] = []
    with (
        ModelServer(plan, max_requests=10) as server,
        Bridge(config(server.url + "/v1"), on_exchange=rows.append) as b,
    ):
        status, raw = post(b, {**ASK, "stream": stream})
        assert status == 200, raw
        if stream:
            events = events_of(raw)
            assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
            start = next(e for e in events if e["type"] == "content_block_start")
            call = start["content_block"]
            args = json.loads("".join(
                e["delta"]["partial_json"] for e in events
                if e["type"] == "content_block_delta"))  # fmt: skip
        else:
            message = json.loads(raw)
            call = next(b for b in message["content"] if b["type"] == "tool_use")
            args = call["input"]
            assert message["stop_reason"] == "tool_use"
        assert call["name"] == "Read" and args == {"file_path": "/x"}
        follow = {**ASK, "stream": stream, "messages": [
            *ASK["messages"],
            {"role": "assistant", "content": [{**call, "input": args}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call["id"], "content": "X!"}]}]}  # fmt: skip
        status, raw = post(b, follow)
        text = (
            "".join(e["delta"].get("text", "") for e in events_of(raw) if e["type"] == "content_block_delta")
            if stream else json.loads(raw)["content"][0]["text"]
        )  # fmt: skip
        assert text == "got X!"
    assert not server.errors
    first = server.exchanges[0].body
    assert first["model"] == MODEL  # an unknown model name maps to the gateway's first
    assert first["tools"][0]["function"]["name"] == "Read"
    assert bool(first.get("stream")) is stream
    assert [r.status for r in rows] == ["200", "200"]
    assert rows[0].usage == Usage(50, 5, 10)


def test_the_bridge_refuses_strangers_and_stops_at_its_bound() -> None:
    with (
        ModelServer(plan, max_requests=10) as server,
        Bridge(config(server.url + "/v1"), max_requests=1) as b,
    ):
        status, raw = post(b, ASK, token="sk-not-the-token")
        assert status == 401 and json.loads(raw)["type"] == "error"
        assert post(b, ASK)[0] == 200
        status, raw = post(b, ASK)
        assert status == 429 and "more than 1 requests" in raw.decode()
    assert len(server.exchanges) == 1  # refused requests never reached the gateway


def test_gateway_errors_come_back_as_anthropic_errors() -> None:
    failing = ModelServer(lambda ex: Reply(error=(429, "slow down")), max_requests=10)
    with failing as server, Bridge(config(server.url + "/v1")) as b:
        status, raw = post(b, ASK)
    assert status == 429
    body = json.loads(raw)
    assert body["error"]["type"] == "rate_limit_error" and "slow down" in body["error"]["message"]
    with Bridge(config("http://127.0.0.1:9/v1")) as b:  # nothing listens on port 9
        status, raw = post(b, ASK)
    assert status == 502 and json.loads(raw)["error"]["type"] == "api_error"


def test_the_claude_jobs_switch_from_environment_and_file(tmp_path: Path) -> None:
    from autoresearch.worker.gateway import claude_jobs

    (tmp_path / "autoresearch").mkdir()
    (tmp_path / "autoresearch" / "gateway.json").write_text('{"claude_jobs": true}')
    assert claude_jobs({"XDG_CONFIG_HOME": str(tmp_path)})
    assert not claude_jobs(
        {"XDG_CONFIG_HOME": str(tmp_path), "AUTORESEARCH_GATEWAY_CLAUDE_JOBS": "0"}
    )
    assert claude_jobs(
        {"XDG_CONFIG_HOME": str(tmp_path / "none"), "AUTORESEARCH_GATEWAY_CLAUDE_JOBS": "1"}
    )
    assert not claude_jobs({"XDG_CONFIG_HOME": str(tmp_path / "none")})


def test_a_jobs_bridge_lives_only_as_long_as_its_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("AUTORESEARCH_GATEWAY_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("AUTORESEARCH_GATEWAY_MODELS", MODEL)
    monkeypatch.setenv("AUTORESEARCH_GATEWAY_API_KEY", "sk-upstreamkey0123456789abcdef")
    with bridge.job_bridge("codex", tmp_path, "job_1") as none:
        assert none == bridge.JobBridge({})  # only claude jobs, and only when switched on
    monkeypatch.setenv("AUTORESEARCH_GATEWAY_CLAUDE_JOBS", "1")
    with bridge.job_bridge("claude", tmp_path, "job_1") as bridged:
        env = bridged.env
        assert bridged.spend == bridge.Spend()
        url = env["ANTHROPIC_BASE_URL"]
        assert url.startswith("http://127.0.0.1:") and env["ANTHROPIC_API_KEY"].startswith(
            "bridge-"
        )
        assert env["AUTORESEARCH_GATEWAY_API_KEY"] == ""  # the child never sees the real key
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=5) as r:
            assert r.status == 200
    with pytest.raises(OSError):
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=5)


def test_a_refused_request_leaves_a_kept_alive_connection_in_step() -> None:
    import http.client

    with ModelServer(plan, max_requests=10) as server, Bridge(config(server.url + "/v1")) as b:
        conn = http.client.HTTPConnection("127.0.0.1", int(b.url.rsplit(":", 1)[1]), timeout=10)
        body = json.dumps(ASK)
        for key, status in (("wrong", 401), (b.token, 200)):  # one connection, two requests
            conn.request("POST", "/v1/messages", body, {"x-api-key": key})
            response = conn.getresponse()
            assert response.status == status
            response.read()
        conn.close()


def test_a_request_with_nan_is_refused_as_not_json() -> None:
    """NaN is no JSON (Python's json reads it): refused here, not dropped on the way out."""
    raw = json.dumps({**ASK, "temperature": float("nan")}).encode()  # writes a bare NaN
    with ModelServer(plan, max_requests=10) as server, Bridge(config(server.url + "/v1")) as b:
        request = urllib.request.Request(
            b.url + "/v1/messages", raw, {"content-type": "application/json", "x-api-key": b.token}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        body = json.loads(refused.value.read())
    assert refused.value.code == 400 and body["error"]["type"] == "invalid_request_error"
    assert "not JSON" in body["error"]["message"] and not server.exchanges


def test_spend_adds_up_what_was_priced() -> None:
    spend = bridge.Spend()
    spend.add(Usage(100, 20, 10), None)  # no price for this model: tokens only
    assert spend.cost_usd is None and spend.requests == 1
    spend.add(Usage(100, 20, 0), 0.00014)
    spend.add(Usage(50, 5, 0), 0.00000001)
    assert spend.cost_usd == 0.00014001 and spend.prompt_tokens == 250 and spend.cached_tokens == 10
    assert spend.gateway() == GatewaySpend(0.00014001, 3)


# --- the bridge's client to the gateway (httpx2) -----------------------------------------------


def test_the_bridges_requests_share_one_connection_to_the_gateway() -> None:
    """One httpx2 client per bridge: the job's requests reuse a kept-alive connection (the
    urllib client opened one per request)."""
    with Gateway([Step(text="one"), Step(text="two")]) as gw, Bridge(config(gw.url)) as b:
        texts = [json.loads(post(b, ASK)[1])["content"][0]["text"] for _ in range(2)]
    assert texts == ["one", "two"]
    assert len(set(gw.peers)) == 1, gw.peers
    assert gw.auth == ["Bearer sk-upstreamkey0123456789abcdef"] * 2


def test_a_gateway_slower_than_the_timeout_is_a_504_recorded_as_timeout() -> None:
    rows: list[bridge.Exchange] = []
    with Gateway([Step(hang=2.0)]) as gw:
        cfg = GatewayConfig((Endpoint("primary", gw.url, "", (MODEL,)),), 0.3)
        with Bridge(cfg, on_exchange=rows.append) as b:
            status, raw = post(b, ASK)
    assert status == 504 and "gateway unreachable" in json.loads(raw)["error"]["message"]
    assert [r.status for r in rows] == ["timeout"]


class BrokenStream:
    """A Chat Completions endpoint whose stream sends one chunk, then drops the connection in
    the middle of the next (chunked encoding left unfinished)."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                event = b'data: {"choices": [{"delta": {"content": "par"}}]}\n\n'
                self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                self.wfile.write(b"ff\r\ndata: {")  # a chunk that never ends
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, args=(STOP_POLL,), daemon=True
        )

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def test_a_stream_that_breaks_ends_with_an_error_event() -> None:
    rows: list[bridge.Exchange] = []
    with BrokenStream() as url, Bridge(config(url), on_exchange=rows.append) as b:
        status, raw = post(b, {**ASK, "stream": True})
    assert status == 200  # the stream had started: the break is its last event
    events = events_of(raw)
    assert events[2]["delta"] == {"type": "text_delta", "text": "par"}
    assert events[-1]["type"] == "error" and "stream broke" in events[-1]["error"]["message"]
    assert [r.status for r in rows] == ["connection_error"]
