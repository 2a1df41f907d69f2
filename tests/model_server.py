"""A scripted model server on 127.0.0.1 that real agent CLIs talk to in tests.

It speaks the three wire formats the agents use – OpenAI Responses (SSE, codex), Anthropic
Messages (SSE, Claude Code) and OpenAI Chat Completions (aider; streamed or not, as the
worker's Claude bridge asks) – and answers every request
from a *plan*: a function of the conversation so far that returns the next `Reply` (tool calls,
a final text, or an API error). The agent runs its tools for real; the plan only decides what
the "model" asks for.

    def plan(ex: Exchange) -> Reply:
        if not ex.tool_results:
            return Reply(tool_calls=(ToolCall("exec_command", {"cmd": "echo hi"}),))
        return Reply(text="done")

    with ModelServer(plan) as server:
        env = codex_env(server, tmp_path / "codex-home")   # or claude_env(...)
        subprocess.run(["codex", "exec", ...], env={**os.environ, **env})
    server.exchanges  # every request, in order

The server handles a bounded number of requests (`max_requests`) and is stopped on exit.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

API_KEY = "sk-scripted-test-key"
MODEL = "scripted-model"
# How often a test server's serve_forever looks for a shutdown: shutdown() waits up to one
# poll, and socketserver's default (0.5 s) was most of each server test's wall time.
STOP_POLL = 0.02


@dataclass(frozen=True)
class ToolCall:
    """One tool the model asks the agent to run (the agent's own tool name and input)."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Tokens:
    """What the server reports as the reply's usage."""

    input: int = 100
    output: int = 20
    cached: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True)
class Reply:
    """The model's next turn: tool calls, else the final `text`; or an API error."""

    tool_calls: tuple[ToolCall, ...] = ()
    text: str = "done"
    error: tuple[int, str] | None = None  # HTTP status and message
    tokens: Tokens = field(default_factory=Tokens)


@dataclass(frozen=True)
class Exchange:
    """A request as the plan sees it."""

    api: str  # "responses" | "messages" | "chat"
    prompt: str  # all user-written text of the conversation (the session's instructions)
    tool_results: tuple[str, ...]  # outputs of the tool calls so far, oldest first
    body: dict[str, Any]

    def field(self, label: str) -> str | None:
        """A `Label: value` line of the prompt (autoresearch's instructions are made of them)."""
        match = re.search(rf"^{re.escape(label)}: (.*)$", self.prompt, re.M)
        return match.group(1).strip() if match else None

    @property
    def cwd(self) -> str | None:
        """The agent's working directory, as its own system prompt or context states it."""
        context = "\n".join(
            [
                _text_of(self.body.get("system")),
                _text_of(self.body.get("instructions")),
                self.prompt,
            ]
        )
        match = re.search(r"Primary working directory: (.+)$|<cwd>(.+?)</cwd>", context, re.M)
        return (match.group(1) or match.group(2)).strip() if match else None


Plan = Callable[[Exchange], Reply]


class ModelServer:
    """The server; use as a context manager. `url` is its base URL (no path)."""

    def __init__(self, plan: Plan, max_requests: int = 300) -> None:
        self.plan = plan
        self.max_requests = max_requests
        self.exchanges: list[Exchange] = []
        self.errors: list[str] = []  # plan exceptions: a test should assert this is empty
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(STOP_POLL,), daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, exchange: Exchange) -> Reply:
        with self._lock:
            self.exchanges.append(exchange)
            if len(self.exchanges) > self.max_requests:
                return Reply(
                    error=(400, f"scripted server: more than {self.max_requests} requests")
                )
        try:
            return self.plan(exchange)
        except Exception as exc:  # noqa: BLE001 - a broken plan must fail the test, not hang the agent
            self.errors.append(repr(exc))
            return Reply(error=(400, f"scripted plan failed: {exc!r}"))


# --- the wire formats -------------------------------------------------------------------------


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        kind = content.get("type")
        if kind in ("text", "input_text", "output_text"):
            return str(content.get("text", ""))
        if "content" in content:
            return _text_of(content["content"])
    return ""


