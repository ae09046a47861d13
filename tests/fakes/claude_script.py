"""What FakeClaude answers: script items, and how each renders as a Messages API response.

A script item is one of Reply, Failure, MidStreamFailure, Drop. `render_json` gives the body of
a `stream: false` response; `render_sse` the event sequence of a `stream: true` response, in
the order the real API sends it (message_start, content_block_start/delta/stop per block,
message_delta, message_stop).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_message_ids = itertools.count(1)
_tool_ids = itertools.count(1)

# HTTP status the real API uses for each error type.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


@dataclass
class Reply:
    """A successful response with these content blocks."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    delay: float = 0.0
    # Pause between streamed deltas, to simulate a slow model.
    chunk_delay: float = 0.0
    # Stream text in deltas of exactly this many characters (with `chunk_delay`, a model's
    # pace: Sonnet writes about 24 characters every 80 ms); None: a few word-aligned deltas.
    delta_chars: int | None = None


@dataclass
class Failure:
    """An HTTP error response with Anthropic's error body."""

    status: int = 529
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    retry_after: float | None = None
    delay: float = 0.0


@dataclass
class MidStreamFailure:
    """A stream that starts normally, streams `partial_text`, then sends an `error` event.
    A non-streaming request gets the equivalent HTTP error instead."""

    partial_text: str = ""
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    delay: float = 0.0


@dataclass
class Drop:
    """Close the connection: before any response, or (streaming) after `partial_text`."""

    partial_text: str | None = None
    delay: float = 0.0


ScriptItem = Reply | Failure | MidStreamFailure | Drop


def text(value: str, **kw: Any) -> Reply:
    return Reply([{"type": "text", "text": value}], **kw)


def tool_use(
    name: str,
    input: dict[str, Any],
    text: str | None = None,
    id: str | None = None,
    **kw: Any,
) -> Reply:
    block = {"type": "tool_use", "id": id or new_tool_use_id(), "name": name, "input": input}
    content = ([{"type": "text", "text": text}] if text else []) + [block]
    return Reply(content, stop_reason="tool_use", **kw)


def new_tool_use_id() -> str:
    return f"toolu_fake_{next(_tool_ids):06d}"


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


@dataclass
class Usage:
    input_tokens: int
    output_tokens: int
    extra: dict[str, Any] = field(default_factory=dict)

    def to_api(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        }


def estimate_usage(request: dict[str, Any], content: list[dict[str, Any]]) -> Usage:
    """Deterministic token counts, roughly four characters a token like real models."""
    prompt = json.dumps([request.get("system"), request.get("messages"), request.get("tools")])
    return Usage(max(1, len(prompt) // 4), max(1, len(json.dumps(content)) // 4))


def _message(request: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{next(_message_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "claude-fake"),
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
    }


def render_json(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message = _message(request, reply.content)
    message["stop_reason"] = reply.stop_reason
    message["usage"] = estimate_usage(request, reply.content).to_api()
    return message


# --- streaming ---


@dataclass(frozen=True)
class Event:
    name: str
    data: dict[str, Any]

    def encode(self) -> bytes:
        return f"event: {self.name}\ndata: {json.dumps(self.data)}\n\n".encode()


def _event(name: str, **data: Any) -> Event:
    return Event(name, {"type": name, **data})


def message_start(request: dict[str, Any], content: list[dict[str, Any]]) -> list[Event]:
    usage = estimate_usage(request, content).to_api()
    usage["output_tokens"] = 1
    message = {**_message(request, []), "usage": usage}
    return [_event("message_start", message=message), _event("ping")]


# A long text arrives in deltas of about this size, as a model's would (a few tokens each,
# batched by the network), not in a handful of huge ones.
MAX_DELTA_CHARS = 500


def split_text(value: str, pieces: int = 4) -> list[str]:
    """Split on word boundaries into about `pieces` deltas (more for a long text), like a
    model emitting tokens."""
    words = value.split(" ")
    if len(words) <= 1 or not value:
        return [value] if value else []
    pieces = max(pieces, len(value) // MAX_DELTA_CHARS)
    size = max(1, -(-len(words) // pieces))
    parts = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [p + (" " if i < len(parts) - 1 else "") for i, p in enumerate(parts)]


def paced_text(value: str, delta_chars: int | None) -> list[str]:
    """The text deltas of `value`: `split_text`'s, or pieces of `delta_chars` characters."""
    if delta_chars is None:
        return split_text(value)
    return [value[i : i + delta_chars] for i in range(0, len(value), delta_chars)]


def _split_json(value: str) -> list[str]:
    """Tool input arrives as an empty delta then a few partial_json pieces."""
    if len(value) < 3:
        return ["", value]
    third = len(value) // 3
    return ["", value[:third], value[third : 2 * third], value[2 * third :]]


def block_events(
    index: int, block: dict[str, Any], delta_chars: int | None = None
) -> Iterator[Event]:
    kind = block.get("type")
    if kind == "text":
        yield _event("content_block_start", index=index, content_block={"type": "text", "text": ""})
        for piece in paced_text(block["text"], delta_chars):
            delta = {"type": "text_delta", "text": piece}
            yield _event("content_block_delta", index=index, delta=delta)
    elif kind in ("tool_use", "server_tool_use"):
        start = {**block, "input": {}}
        yield _event("content_block_start", index=index, content_block=start)
        for piece in _split_json(json.dumps(block.get("input", {}))):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield _event("content_block_delta", index=index, delta=delta)
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        yield _event("content_block_start", index=index, content_block=start)
        for piece in split_text(block.get("thinking", "")):
            delta = {"type": "thinking_delta", "thinking": piece}
            yield _event("content_block_delta", index=index, delta=delta)
        delta = {"type": "signature_delta", "signature": block.get("signature", "sig")}
        yield _event("content_block_delta", index=index, delta=delta)
    else:
        # Blocks without deltas (redacted_thinking, tool results of server tools) arrive whole.
        yield _event("content_block_start", index=index, content_block=block)
    yield _event("content_block_stop", index=index)


def render_sse(request: dict[str, Any], reply: Reply) -> list[Event]:
    events = message_start(request, reply.content)
    for index, block in enumerate(reply.content):
        events.extend(block_events(index, block, reply.delta_chars))
    usage = {"output_tokens": estimate_usage(request, reply.content).output_tokens}
    delta = {"stop_reason": reply.stop_reason, "stop_sequence": None}
    events.append(_event("message_delta", delta=delta, usage=usage))
    events.append(_event("message_stop"))
    return events


def render_partial_sse(request: dict[str, Any], partial_text: str) -> list[Event]:
    """The opening of a text response, cut off after `partial_text`."""
    content = [{"type": "text", "text": partial_text}]
    events = message_start(request, content)
    blocks = list(block_events(0, content[0]))
    return events + blocks[:-1]  # no content_block_stop: the block never finished


def error_event(error_type: str, message: str) -> Event:
    return Event("error", error_body(error_type, message))
