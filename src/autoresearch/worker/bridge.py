"""A local Anthropic-Messages ↔ Chat-Completions bridge: a Claude Code job on the gateway.

Claude Code speaks only the Anthropic Messages API; the worker's gateway is OpenAI-compatible
(`/chat/completions`). With `AUTORESEARCH_GATEWAY_CLAUDE_JOBS=1` (or `"claude_jobs": true` in
gateway.json) the runner of a `claude` job starts this bridge on 127.0.0.1, on an ephemeral
port, for the agent's lifetime, and points the claude child at it (`ANTHROPIC_BASE_URL`, and
`ANTHROPIC_API_KEY` set to a random per-job token the bridge requires: no other local process
can spend the gateway's credentials through the port, and the gateway's key never reaches the
child). The bridge is stopped with the agent.

Each `POST /v1/messages` is translated (pure functions, table-tested): the system prompt, the
messages with text / image / tool_use / tool_result blocks and the tools become Chat
Completions messages, function tools and tool calls; the answer comes back as an Anthropic
message, or – when the client streams – as the Messages SSE events (message_start,
content_block_start / delta / stop, message_delta, message_stop) translated chunk by chunk
from the gateway's own stream. The model sent upstream is the request's when the primary
endpoint lists it, else the endpoint's first model. Every bridged request is a metrics row
(tool `bridge`, category `gateway_attempt`: status, tokens, latency, cost), and their cost from
the price table replaces Claude Code's own figure in the job's executor record. The request loop
is bounded (`max_requests`, a body size limit); the gateway's errors come back as Anthropic
error bodies with a matching status (Claude Code does its own retrying).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoresearch.clock import utc_now_iso
from autoresearch.contracts.job_result import GatewaySpend
from autoresearch.redact import redact
from autoresearch.worker import gateway
from autoresearch.worker.gateway import Usage

if TYPE_CHECKING:
    from autoresearch.worker.upstream import Answer, Upstream

DEFAULT_MAX_REQUESTS = 2000  # per job: far above what max_turns allows, still a bound
MAX_BODY_BYTES = 32 * 1024 * 1024
AGENT = "claude"

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "end_turn",
}


# --- Messages request → Chat Completions request (pure) ------------------------------------


def _text(content: Any) -> str:
    """The text of a string or a list of blocks (text blocks only)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _image_part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    elif source.get("type") == "url":
        url = str(source.get("url", ""))
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _user_parts(blocks: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A user message's blocks as (tool messages, content parts of one user message)."""
    tools: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            text = _text(block.get("content"))
            if block.get("is_error"):
                text = f"[tool error] {text}"
            tools.append(
                {"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")), "content": text}
            )
        elif kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            image = _image_part(block)
            if image is not None:
                parts.append(image)
        elif kind == "document":
            parts.append({"type": "text", "text": "[a document was attached; not forwarded]"})
    return tools, parts


def _assistant(blocks: Any) -> dict[str, Any]:
    if isinstance(blocks, str):
        return {"role": "assistant", "content": blocks}
    texts, calls = [], []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(
                {
                    "id": str(block.get("id", "")),
                    "type": "function",
                    "function": {"name": str(block.get("name", "")), "arguments": arguments},
                }
            )
        # thinking and redacted_thinking blocks have no Chat Completions form: dropped
    message: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_choice(choice: Any) -> Any:
    if not isinstance(choice, dict):
        return None
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": str(choice.get("name", ""))}}
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))


