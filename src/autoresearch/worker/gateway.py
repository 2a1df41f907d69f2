"""The OpenAI-compatible gateway the worker's model tools call (worker.md "Model tools").

One `complete()` call walks the endpoints in order – the primary, then the optional fallback –
and each endpoint's models in order. Per model: retries on 408, 409, 429, 5xx, timeouts and
refused connections, waiting `Retry-After` when the server sends one (capped at
`retry_after_cap`), exponential backoff otherwise; any other 4xx moves on at once (retrying
a bad request cannot help). Every attempt is recorded (`Attempt`: status, latency, prompt /
completion / cached tokens, cost from the configured price table – an agent's own cost figure
is meaningless behind a third-party gateway).

Configuration (environment over the user's file `$XDG_CONFIG_HOME/autoresearch/gateway.json`,
whose keys are the variables' lower-case names without the prefix, plus `prices`):
`AUTORESEARCH_GATEWAY_URL` (e.g. `http://127.0.0.1:4000/v1`), `AUTORESEARCH_GATEWAY_API_KEY`,
`AUTORESEARCH_GATEWAY_MODELS` (comma-separated, tried in order),
`AUTORESEARCH_GATEWAY_FALLBACK_URL`, `…_FALLBACK_API_KEY`, `…_FALLBACK_MODELS`,
`AUTORESEARCH_GATEWAY_TIMEOUT` (seconds per attempt, default 60),
`AUTORESEARCH_GATEWAY_MAX_ATTEMPTS` (per model, default 3),
`AUTORESEARCH_GATEWAY_CLAUDE_JOBS` (1: `claude` jobs run on the gateway through the bridge),
`AUTORESEARCH_GATEWAY_QUALITY_MODELS` (the models of `quality_mode: high`'s main, independent,
red-team and arbiter calls, in that order, on the primary endpoint; a short list repeats its
last; default: the primary's first model), `AUTORESEARCH_GATEWAY_SEMANTIC_MODEL` (the dedicated
reviewer of a job's `semantic_gate`; none: the gate's evidence is missing).
`prices` maps a model to `{"prompt": $, "completion": $, "cached": $}` per million tokens.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoresearch.errors import AutoresearchError, ContractError
from autoresearch.jsonshape import json_shape
from autoresearch.worker import slots

if TYPE_CHECKING:
    from autoresearch.worker.upstream import Upstream

ENV_PREFIX = "AUTORESEARCH_GATEWAY_"
CONFIG_FILE = "gateway.json"
RETRYABLE = frozenset({408, 409, 429})
DEFAULT_TIMEOUT = 60.0
DEFAULT_ATTEMPTS = 3
RETRY_AFTER_CAP = 30.0
BACKOFF_BASE = 0.5
BACKOFF_CAP = 8.0
CODE_UNCONFIGURED = "autoresearch_gateway_unconfigured"
CODE_FAILED = "autoresearch_gateway_failed"


class GatewayError(AutoresearchError):
    """Every endpoint and model failed; `attempts` says how."""

    def __init__(self, message: str, attempts: list[Attempt]) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class Price:
    prompt: float = 0.0
    completion: float = 0.0
    cached: float = 0.0


@dataclass(frozen=True)
class Usage:
    """An answer's token counts, read from its Chat Completions `usage` object: the one
    reading of the gateway's usage, for `complete()`'s attempts and the bridge's requests."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0  # of the prompt tokens, those the gateway served from its cache

    @classmethod
    def of(cls, usage: Any) -> Usage:
        """The counts of a `usage` object (pure); absent or malformed parts count 0."""
        if not isinstance(usage, dict):
            return cls()
        details = usage.get("prompt_tokens_details") or {}
        return cls(
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
        )

    def cost(self, price: Price | None) -> float | None:
        """Dollars for these tokens at `price` (None: the model has no price)."""
        return cost_of(price, self.prompt, self.completion, self.cached)


@dataclass(frozen=True)
class Endpoint:
    label: str
    url: str
    api_key: str
    models: tuple[str, ...]


@dataclass(frozen=True)
class GatewayConfig:
    endpoints: tuple[Endpoint, ...]
    timeout: float = DEFAULT_TIMEOUT
    max_attempts: int = DEFAULT_ATTEMPTS
    retry_after_cap: float = RETRY_AFTER_CAP
    backoff_base: float = BACKOFF_BASE
    prices: Mapping[str, Price] = field(default_factory=dict)
    quality_models: tuple[str, ...] = ()
    semantic_model: str | None = None

    def pinned(self, model: str) -> GatewayConfig:
        """This config asking `model` on the first endpoint and nothing else: no other model
        or endpoint may answer in its place."""
        first = replace(self.endpoints[0], models=(model,))
        return replace(self, endpoints=(first,))


