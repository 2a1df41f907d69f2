"""Anthropic Messages ↔ Chat Completions, both ways (pure, table-tested): the bridge's
translation (`worker/bridge.py` serves it).

A Messages request (system prompt, text / image / tool_use / tool_result blocks, tools and
tool_choice, sampling values) becomes a Chat Completions request; a Chat Completions answer
becomes an Anthropic message, and a Chat Completions stream becomes the Messages stream events
chunk by chunk (`StreamTranslator`). What comes in is read defensively (`wire.Received`): a
malformed part is skipped or read as empty, never a crash; what goes out is typed to the field
(`worker/wire.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from autoresearch.worker.gateway import Usage
from autoresearch.worker.wire import (
    Block,
    BlockDelta,
    BlockStart,
    BlockStop,
    ChatImagePart,
    ChatMessage,
    ChatPart,
    ChatRequest,
    ChatTool,
    ChatToolCall,
    ChatToolChoice,
    ErrorBody,
    Event,
    Message,
    MessageDelta,
    MessageStart,
    MessagesUsage,
    Received,
    TextBlock,
    ToolUseBlock,
    objects,
    received,
)

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "end_turn",
}
CHOICES: dict[str, ChatToolChoice] = {"auto": "auto", "any": "required", "none": "none"}


# --- Messages request → Chat Completions request ---------------------------------------------


def _text(content: object) -> str:
    """The text of a string or a list of blocks (text blocks only)."""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in objects(content) if b.get("type") == "text")


def _image_part(block: Received) -> ChatImagePart | None:
    source = received(block.get("source"))
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    elif source.get("type") == "url":
        url = str(source.get("url", ""))
    else:
        return None
    return {"type": "image_url", "image_url": {"url": url}}


def _tool_result(block: Received) -> ChatMessage:
    text = _text(block.get("content"))
    if block.get("is_error"):
        text = f"[tool error] {text}"
    return {"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")), "content": text}


def _user_parts(blocks: object) -> tuple[list[ChatMessage], list[ChatPart]]:
    """A user message's blocks as (tool messages, content parts of one user message)."""
    tools: list[ChatMessage] = []
    parts: list[ChatPart] = []
    for block in objects(blocks):
        kind = block.get("type")
        if kind == "tool_result":
            tools.append(_tool_result(block))
        elif kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            image = _image_part(block)
            if image is not None:
                parts.append(image)
        elif kind == "document":
            parts.append({"type": "text", "text": "[a document was attached; not forwarded]"})
    return tools, parts


def _user_message(parts: list[ChatPart]) -> ChatMessage:
    """One user message of `parts`: plain text when they are all text."""
    texts = [p["text"] for p in parts if p["type"] == "text"]
    if len(texts) == len(parts):
        return {"role": "user", "content": "\n".join(texts)}
    return {"role": "user", "content": parts}


def _tool_call(block: Received) -> ChatToolCall:
    arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
    return {
        "id": str(block.get("id", "")),
        "type": "function",
        "function": {"name": str(block.get("name", "")), "arguments": arguments},
    }


