"""Pure parsers of the agents' machine output, on the real event formats."""

from __future__ import annotations

import json

import pytest

from autoresearch.agents.aider import parse_aider_line
from autoresearch.agents.base import Usage
from autoresearch.agents.claude import parse_claude_line
from autoresearch.agents.codex import parse_codex_line


def feed(parser, lines) -> Usage:
    usage = Usage()
    for line in lines:
        parser(line if isinstance(line, str) else json.dumps(line), usage)
    return usage


def test_codex_success_uses_the_running_total() -> None:
    usage = feed(parse_codex_line, [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "x"}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 7}},
        {"type": "turn.completed", "usage": {"input_tokens": 250, "cached_input_tokens": 90, "output_tokens": 19}},
        "not json",
    ])  # fmt: skip
    assert (usage.success, usage.error, usage.session_id) == (True, None, "t-1")
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (250, 90, 19)


def test_codex_failure_wins_over_exit_code() -> None:
    usage = feed(parse_codex_line, [
        {"type": "thread.started", "thread_id": "t-2"},
        {"type": "error", "message": "usage limit"},
        {"type": "turn.failed", "error": {"message": "usage limit"}},
    ])  # fmt: skip
    assert usage.success is False and usage.error == "usage limit"
    assert usage.input_tokens is None


def test_claude_result_message() -> None:
    usage = feed(parse_claude_line, [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "m"},
        {"type": "assistant", "message": {"content": []}},
        {"type": "result", "subtype": "error_max_turns", "is_error": True, "num_turns": 2,
         "session_id": "s", "total_cost_usd": 0.04,
         "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 3},
         "errors": ["Reached maximum number of turns (1)"]},
    ])  # fmt: skip
    assert usage.success is False
    assert usage.error == "error_max_turns: Reached maximum number of turns (1)"
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (15, 5, 3)
    assert (usage.cost_usd, usage.turns, usage.model) == (0.04, 2, "m")


def test_aider_token_lines() -> None:
    usage = feed(parse_aider_line, [
        "Aider v0.86.2",
        "Tokens: 2.3k sent, 440 received. Cost: $0.00061 message, $0.00061 session.",
        "Tokens: 12k sent, 1.5k cache write, 9.8k cache hit, 987 received.",
        "Cost: $0.02 message, $0.03 session.",
    ])  # fmt: skip
    assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens) == (14300, 1427, 9800)
    assert usage.cost_usd == 0.03 and usage.turns == 2


@pytest.mark.parametrize(
    ("lines", "success", "error"),
    [
        (["litellm.APIError: APIError: OpenAIException - boom", "Retrying in 0.2 seconds...",
          "Tokens: 1k sent, 10 received."], None, None),
        (["litellm.InternalServerError: InternalServerError: OpenAIException - down",
          "The API provider's servers are down or overloaded."],
         False, "litellm.InternalServerError: InternalServerError: OpenAIException - down"),
        (["Tokens: 1k sent, 10 received.", "litellm.NotFoundError: no such model"],
         False, "litellm.NotFoundError: no such model"),
        (["I ran: echo litellm.APIError: is not at the start"], None, None),
    ],
)  # fmt: skip
def test_aider_model_call_that_failed_last_fails_the_session(
    lines: list[str], success: bool | None, error: str | None
) -> None:
    usage = feed(parse_aider_line, lines)
    assert (usage.success, usage.error) == (success, error)


def test_codex_fatal_error_event_alone_is_a_failure() -> None:
    usage = feed(parse_codex_line, [
        {"type": "thread.started", "thread_id": "t-3"},
        {"type": "error", "message": "stream disconnected"},
    ])  # fmt: skip
    assert usage.success is False and usage.error == "stream disconnected"


def test_codex_newer_usage_fields_and_the_api_error_text() -> None:
    # as codex-cli 0.171 prints them (recorded against the scripted server)
    usage = feed(parse_codex_line, [
        {"type": "turn.completed", "usage": {"input_tokens": 300, "cached_input_tokens": 30,
         "cache_write_input_tokens": 12, "output_tokens": 15, "reasoning_output_tokens": 6}},
    ])  # fmt: skip
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == (300, 30, 12)
    assert (usage.output_tokens, usage.reasoning_tokens) == (15, 6)
    body = json.dumps({"error": {"message": "quota exceeded", "type": "invalid_request_error"}})
    failed = feed(parse_codex_line, [{"type": "error", "message": body},
                                     {"type": "turn.failed", "error": {"message": body}}])  # fmt: skip
    assert failed.success is False and failed.error == "quota exceeded"


def test_claude_api_error_and_permission_denials() -> None:
    # Claude Code 2.1.197: an API failure is subtype "success" with is_error and the text
    usage = feed(parse_claude_line, [
        {"type": "result", "subtype": "success", "is_error": True, "api_error_status": 400,
         "num_turns": 1, "result": "API Error: 400 model unavailable", "total_cost_usd": 0,
         "usage": {"input_tokens": 0, "output_tokens": 0},
         "permission_denials": [
             {"tool_name": "Bash", "tool_use_id": "t0",
              "tool_input": {"command": "git commit -qam x", "description": "commit"}},
             {"tool_name": "Write", "tool_use_id": "t1",
              "tool_input": {"file_path": "/run/candidate.json", "content": "{}"}},
         ]},
    ])  # fmt: skip
    assert usage.success is False and usage.error == "API Error: 400 model unavailable"
    assert usage.denials == ["Bash: git commit -qam x", "Write: /run/candidate.json"]
    ok = feed(parse_claude_line, [{"type": "result", "subtype": "success", "is_error": False,
                                   "result": "done", "permission_denials": []}])  # fmt: skip
    assert (ok.success, ok.error, ok.denials) == (True, None, [])