def parse_request(path: str, body: dict[str, Any]) -> Exchange:
    """The plan's view of a request in any of the three formats."""
    if path.rstrip("/").endswith("/responses"):
        items = body.get("input") or []
        prompt = [_text_of(i.get("content")) for i in items if i.get("role") == "user"]
        results = [
            str(i.get("output", "")) for i in items if i.get("type") == "function_call_output"
        ]
        return Exchange("responses", "\n".join(prompt), tuple(results), body)
    messages = body.get("messages") or []
    if path.rstrip("/").endswith("/chat/completions"):
        prompt = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        results = [_text_of(m.get("content")) for m in messages if m.get("role") == "tool"]
        return Exchange("chat", "\n".join(prompt), tuple(results), body)
    prompt, results = [], []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                results.append(_text_of(part.get("content")))
            else:
                prompt.append(_text_of(part))
    return Exchange("messages", "\n".join(prompt), tuple(results), body)


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def responses_events(reply: Reply, n: int, model: str) -> Iterator[bytes]:
    """OpenAI Responses stream: created, one output item per call (or a message), completed."""
    rid = f"resp_{n}"
    yield _sse({"type": "response.created", "response": {"id": rid, "model": model}})
    items: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "id": f"fc_{n}_{i}",
            "call_id": f"call_{n}_{i}",
            "name": call.name,
            "arguments": json.dumps(call.arguments),
        }
        for i, call in enumerate(reply.tool_calls)
    ] or [
        {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
    ]
    for index, item in enumerate(items):
        yield _sse({"type": "response.output_item.done", "output_index": index, "item": item})
    t = reply.tokens
    usage = {
        "input_tokens": t.input,
        "input_tokens_details": {"cached_tokens": t.cached, "cache_write_tokens": t.cache_write},
        "output_tokens": t.output,
        "output_tokens_details": {"reasoning_tokens": t.reasoning},
        "total_tokens": t.input + t.output,
    }
    yield _sse(
        {"type": "response.completed", "response": {"id": rid, "model": model, "usage": usage}}
    )


def messages_events(reply: Reply, n: int, model: str) -> Iterator[bytes]:
    """Anthropic Messages stream: message_start, content blocks, message_delta, message_stop."""
    t = reply.tokens
    usage = {
        "input_tokens": t.input,
        "cache_creation_input_tokens": t.cache_write,
        "cache_read_input_tokens": t.cached,
        "output_tokens": 1,
    }
    message = {
        "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage,
    }  # fmt: skip
    yield _sse({"type": "message_start", "message": message})
    for index, call in enumerate(reply.tool_calls):
        block = {"type": "tool_use", "id": f"toolu_{n}_{index}", "name": call.name, "input": {}}
        yield _sse({"type": "content_block_start", "index": index, "content_block": block})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call.arguments)}
        yield _sse({"type": "content_block_delta", "index": index, "delta": delta})
        yield _sse({"type": "content_block_stop", "index": index})
    if not reply.tool_calls:
        block = {"type": "text", "text": ""}
        yield _sse({"type": "content_block_start", "index": 0, "content_block": block})
        delta = {"type": "text_delta", "text": reply.text}
        yield _sse({"type": "content_block_delta", "index": 0, "delta": delta})
        yield _sse({"type": "content_block_stop", "index": 0})
    stop = "tool_use" if reply.tool_calls else "end_turn"
    yield _sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": t.output},
        }
    )
    yield _sse({"type": "message_stop"})


def chat_completion(reply: Reply, n: int, model: str) -> dict[str, Any]:
    """OpenAI Chat Completions, non-streamed (aider runs with --no-stream)."""
    t = reply.tokens
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for i, c in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": t.input,
            "completion_tokens": t.output,
            "total_tokens": t.input + t.output,
            "prompt_tokens_details": {"cached_tokens": t.cached},
        },
    }


def chat_events(reply: Reply, n: int, model: str) -> Iterator[bytes]:
    """OpenAI Chat Completions stream: role, content or tool-call deltas (arguments in two
    pieces, as real servers split them), the finish reason, a usage chunk, [DONE]."""
    whole = chat_completion(reply, n, model)
    base = {"id": whole["id"], "object": "chat.completion.chunk", "created": 0, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    calls = whole["choices"][0]["message"].get("tool_calls") or []
    for i, call in enumerate(calls):
        args = call["function"]["arguments"]
        half = len(args) // 2
        head = {"index": i, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": args[:half]}}  # fmt: skip
        yield chunk({"tool_calls": [head]})
        yield chunk({"tool_calls": [{"index": i, "function": {"arguments": args[half:]}}]})
    if not calls:
        yield chunk({"content": reply.text})
    yield chunk({}, whole["choices"][0]["finish_reason"])
    usage = {**base, "choices": [], "usage": whole["usage"]}
    yield f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()


def _error_body(api: str, status: int, message: str) -> dict[str, Any]:
    if api == "messages":
        kind = "rate_limit_error" if status == 429 else "invalid_request_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._send(200, b"", "text/plain")

        def do_GET(self) -> None:
            if self.path.split("?")[0].rstrip("/").endswith("/models"):
                models = {"object": "list", "data": [{"id": MODEL, "object": "model"}]}
                self._send(200, json.dumps(models).encode(), "application/json")
                return
            self._send(404, b"{}", "application/json")

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            path = self.path.split("?")[0]
            exchange = parse_request(path, body if isinstance(body, dict) else {})
            reply = server._answer(exchange)
            n = len(server.exchanges)
            model = str(exchange.body.get("model") or MODEL)
            if reply.error is not None:
                status, message = reply.error
                payload = json.dumps(_error_body(exchange.api, status, message)).encode()
                self._send(status, payload, "application/json")
                return
            if exchange.api == "chat" and not exchange.body.get("stream"):
                payload = json.dumps(chat_completion(reply, n, model)).encode()
                self._send(200, payload, "application/json")
                return
            events = {"responses": responses_events, "chat": chat_events}.get(
                exchange.api, messages_events
            )
            payload = b"".join(events(reply, n, model))
            self._send(200, payload, "text/event-stream")

        def _send(self, status: int, payload: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


# --- pointing each CLI at the server ----------------------------------------------------------


def codex_env(server: ModelServer, home: Path, model: str = MODEL) -> dict[str, str]:
    """Environment for `codex`: a scratch CODEX_HOME whose config names the server as the
    model provider (Responses API, no retries: a scripted error must fail at once)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "scripted"\n'
        "[model_providers.scripted]\n"
        'name = "scripted"\n'
        f'base_url = "{server.url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "SCRIPTED_API_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    return {"CODEX_HOME": str(home), "SCRIPTED_API_KEY": API_KEY}


def claude_env(server: ModelServer, home: Path) -> dict[str, str]:
    """Environment for `claude`: the server as ANTHROPIC_BASE_URL, a scratch HOME, no
    telemetry or other traffic."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": API_KEY,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }


def aider_env(server: ModelServer) -> dict[str, str]:
    """Environment for `aider` with `--model openai/<MODEL>`: the server as the OpenAI API."""
    return {"OPENAI_API_BASE": f"{server.url}/v1", "OPENAI_API_KEY": API_KEY}
