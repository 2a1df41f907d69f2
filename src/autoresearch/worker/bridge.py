"""A local Anthropic-Messages ↔ Chat-Completions bridge: a Claude Code job on the gateway.

Claude Code speaks only the Anthropic Messages API; the worker's gateway is OpenAI-compatible
(`/chat/completions`). With `AUTORESEARCH_GATEWAY_CLAUDE_JOBS=1` (or `"claude_jobs": true` in
gateway.json) the runner of a `claude` job starts this bridge on 127.0.0.1, on an ephemeral
port, for the agent's lifetime, and points the claude child at it (`ANTHROPIC_BASE_URL`, and
`ANTHROPIC_API_KEY` set to a random per-job token the bridge requires: no other local process
can spend the gateway's credentials through the port, and the gateway's key never reaches the
child). The bridge is stopped with the agent.

Each `POST /v1/messages` is translated by `worker/translate.py` (pure, table-tested; the wire
shapes typed in `worker/wire.py`): the request to a Chat Completions request, the answer back
as an Anthropic message or – when the client streams – as the Messages SSE events translated
chunk by chunk from the gateway's own stream. The model sent upstream is the request's when
the primary endpoint lists it, else the endpoint's first model. Every bridged request is a
metrics row (tool `bridge`, category `gateway_attempt`: status, tokens, latency, cost), and
their cost from the price table replaces Claude Code's own figure in the job's executor
record. The request loop is bounded (`max_requests`, a body size limit); the gateway's errors
come back as Anthropic error bodies with a matching status (Claude Code does its own retrying).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from autoresearch.clock import utc_now_iso
from autoresearch.contracts.job_result import GatewaySpend
from autoresearch.redact import redact
from autoresearch.worker import gateway
from autoresearch.worker.gateway import Usage
from autoresearch.worker.translate import (
    StreamTranslator,
    error_body,
    message_events,
    sse,
    stream_chunks,
    to_chat,
    to_message,
)
from autoresearch.worker.wire import ChatRequest, ErrorBody, Message, Received, TokenCount

if TYPE_CHECKING:
    from autoresearch.worker.upstream import Answer, Upstream

DEFAULT_MAX_REQUESTS = 2000  # per job: far above what max_turns allows, still a bound
MAX_BODY_BYTES = 32 * 1024 * 1024
AGENT = "claude"
STOP_POLL_SECONDS = 0.05  # how often the serving thread looks for a shutdown


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
        # its shutdown waits up to one poll: a job's end (and each bridge test) should not wait
        # socketserver's default half second
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True
        )

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

    def model_for(self, asked: object) -> str:
        models = self.endpoint.models
        return asked if isinstance(asked, str) and asked in models else models[0]

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
    def ask_gateway(self, chat: ChatRequest) -> Iterator[Answer]:
        """The gateway's answer to `chat`, read inside the block (Unreachable: none came)."""
        if self._upstream is None:
            raise RuntimeError("the bridge serves inside its `with` block only")
        with self._upstream.post("chat/completions", chat) as answer:
            yield answer


Done = Callable[[str, Usage], None]  # records a bridged request's status and usage


def _not_json(constant: str) -> NoReturn:
    # Python reads NaN and Infinity, JSON has neither: httpx2 would refuse to send them on
    raise ValueError(f"{constant} is not JSON")


def _handler(bridge: Bridge) -> type[BaseHTTPRequestHandler]:
    from autoresearch.worker.upstream import Unreachable  # with the bridge: see __enter__

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._send(200, b"", "text/plain")

        def do_GET(self) -> None:
            self._error(404, "not found")

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
                body = json.loads(raw or b"{}", parse_constant=_not_json)
            except ValueError:
                return self._error(400, "bridge: the request is not JSON")
            if not isinstance(body, dict):
                return self._error(400, "bridge: the request is not a JSON object")
            if path.endswith("/messages/count_tokens"):
                # no tokenizer behind a gateway: about four characters a token
                count: TokenCount = {"input_tokens": len(json.dumps(body)) // 4}
                return self._json(200, count)
            if not path.endswith("/messages"):
                return self._error(404, f"bridge: no route {path}")
            self._messages(body)

        def _authorized(self) -> bool:
            key = self.headers.get("x-api-key") or ""
            auth = self.headers.get("authorization") or ""
            return secrets.compare_digest(key, bridge.token) or secrets.compare_digest(
                auth, f"Bearer {bridge.token}"
            )

        def _messages(self, body: Received) -> None:
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
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                message = to_message(data, model, message_id)
            except (ValueError, TypeError):
                done("bad_response", Usage())
                return self._error(502, "the gateway's answer is not a chat completion")
            done("200", Usage.of(data.get("usage")))
            if stream:
                self._start_stream()
                for event in message_events(message):
                    self._chunk(sse(event))
                return self._end_stream()
            self._json(200, message)

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
            self._json(status, error_body(status, message))

        def _json(self, status: int, answer: Message | ErrorBody | TokenCount) -> None:
            self._send(status, json.dumps(answer).encode(), "application/json")

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