def to_chat(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """An Anthropic Messages request as a Chat Completions request for `model` (pure)."""
    messages: list[dict[str, Any]] = []
    system = _text(body.get("system"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") == "assistant":
            messages.append(_assistant(content))
            continue
        if isinstance(content, str):
            messages.append({"role": "user", "content": content})
            continue
        tools, parts = _user_parts(content if isinstance(content, list) else [])
        messages += tools  # right after the assistant's tool calls, as Chat Completions wants
        if parts:
            plain = all(p["type"] == "text" for p in parts)
            text = "\n".join(p["text"] for p in parts) if plain else None
            messages.append({"role": "user", "content": text if plain else parts})
    out: dict[str, Any] = {"model": model, "messages": messages}
    tools = [
        {
            "type": "function",
            "function": {
                "name": str(t.get("name", "")),
                "description": str(t.get("description", "")),
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in body.get("tools") or []
        if isinstance(t, dict) and t.get("name")
    ]
    if tools:
        out["tools"] = tools
        choice = _tool_choice(body.get("tool_choice"))
        if choice is not None:
            out["tool_choice"] = choice
    for ours, theirs in (("max_tokens", "max_tokens"), ("temperature", "temperature"),
                         ("top_p", "top_p"), ("stop_sequences", "stop")):  # fmt: skip
        if body.get(ours) is not None:
            out[theirs] = body[ours]
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


# --- Chat Completions answer → Messages answer (pure) --------------------------------------


def anthropic_usage(usage: Usage) -> dict[str, int]:
    """The gateway's counts as a Messages `usage`: Anthropic counts cache reads apart from the
    fresh input tokens (pure)."""
    return {
        "input_tokens": max(usage.prompt - usage.cached, 0),
        "cache_read_input_tokens": usage.cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": usage.completion,
    }


def tool_input(arguments: Any) -> dict[str, Any]:
    """A function call's JSON arguments as a tool_use input (an object, whatever came)."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        return {"arguments": str(arguments)}
    return value if isinstance(value, dict) else {"arguments": value}


def stop_reason(finish: Any, has_tools: bool) -> str:
    if finish is None:
        return "tool_use" if has_tools else "end_turn"
    return STOP_REASONS.get(str(finish), "end_turn")


def to_message(data: Mapping[str, Any], model: str, message_id: str) -> dict[str, Any]:
    """A Chat Completions answer as an Anthropic message (pure)."""
    choices = data.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") or {}
    content: list[dict[str, Any]] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    for n, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        content.append(
            {
                "type": "tool_use",
                "id": str(call.get("id") or f"toolu_{message_id}_{n}"),
                "name": str(function.get("name", "")),
                "input": tool_input(function.get("arguments")),
            }
        )
    if not content:
        content.append({"type": "text", "text": ""})
    has_tools = any(b["type"] == "tool_use" for b in content)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(choice.get("finish_reason"), has_tools),
        "stop_sequence": None,
        "usage": anthropic_usage(Usage.of(data.get("usage"))),
    }


def message_events(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Messages stream events that carry a whole message (pure)."""
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opened, delta = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": block["text"]},
            )
        events += [
            {"type": "content_block_start", "index": index, "content_block": opened},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": message["usage"],
        },
        {"type": "message_stop"},
    ]
    return events


@dataclass
class StreamTranslator:
    """Chat Completions stream chunks in, Messages stream events out (pure, stateful)."""

    model: str
    message_id: str
    usage: Usage = field(default_factory=Usage)
    finish: str | None = None
    _started: bool = False
    _blocks: int = 0  # blocks opened so far
    _open: tuple[str, int] | None = None  # ("text" | "tool:<chat index>", block index)
    _tools: dict[int, int] = field(default_factory=dict)  # chat tool index → block index

    def _start(self) -> list[dict[str, Any]]:
        if self._started:
            return []
        self._started = True
        message: dict[str, Any] = {
            "id": self.message_id, "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": anthropic_usage(Usage()),
        }  # fmt: skip
        return [{"type": "message_start", "message": message}]

    def _close(self) -> list[dict[str, Any]]:
        if self._open is None:
            return []
        index = self._open[1]
        self._open = None
        return [{"type": "content_block_stop", "index": index}]

    def _open_block(self, key: str, block: dict[str, Any]) -> list[dict[str, Any]]:
        events = self._close()
        self._open = (key, self._blocks)
        self._blocks += 1
        events.append(
            {"type": "content_block_start", "index": self._open[1], "content_block": block}
        )
        return events

    def feed(self, chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
        events = self._start()
        if chunk.get("usage"):
            self.usage = Usage.of(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                if self._open is None or self._open[0] != "text":
                    events += self._open_block("text", {"type": "text", "text": ""})
                assert self._open is not None
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": self._open[1],
                        "delta": {"type": "text_delta", "text": text},
                    }
                )
            for call in delta.get("tool_calls") or []:
                events += self._tool_delta(call)
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])
        return events

    def _tool_delta(self, call: Mapping[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        position = int(call.get("index") or 0)
        function = call.get("function") or {}
        if position not in self._tools:
            block = {
                "type": "tool_use",
                "id": str(call.get("id") or f"toolu_{self.message_id}_{position}"),
                "name": str(function.get("name", "")),
                "input": {},
            }
            events += self._open_block(f"tool:{position}", block)
            self._tools[position] = self._blocks - 1
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            events.append(
                {
                    "type": "content_block_delta",
                    "index": self._tools[position],
                    "delta": {"type": "input_json_delta", "partial_json": arguments},
                }
            )
        return events

    def finish_events(self) -> list[dict[str, Any]]:
        events = self._start()
        if self._blocks == 0:  # an empty answer is still one (empty) text block
            events += self._open_block("text", {"type": "text", "text": ""})
        events += self._close()
        reason = stop_reason(self.finish, bool(self._tools))
        events += [
            {
                "type": "message_delta",
                "delta": {"stop_reason": reason, "stop_sequence": None},
                "usage": anthropic_usage(self.usage),
            },
            {"type": "message_stop"},
        ]
        return events


def stream_chunks(event_data: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of a Chat Completions stream's events, until `[DONE]` (pure)."""
    for data in event_data:
        payload = data.strip()
        if payload == "[DONE]":
            return
        try:
            value = json.loads(payload)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def sse(event: Mapping[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def error_body(status: int, message: str) -> dict[str, Any]:
    """An Anthropic error body for an upstream failure of `status`."""
    kind = (
        "rate_limit_error" if status == 429
        else "authentication_error" if status == 401
        else "permission_error" if status == 403
        else "not_found_error" if status == 404
        else "overloaded_error" if status in (503, 529)
        else "api_error" if status >= 500
        else "invalid_request_error"
    )  # fmt: skip
    return {"type": "error", "error": {"type": kind, "message": message}}


# --- the server ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    """One bridged request, as the metrics record it."""

    model: str
    stream: bool
    status: str  # the gateway's HTTP status, timeout, connection_error or bad_response
    latency_ms: float
    usage: Usage


@dataclass
class Spend:
    """What the bridged requests cost, by the gateway's usage and the configured price table
    (Claude Code's own cost figure prices its own model names, meaningless here)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None  # None while no request had a price

    def add(self, usage: Usage, cost: float | None) -> None:
        self.requests += 1
        self.prompt_tokens += usage.prompt
        self.completion_tokens += usage.completion
        self.cached_tokens += usage.cached
        if cost is not None:
            self.cost_usd = round((self.cost_usd or 0.0) + cost, 8)

    def gateway(self) -> GatewaySpend:
        """What replaces the agent's own figures in a job's executor record."""
        return GatewaySpend(self.cost_usd, self.requests)


class Bridge:
    """The bridge on 127.0.0.1:<ephemeral>; use as a context manager (stopped on exit)."""

    def __init__(
        self,
        config: gateway.GatewayConfig,
        *,
        max_requests: int = DEFAULT_MAX_REQUESTS,
        on_exchange: Callable[[Exchange], None] | None = None,
    ) -> None:
        self.config = config
        self.endpoint = config.endpoints[0]
        self.token = "bridge-" + secrets.token_hex(16)
        self.max_requests = max_requests
        self.on_exchange = on_exchange
        self.requests = 0
        self.spend = Spend()
        self._lock = threading.Lock()
        self._upstream: Upstream | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def child_env(self) -> dict[str, str]:
        """What the claude child needs to talk to the bridge and nothing else."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": self.token}

    def __enter__(self) -> Bridge:
        # imported here: the core install, without the worker extra, has no httpx2
        from autoresearch.worker.upstream import Upstream

        # one client for the job's requests: they share kept-alive connections to the gateway
        self._upstream = Upstream(self.endpoint.url, self.endpoint.api_key, self.config.timeout)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        if self._upstream is not None:
            self._upstream.close()

    def model_for(self, asked: Any) -> str:
        models = self.endpoint.models
        return str(asked) if asked in models else models[0]

    def admit(self) -> bool:
        with self._lock:
            self.requests += 1
            return self.requests <= self.max_requests

    def record(self, exchange: Exchange) -> None:
        cost = exchange.usage.cost(self.config.prices.get(exchange.model))
        with self._lock:
            self.spend.add(exchange.usage, cost)
        if self.on_exchange is not None:
            # metrics must never break the agent's request
            with contextlib.suppress(Exception):
                self.on_exchange(exchange)

    @contextmanager
    def ask_gateway(self, chat: dict[str, Any]) -> Iterator[Answer]:
        """The gateway's answer to `chat`, read inside the block (Unreachable: none came)."""
        if self._upstream is None:
            raise RuntimeError("the bridge serves inside its `with` block only")
        with self._upstream.post("chat/completions", chat) as answer:
            yield answer


Done = Callable[[str, Usage], None]  # records a bridged request's status and usage


def _handler(bridge: Bridge) -> type[BaseHTTPRequestHandler]:
    from autoresearch.worker.upstream import Unreachable  # with the bridge: see __enter__

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._send(200, b"", "text/plain")

        def do_GET(self) -> None:
            self._send(404, json.dumps(error_body(404, "not found")).encode(), "application/json")

        def do_POST(self) -> None:
            path = self.path.split("?")[0].rstrip("/")
            try:
                length = int(self.headers.get("content-length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY_BYTES:
                self.close_connection = True  # the body is left unread: no next request here
                return self._error(413, f"bridge: a request body of 0..{MAX_BODY_BYTES} bytes")
            raw = self.rfile.read(length)  # read first: a kept-alive connection stays in step
            if not self._authorized():
                return self._error(401, "this bridge serves its own job only")
            if not bridge.admit():
                return self._error(429, f"bridge: more than {bridge.max_requests} requests")
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._error(400, "bridge: the request is not JSON")
            if not isinstance(body, dict):
                return self._error(400, "bridge: the request is not a JSON object")
            if path.endswith("/messages/count_tokens"):
                estimate = len(json.dumps(body)) // 4  # no tokenizer behind a gateway
                return self._send(
                    200, json.dumps({"input_tokens": estimate}).encode(), "application/json"
                )
            if not path.endswith("/messages"):
                return self._error(404, f"bridge: no route {path}")
            self._messages(body)

        def _authorized(self) -> bool:
            key = self.headers.get("x-api-key") or ""
            auth = self.headers.get("authorization") or ""
            return secrets.compare_digest(key, bridge.token) or secrets.compare_digest(
                auth, f"Bearer {bridge.token}"
            )

        def _messages(self, body: dict[str, Any]) -> None:
            model = bridge.model_for(body.get("model"))
            stream = bool(body.get("stream"))
            chat = to_chat(body, model)
            message_id = "msg_" + secrets.token_hex(8)
            t0 = time.monotonic()

            def done(status: str, usage: Usage) -> None:
                latency = round((time.monotonic() - t0) * 1000, 1)
                bridge.record(Exchange(model, stream, status, latency, usage))

            try:
                with bridge.ask_gateway(chat) as answer:
                    self._answer(answer, model, message_id, stream, done)
            except Unreachable as exc:
                done(exc.kind, Usage())
                status = 504 if exc.timed_out else 502
                self._error(status, f"gateway unreachable: {exc}")

        def _answer(
            self, answer: Answer, model: str, message_id: str, stream: bool, done: Done
        ) -> None:
            if not answer.ok:
                detail = answer.read()[:2000].decode("utf-8", "replace")
                done(str(answer.status), Usage())
                return self._error(
                    answer.status, f"gateway answered {answer.status}: {redact(detail)}"
                )
            if stream and answer.streamed:
                return self._relay(answer, model, message_id, done)
            try:
                data = json.loads(answer.read())
                message = to_message(data, model, message_id)
            except (ValueError, TypeError, AttributeError, IndexError):
                done("bad_response", Usage())
                return self._error(502, "the gateway's answer is not a chat completion")
            done("200", Usage.of(data.get("usage")))
            if stream:
                self._start_stream()
                for event in message_events(message):
                    self._chunk(sse(event))
                return self._end_stream()
            self._send(200, json.dumps(message).encode(), "application/json")

        def _relay(self, answer: Answer, model: str, message_id: str, done: Done) -> None:
            translator = StreamTranslator(model, message_id)
            self._start_stream()
            try:
                for chunk in stream_chunks(answer.event_data()):
                    for event in translator.feed(chunk):
                        self._chunk(sse(event))
                for event in translator.finish_events():
                    self._chunk(sse(event))
                done("200", translator.usage)
            except Unreachable as exc:
                done(exc.kind, translator.usage)
                self._chunk(sse(error_body(502, f"the gateway's stream broke: {exc}")))
            self._end_stream()

        def _start_stream(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _end_stream(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _error(self, status: int, message: str) -> None:
            self._send(status, json.dumps(error_body(status, message)).encode(), "application/json")

        def _send(self, status: int, payload: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


# --- a job's bridge ----------------------------------------------------------------------------


def metrics_recorder(
    repo_root: Path, job_id: str, config: gateway.GatewayConfig
) -> Callable[[Exchange], None]:
    """One metrics row per bridged request (`worker stats` shows them as tool `bridge`)."""
    from autoresearch.worker.tools.base import Workspace
    from autoresearch.worker.tools.metrics import Category, Status, record_safely

    ws = Workspace(repo_root)

    def on_exchange(x: Exchange) -> None:
        ok = x.status == "200"
        u = x.usage
        record_safely(
            ws,
            {
                "ts": utc_now_iso(),
                "tool": "bridge",
                "for_tool": f"job {job_id}",
                "category": Category.GATEWAY_ATTEMPT,
                "status": Status.OK if ok else Status.ERROR,
                "error_kind": None if ok else x.status,
                "http_status": x.status,
                "endpoint": "primary",
                "model": x.model,
                "stream": x.stream,
                "latency_ms": x.latency_ms,
                "prompt_tokens": u.prompt,
                "completion_tokens": u.completion,
                "cached_tokens": u.cached,
                "cost": u.cost(config.prices.get(x.model)),
            },
        )

    return on_exchange


# The gateway's keys stay with the bridge: the child gets the bridge's token instead.
WITHHELD = ("AUTORESEARCH_GATEWAY_API_KEY", "AUTORESEARCH_GATEWAY_FALLBACK_API_KEY")


@dataclass(frozen=True)
class JobBridge:
    """A job's agent environment, and the bridge's spend when it runs through one."""

    env: dict[str, str]
    spend: Spend | None = None


@contextmanager
def job_bridge(agent: str, repo_root: Path, job_id: str) -> Iterator[JobBridge]:
    """The bridge of a claude job while `claude_jobs` is on (it runs until the block ends):
    the agent's extra environment and what its requests spent; else nothing."""
    if agent != AGENT or not gateway.claude_jobs(os.environ):
        yield JobBridge({})
        return
    config = gateway.load_config()
    with Bridge(config, on_exchange=metrics_recorder(repo_root, job_id, config)) as bridge:
        yield JobBridge({**dict.fromkeys(WITHHELD, ""), **bridge.child_env()}, bridge.spend)
