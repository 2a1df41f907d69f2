"""The wire shapes the bridge speaks (pure types): what it sends is typed to the field, what
it receives is a `Received` object read by key with every value checked.

Chat Completions (the gateway's API): the request the bridge builds. Anthropic Messages (Claude
Code's API): the message, the stream events and the error body the bridge answers with. Field
names are the APIs' own; they are contract with the other side, never renamed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict

Received = Mapping[str, object]  # a JSON object as it came: untrusted, every value checked


def received(value: object) -> Received:
    """`value` if it is a JSON object, else an empty one (pure)."""
    return value if isinstance(value, dict) else {}


def objects(value: object) -> list[Received]:
    """The JSON objects of a list (anything else: none), in order (pure)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


# --- Chat Completions: the request ------------------------------------------------------------


class ChatFunctionCall(TypedDict):
    name: str
    arguments: str  # JSON text


class ChatToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: ChatFunctionCall


class ChatTextPart(TypedDict):
    type: Literal["text"]
    text: str


class ChatImageUrl(TypedDict):
    url: str


class ChatImagePart(TypedDict):
    type: Literal["image_url"]
    image_url: ChatImageUrl


ChatPart = ChatTextPart | ChatImagePart


class ChatMessage(TypedDict):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[ChatPart] | None
    tool_calls: NotRequired[list[ChatToolCall]]
    tool_call_id: NotRequired[str]


class ChatFunction(TypedDict):
    name: str
    description: str
    parameters: object  # the tool's JSON schema, passed on as it came


class ChatTool(TypedDict):
    type: Literal["function"]
    function: ChatFunction


class ChatFunctionName(TypedDict):
    name: str


class ChatNamedChoice(TypedDict):
    type: Literal["function"]
    function: ChatFunctionName


ChatToolChoice = Literal["auto", "required", "none"] | ChatNamedChoice


class ChatStreamOptions(TypedDict):
    include_usage: bool


class ChatRequest(TypedDict):
    model: str
    messages: list[ChatMessage]
    tools: NotRequired[list[ChatTool]]
    tool_choice: NotRequired[ChatToolChoice]
    max_tokens: NotRequired[object]  # sampling values pass through as the client sent them
    temperature: NotRequired[object]
    top_p: NotRequired[object]
    stop: NotRequired[object]
    stream: NotRequired[bool]
    stream_options: NotRequired[ChatStreamOptions]


# --- Anthropic Messages: the answer -------------------------------------------------------------


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, object]


Block = TextBlock | ToolUseBlock


class MessagesUsage(TypedDict):
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    output_tokens: int


class Message(TypedDict):
    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[Block]
    stop_reason: str | None
    stop_sequence: None
    usage: MessagesUsage


class MessageStart(TypedDict):
    type: Literal["message_start"]
    message: Message


class BlockStart(TypedDict):
    type: Literal["content_block_start"]
    index: int
    content_block: Block


class TextDelta(TypedDict):
    type: Literal["text_delta"]
    text: str


class JsonDelta(TypedDict):
    type: Literal["input_json_delta"]
    partial_json: str


class BlockDelta(TypedDict):
    type: Literal["content_block_delta"]
    index: int
    delta: TextDelta | JsonDelta


class BlockStop(TypedDict):
    type: Literal["content_block_stop"]
    index: int


class StopDelta(TypedDict):
    stop_reason: str
    stop_sequence: None


class MessageDelta(TypedDict):
    type: Literal["message_delta"]
    delta: StopDelta
    usage: MessagesUsage


class MessageStop(TypedDict):
    type: Literal["message_stop"]


class ErrorDetail(TypedDict):
    type: str  # rate_limit_error, api_error, …
    message: str


class ErrorBody(TypedDict):
    """An Anthropic error: a response body, or the last event of a stream that broke."""

    type: Literal["error"]
    error: ErrorDetail


Event = MessageStart | BlockStart | BlockDelta | BlockStop | MessageDelta | MessageStop | ErrorBody


class TokenCount(TypedDict):
    input_tokens: int