@dataclass
class Attempt:
    endpoint: str
    model: str
    status: str  # "200", "429", "timeout", "connection_error", "bad_response"
    latency_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    waited_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return json_shape(self)


@dataclass(frozen=True)
class Reply:
    """What one answer said besides its text: why it stopped and which model it names."""

    text: str
    finish_reason: str | None = None  # "stop", "length" (cut at max_tokens), …
    model: str | None = None  # the answering model as the gateway reports it


@dataclass
class Completion:
    text: str
    endpoint: str
    model: str  # the model asked for
    attempts: list[Attempt]
    finish_reason: str | None = None
    answered_by: str | None = None  # the model the gateway says answered

    @property
    def cost(self) -> float | None:
        costs = [a.cost for a in self.attempts if a.cost is not None]
        return round(sum(costs), 8) if costs else None


def retry_delay(
    status: int | None,
    retry_after: str | None,
    attempt: int,
    cap: float,
    base: float,
    now: float | None = None,
) -> float | None:
    """Seconds to wait before retrying, or None when this failure is not retried (pure).

    `status` None is a timeout or a refused connection. `attempt` counts from 0.
    """
    if status is not None and status not in RETRYABLE and status < 500:
        return None
    if retry_after:
        seconds = _retry_after_seconds(retry_after, now if now is not None else time.time())
        if seconds is not None:
            return float(min(max(seconds, 0.0), cap))
    return float(min(base * 2.0**attempt, BACKOFF_CAP))


def _retry_after_seconds(value: str, now: float) -> float | None:
    try:
        return float(value.strip())
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - now


def cost_of(price: Price | None, prompt: int, completion: int, cached: int) -> float | None:
    """Dollars for one attempt's usage; cached prompt tokens at the cached price (pure)."""
    if price is None:
        return None
    fresh = max(prompt - cached, 0)
    total = fresh * price.prompt + cached * price.cached + completion * price.completion
    return round(total / 1_000_000, 8)


def model_matches(asked: str, answered_by: str | None) -> bool:
    """The answering model is the one asked for, or its dated snapshot (gpt-4o-2024-08-06);
    an unreported model cannot be verified, so it does not match."""
    if answered_by is None:
        return False
    return re.fullmatch(re.escape(asked) + r"(-\d{4}-?\d{2}-?\d{2})?", answered_by) is not None


def load_config(environ: Mapping[str, str] | None = None) -> GatewayConfig:
    env = dict(os.environ if environ is None else environ)
    file_values = _file_values(env)

    def get(name: str) -> str:
        return env.get(ENV_PREFIX + name.upper()) or str(file_values.get(name, "") or "")

    endpoints = []
    for label, prefix in (("primary", ""), ("fallback", "fallback_")):
        url = get(prefix + "url")
        models = tuple(m.strip() for m in get(prefix + "models").split(",") if m.strip())
        if url and models:
            endpoints.append(Endpoint(label, url.rstrip("/"), get(prefix + "api_key"), models))
    if not endpoints:
        raise ContractError(
            f"{CODE_UNCONFIGURED}: set {ENV_PREFIX}URL and {ENV_PREFIX}MODELS (or "
            f"{CONFIG_FILE} in the autoresearch config folder)"
        )
    prices = {
        str(model): Price(**{k: float(v) for k, v in dict(p).items()})
        for model, p in dict(file_values.get("prices") or {}).items()
    }
    try:
        timeout = float(get("timeout") or DEFAULT_TIMEOUT)
        attempts = int(get("max_attempts") or DEFAULT_ATTEMPTS)
    except ValueError:
        raise ContractError(f"{ENV_PREFIX}TIMEOUT / MAX_ATTEMPTS must be numbers") from None
    quality = tuple(m.strip() for m in get("quality_models").split(",") if m.strip())
    return GatewayConfig(
        tuple(endpoints),
        timeout,
        max(attempts, 1),
        prices=prices,
        quality_models=quality,
        semantic_model=get("semantic_model").strip() or None,
    )