def _assistant(blocks: object) -> ChatMessage:
    if isinstance(blocks, str):
        return {"role": "assistant", "content": blocks}
    texts = [str(b.get("text", "")) for b in objects(blocks) if b.get("type") == "text"]
    calls = [_tool_call(b) for b in objects(blocks) if b.get("type") == "tool_use"]
    # thinking and redacted_thinking blocks have no Chat Completions form: dropped
    message: ChatMessage = {"role": "assistant", "content": "\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _messages(body: Received) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    system = _text(body.get("system"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in objects(body.get("messages")):
        content = message.get("content")
        if message.get("role") == "assistant":
            messages.append(_assistant(content))
        elif isinstance(content, str):
            messages.append({"role": "user", "content": content})
        else:
            tools, parts = _user_parts(content)
            messages += tools  # right after the assistant's tool calls, as Chat Completions wants
            if parts:
                messages.append(_user_message(parts))
    return messages


def _tools(body: Received) -> list[ChatTool]:
    return [
        {
            "type": "function",
            "function": {
                "name": str(t.get("name", "")),
                "description": str(t.get("description", "")),
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in objects(body.get("tools"))
        if t.get("name")
    ]


def _tool_choice(choice: object) -> ChatToolChoice | None:
    chosen = received(choice)
    if chosen.get("type") == "tool":
        return {"type": "function", "function": {"name": str(chosen.get("name", ""))}}
    return CHOICES.get(str(chosen.get("type")))


def to_chat(body: Received, model: str) -> ChatRequest:
    """An Anthropic Messages request as a Chat Completions request for `model` (pure)."""
    out: ChatRequest = {"model": model, "messages": _messages(body)}
    tools = _tools(body)
    if tools:
        out["tools"] = tools
        choice = _tool_choice(body.get("tool_choice"))
        if choice is not None:
            out["tool_choice"] = choice
    if body.get("max_tokens") is not None:
        out["max_tokens"] = body["max_tokens"]
    if body.get("temperature") is not None:
        out["temperature"] = body["temperature"]
    if body.get("top_p") is not None:
        out["top_p"] = body["top_p"]
    if body.get("stop_sequences") is not None:
        out["stop"] = body["stop_sequences"]
    if body.get("stream"):
        out["stream"] = True
        out["stream_options"] = {"include_usage": True}
    return out


# --- Chat Completions answer → Messages answer -------------------------------------------------


def anthropic_usage(usage: Usage) -> MessagesUsage:
    """The gateway's counts as a Messages `usage`: Anthropic counts cache reads apart from the
    fresh input tokens (pure)."""
    return {
        "input_tokens": max(usage.prompt - usage.cached, 0),
        "cache_read_input_tokens": usage.cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": usage.completion,
    }


def tool_input(arguments: object) -> dict[str, object]:
    """A function call's JSON arguments as a tool_use input (an object, whatever came)."""
    if isinstance(arguments, dict):
        return arguments
    text = arguments or "{}"
    if not isinstance(text, str | bytes):
        return {"arguments": str(arguments)}
    try:
        value = json.loads(text)
    except ValueError:
        return {"arguments": str(arguments)}
    return value if isinstance(value, dict) else {"arguments": value}


def stop_reason(finish: object, has_tools: bool) -> str:
    if finish is None:
        return "tool_use" if has_tools else "end_turn"
    return STOP_REASONS.get(str(finish), "end_turn")


def _tool_use(call: Received, fallback_id: str) -> ToolUseBlock:
    function = received(call.get("function"))
    return {
        "type": "tool_use",
        "id": str(call.get("id") or fallback_id),
        "name": str(function.get("name", "")),
        "input": tool_input(function.get("arguments")),
    }


def to_message(data: Received, model: str, message_id: str) -> Message:
    """A Chat Completions answer as an Anthropic message (pure)."""
    choice = (objects(data.get("choices")) or [{}])[0]
    answer = received(choice.get("message"))
    content: list[Block] = []
    text = answer.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    for n, call in enumerate(objects(answer.get("tool_calls"))):
        content.append(_tool_use(call, f"toolu_{message_id}_{n}"))
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


def _block_events(index: int, block: Block) -> list[Event]:
    """A whole block as its start, one delta and its stop."""
    opened: Block
    delta: BlockDelta
    if block["type"] == "tool_use":
        opened = {**block, "input": {}}
        partial = json.dumps(block["input"])
        delta = {"type": "content_block_delta", "index": index,
                 "delta": {"type": "input_json_delta", "partial_json": partial}}  # fmt: skip
    else:
        opened = {"type": "text", "text": ""}
        delta = {"type": "content_block_delta", "index": index,
                 "delta": {"type": "text_delta", "text": block["text"]}}  # fmt: skip
    start: BlockStart = {"type": "content_block_start", "index": index, "content_block": opened}
    stop: BlockStop = {"type": "content_block_stop", "index": index}
    return [start, delta, stop]


def _ending(reason: str, usage: MessagesUsage) -> list[Event]:
    delta: MessageDelta = {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": usage,
    }
    return [delta, {"type": "message_stop"}]


def message_events(message: Message) -> list[Event]:
    """The Messages stream events that carry a whole message (pure)."""
    start: MessageStart = {
        "type": "message_start",
        "message": {**message, "content": [], "stop_reason": None, "stop_sequence": None},
    }
    events: list[Event] = [start]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block)
    return events + _ending(message["stop_reason"] or "end_turn", message["usage"])


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

    def _start(self) -> list[Event]:
        if self._started:
            return []
        self._started = True
        start: MessageStart = {"type": "message_start", "message": {
            "id": self.message_id, "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": anthropic_usage(Usage()),
        }}  # fmt: skip
        return [start]

    def _close(self) -> list[Event]:
        if self._open is None:
            return []
        index = self._open[1]
        self._open = None
        return [{"type": "content_block_stop", "index": index}]

    def _open_block(self, key: str, block: Block) -> list[Event]:
        events = self._close()
        self._open = (key, self._blocks)
        self._blocks += 1
        events.append(
            {"type": "content_block_start", "index": self._open[1], "content_block": block}
        )
        return events

    def feed(self, chunk: Received) -> list[Event]:
        events = self._start()
        if chunk.get("usage"):
            self.usage = Usage.of(chunk["usage"])
        for choice in objects(chunk.get("choices")):
            delta = received(choice.get("delta"))
            text = delta.get("content")
            if isinstance(text, str) and text:
                events += self._text_delta(text)
            for call in objects(delta.get("tool_calls")):
                events += self._tool_delta(call)
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])
        return events

    def _text_delta(self, text: str) -> list[Event]:
        events: list[Event] = []
        if self._open is None or self._open[0] != "text":
            events += self._open_block("text", {"type": "text", "text": ""})
        assert self._open is not None
        delta: BlockDelta = {"type": "content_block_delta", "index": self._open[1],
                             "delta": {"type": "text_delta", "text": text}}  # fmt: skip
        return [*events, delta]

    def _tool_delta(self, call: Received) -> list[Event]:
        events: list[Event] = []
        position = _int(call.get("index"))
        if position not in self._tools:
            block = _tool_use(call, f"toolu_{self.message_id}_{position}")
            events += self._open_block(f"tool:{position}", {**block, "input": {}})
            self._tools[position] = self._blocks - 1
        arguments = received(call.get("function")).get("arguments")
        if isinstance(arguments, str) and arguments:
            delta: BlockDelta = {"type": "content_block_delta", "index": self._tools[position],
                                 "delta": {"type": "input_json_delta",
                                           "partial_json": arguments}}  # fmt: skip
            events.append(delta)
        return events

    def finish_events(self) -> list[Event]:
        events = self._start()
        if self._blocks == 0:  # an empty answer is still one (empty) text block
            empty: TextBlock = {"type": "text", "text": ""}
            events += self._open_block("text", empty)
        events += self._close()
        reason = stop_reason(self.finish, bool(self._tools))
        return events + _ending(reason, anthropic_usage(self.usage))


def _int(value: object) -> int:
    """A stream's tool-call index as it came (a number, or its text); anything else: 0."""
    if isinstance(value, int | float):
        return int(value)
    try:
        return int(value) if isinstance(value, str) else 0
    except ValueError:
        return 0


def stream_chunks(event_data: Iterable[str]) -> Iterator[Received]:
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


def sse(event: Event) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def error_body(status: int, message: str) -> ErrorBody:
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
