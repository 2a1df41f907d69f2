"""The worker's HTTP to its model gateway: one httpx2 client per endpoint (`Upstream`).

httpx2 is the HTTP client the mcp extra already brings; the worker extra names it. A client
keeps its connections alive, so a call's retries and a bridge's requests reuse one connection
instead of opening one each. Whatever the library calls a failure without an HTTP answer, it
leaves here as one `Unreachable` whose `kind` is "timeout" or "connection_error": the
gateway's attempt statuses and the bridge's error bodies stay what they were.

Only this module imports httpx2, and the gateway and the bridge import this module at their
first call: a core install (no worker extra) still imports the worker and is told what to
install when it first reaches for the gateway.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from autoresearch.errors import ContractError

MSG_NO_HTTPX = (
    "the worker's gateway needs httpx2: pip install '.[worker]' in a clone of autoresearch "
    "(the mcp extra brings it too)"
)

try:
    import httpx2
except ImportError as missing:  # pragma: no cover - the test venv has the dev extra
    raise ContractError(MSG_NO_HTTPX) from missing

TIMEOUT = "timeout"
CONNECTION_ERROR = "connection_error"


class Unreachable(Exception):
    """No HTTP answer: the endpoint timed out, refused or dropped the connection."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind  # TIMEOUT or CONNECTION_ERROR

    @property
    def timed_out(self) -> bool:
        return self.kind == TIMEOUT


@contextmanager
def _as_unreachable() -> Iterator[None]:
    try:
        yield
    except httpx2.TimeoutException as exc:
        raise Unreachable(TIMEOUT, f"timed out ({type(exc).__name__})") from exc
    except (httpx2.TransportError, httpx2.InvalidURL) as exc:
        raise Unreachable(CONNECTION_ERROR, str(exc) or type(exc).__name__) from exc


@dataclass(frozen=True)
class Answer:
    """An HTTP answer whose body is still to be read (inside `Upstream.post`'s block)."""

    response: httpx2.Response

    @property
    def status(self) -> int:
        return self.response.status_code

    @property
    def ok(self) -> bool:
        return self.response.is_success

    @property
    def retry_after(self) -> str | None:
        return self.response.headers.get("retry-after")

    @property
    def streamed(self) -> bool:
        """Whether the answer is a server-sent event stream."""
        return "text/event-stream" in self.response.headers.get("content-type", "")

    def read(self) -> bytes:
        with _as_unreachable():
            return self.response.read()

    def event_data(self) -> Iterator[str]:
        """The `data` of each server-sent event, as the stream delivers them."""
        with _as_unreachable():
            for event in httpx2.EventSource(self.response):
                yield event.data


class Upstream:
    """One endpoint's client: `url` is its base (`…/v1`), `timeout` the seconds each connect,
    read and write may take. Use as a context manager: its connections close on exit."""

    def __init__(self, url: str, api_key: str, timeout: float) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx2.Client(
            base_url=url.rstrip("/") + "/", headers=headers, timeout=timeout
        )

    def __enter__(self) -> Upstream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    @contextmanager
    def post(self, path: str, payload: object) -> Iterator[Answer]:
        """POST `payload` as JSON to `path` (relative to the base); the answer's body is
        read inside the block. Raises Unreachable when no answer came."""
        with _as_unreachable():
            request = self._client.build_request("POST", path, json=payload)
            response = self._client.send(request, stream=True)
        try:
            yield Answer(response)
        finally:
            response.close()
