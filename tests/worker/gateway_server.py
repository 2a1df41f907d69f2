"""A scripted OpenAI-compatible gateway on 127.0.0.1: each request takes the next step of a
script (an error status with headers, a hang past the client's timeout, or a completion with
usage), or the step a `route` picks for the request (the quality tests script each role by its
system prompt). Bounded: after the script it answers 400; stopped on exit. It keeps connections
alive (HTTP/1.1) and records each request's client port in `peers`: one port, one connection."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from model_server import STOP_POLL


@dataclass(frozen=True)
class Step:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    text: str = "an answer"
    hang: float = 0.0  # seconds to sleep before answering (a timeout when > client's)
    finish_reason: str = "stop"  # "length": the answer was cut at max_tokens
    model: str | None = None  # the model the answer names (default: the one asked for)
    usage: dict[str, Any] = field(
        default_factory=lambda: {
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "prompt_tokens_details": {"cached_tokens": 400},
        }
    )


class Gateway:
    def __init__(
        self, script: list[Step], route: Callable[[dict[str, Any]], Step] | None = None
    ) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.auth: list[str | None] = []
        self.peers: list[int] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.requests.append(body)
                    owner.times.append(time.monotonic())
                    owner.auth.append(self.headers.get("Authorization"))
                    owner.peers.append(self.client_address[1])
                    if route is not None:
                        step = route(body)
                    else:
                        step = owner.script.pop(0) if owner.script else Step(400)
                if step.hang:
                    time.sleep(step.hang)
                payload = (
                    {
                        "choices": [
                            {
                                "message": {"role": "assistant", "content": step.text},
                                "finish_reason": step.finish_reason,
                            }
                        ],
                        "usage": step.usage,
                        "model": step.model or body["model"],
                    }
                    if step.status == 200
                    else {"error": {"message": f"scripted {step.status}"}}
                )
                data = json.dumps(payload).encode()
                try:
                    self.send_response(step.status)
                    for k, v in step.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a scripted timeout)

        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, args=(STOP_POLL,), daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Gateway:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