def claude_jobs(environ: Mapping[str, str]) -> bool:
    """Whether `claude` jobs run on the gateway through the bridge (`worker/bridge.py`):
    `AUTORESEARCH_GATEWAY_CLAUDE_JOBS=1`, or `"claude_jobs": true` in the config file."""
    value = environ.get(ENV_PREFIX + "CLAUDE_JOBS")
    if value is None:
        value = str(_file_values(environ).get("claude_jobs", ""))
    return value.strip().lower() in ("1", "true", "yes", "on")


def _file_values(env: Mapping[str, str]) -> dict[str, Any]:
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
    path = Path(base).expanduser() / "autoresearch" / CONFIG_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ContractError(f"cannot read {path}: {type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise ContractError(f"{path}: expected a JSON object")
    return data


def complete(
    config: GatewayConfig,
    messages: list[dict[str, str]],
    *,
    max_tokens: int = 1024,
    sleep: Callable[[float], None] = time.sleep,
    on_attempt: Callable[[Attempt], None] | None = None,
) -> Completion:
    """The first successful chat completion along endpoints and models, or GatewayError;
    within one of the machine's gateway-call slots (`slots.lite_slot`: worker_busy when the
    machine's calls are all taken and its queue is full)."""
    with slots.lite_slot(slots.Limits.from_env()):
        return _complete(_Call(config, messages, max_tokens, sleep, on_attempt))


@dataclass(frozen=True)
class _Call:
    """One `complete()` call: what each attempt sends, how it waits, whom it tells."""

    config: GatewayConfig
    messages: list[dict[str, str]]
    max_tokens: int
    sleep: Callable[[float], None]
    on_attempt: Callable[[Attempt], None] | None


def _complete(call: _Call) -> Completion:
    # imported at the first call: the core install, without the worker extra, has no httpx2
    from autoresearch.worker.upstream import Upstream

    attempts: list[Attempt] = []
    for endpoint in call.config.endpoints:
        # one client per endpoint: its models and retries share a kept-alive connection
        with Upstream(endpoint.url, endpoint.api_key, call.config.timeout) as upstream:
            for model in endpoint.models:
                answer = _ask_model(call, upstream, endpoint, model, attempts)
                if answer is not None:
                    return answer
    summary = ", ".join(f"{a.endpoint}/{a.model}:{a.status}" for a in attempts)
    raise GatewayError(f"{CODE_FAILED}: every endpoint and model failed ({summary})", attempts)


def _ask_model(
    call: _Call, upstream: Upstream, endpoint: Endpoint, model: str, attempts: list[Attempt]
) -> Completion | None:
    """Up to `max_attempts` attempts at `model`, each appended to `attempts`; None when the
    model gave no answer (its failure is not retried, or the attempts ran out)."""
    config, waited = call.config, 0.0
    for number in range(config.max_attempts):
        attempt, answer, status, retry_after = _post(call, upstream, endpoint.label, model)
        attempt.waited_s = waited
        attempts.append(attempt)
        if call.on_attempt is not None:
            call.on_attempt(attempt)
        if answer is not None:
            return Completion(
                answer.text, endpoint.label, model, attempts, answer.finish_reason, answer.model
            )
        if number + 1 == config.max_attempts:
            return None
        delay = retry_delay(
            status, retry_after, number, config.retry_after_cap, config.backoff_base
        )
        if delay is None:
            return None
        call.sleep(delay)
        waited = delay
    return None


def _post(
    call: _Call, upstream: Upstream, label: str, model: str
) -> tuple[Attempt, Reply | None, int | None, str | None]:
    from autoresearch.worker.upstream import Unreachable

    payload = {"model": model, "messages": call.messages, "max_tokens": call.max_tokens}
    t0 = time.monotonic()

    def attempt(status: str) -> Attempt:
        return Attempt(label, model, status, round((time.monotonic() - t0) * 1000, 1))

    try:
        with upstream.post("chat/completions", payload) as response:
            raw = response.read()
    except Unreachable as exc:
        return attempt(exc.kind), None, None, None
    if not response.ok:
        return attempt(str(response.status)), None, response.status, response.retry_after
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        text = str(choice["message"]["content"] or "")
        answer = Reply(
            text, _str_or_none(choice.get("finish_reason")), _str_or_none(data.get("model"))
        )
        raw_usage = data.get("usage")
    except (ValueError, KeyError, IndexError, TypeError):
        return attempt("bad_response"), None, 502, None
    usage = Usage.of(raw_usage)
    done = attempt("200")
    done.prompt_tokens, done.completion_tokens = usage.prompt, usage.completion
    done.cached_tokens = usage.cached
    done.cost = usage.cost(call.config.prices.get(model))
    return done, answer, 200, None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
