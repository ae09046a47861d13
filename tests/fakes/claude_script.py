"""What FakeClaude answers: script items, and how each renders as a Messages API response.

A script item is one of Reply, Failure, MidStreamFailure, Drop. A Reply says what the model
writes and why it stopped (`stop_reason`: every reason the API has, e.g. `refusal` with its
`stop_details`, `max_tokens`, `pause_turn`); FakeClaude shapes its thinking blocks for the
request (tests/fakes/claude_thinking.py) and its usage by prefix caching
(tests/fakes/claude_cache.py). `render_json` gives the body of a `stream: false` response;
`render_sse` the event sequence of a `stream: true` response, in the order the real API
sends it (message_start, content_block_start/delta/stop per block, message_delta,
message_stop).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.fakes.claude_cache import CacheUsage, prompt_blocks

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
    # Why it stopped, in detail (a refusal's category and explanation); None: no detail.
    stop_details: dict[str, Any] | None = None
    # Streamed: after the first text delta, the rest waits until this is set (an answer
    # still being written for as long as the test needs, whatever the machine's pace).
    held: threading.Event | None = None
    # Nothing is answered until this is set (a Claude slow to start, for as long as the
    # test needs).
    waits_for: threading.Event | None = None


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


def cited(value: str, source: str, title: str, cited_text: str, index: int = 0) -> Reply:
    """Text citing a `search_result` block of the request (its `index`th, counted across
    messages and tool results), as Claude answers from search results with citations on."""
    citation = {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": cited_text,
        "search_result_index": index,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    return Reply([{"type": "text", "text": value, "citations": [citation]}])


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


def refusal(partial_text: str = "", category: str | None = "cyber") -> Reply:
    """A safety classifier ending the answer (`stop_reason: "refusal"`), after whatever
    text it had let through."""
    details = {"type": "refusal", "category": category, "explanation": None}
    content = [{"type": "text", "text": partial_text}] if partial_text else []
    return Reply(content, stop_reason="refusal", stop_details=details)


def stopped(value: str, stop_reason: str) -> Reply:
    """Text that ends for `stop_reason` (`max_tokens`, `model_context_window_exceeded`,
    `pause_turn`, `stop_sequence`...)."""
    return Reply([{"type": "text", "text": value}] if value else [], stop_reason=stop_reason)


def new_tool_use_id() -> str:
    return f"toolu_fake_{next(_tool_ids):06d}"


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


@dataclass
class Usage:
    input_tokens: int
    output_tokens: int
    # From the prompt cache (tests/fakes/claude_cache.py); without it nothing is cached.
    cache: CacheUsage | None = None

    def to_api(self) -> dict[str, Any]:
        cache = self.cache or CacheUsage(self.input_tokens)
        return {**cache.to_api(), "output_tokens": self.output_tokens, "service_tier": "standard"}


def count_tokens(text: str) -> int:
    """FakeClaude's tokenizer: deterministic, and like a real one costlier outside ASCII
    (about 3.5 ASCII characters a token; a character of a 3-byte UTF-8 script such as
    Chinese, Japanese, Korean or Thai a token; a 2-byte one half; emoji two)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    two_byte = len(_TWO_BYTE.findall(text))
    astral = len(_ASTRAL.findall(text))
    three_byte = len(text) - ascii_chars - two_byte - astral
    return -(-ascii_chars * 2 // 7) + -(-two_byte // 2) + three_byte + 2 * astral


_TWO_BYTE = re.compile("[\u0080-\u07ff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def estimate_usage(
    request: dict[str, Any], content: list[dict[str, Any]], cache: CacheUsage | None = None
) -> Usage:
    """Deterministic token counts: the whole prompt (split by `cache` when given), and
    what was written."""
    if cache is None:
        cache = CacheUsage(max(1, prompt_blocks_total(request)))
    return Usage(
        cache.input_tokens, max(1, count_tokens(json.dumps(content, ensure_ascii=False))), cache
    )


def prompt_blocks_total(request: dict[str, Any]) -> int:
    """Every input token of the request (tools, system, messages): what count_tokens
    answers, and what a response's three input fields add up to."""
    blocks = prompt_blocks(request, count_tokens)
    return blocks[-1].tokens if blocks else 0


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


def render_json(
    request: dict[str, Any], reply: Reply, usage: Usage | None = None
) -> dict[str, Any]:
    message = _message(request, reply.content)
    message["stop_reason"] = reply.stop_reason
    message["stop_details"] = reply.stop_details
    message["usage"] = (usage or estimate_usage(request, reply.content)).to_api()
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


def message_start(
    request: dict[str, Any], content: list[dict[str, Any]], usage: Usage | None = None
) -> list[Event]:
    start = (usage or estimate_usage(request, content)).to_api()
    start["output_tokens"] = 1
    message = {**_message(request, []), "usage": start}
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
        start: dict[str, Any] = {"type": "text", "text": ""}
        if block.get("citations"):
            start["citations"] = []  # as the API starts a cited text block
        yield _event("content_block_start", index=index, content_block=start)
        for piece in paced_text(block["text"], delta_chars):
            delta = {"type": "text_delta", "text": piece}
            yield _event("content_block_delta", index=index, delta=delta)
        for citation in block.get("citations") or []:
            delta = {"type": "citations_delta", "citation": citation}
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


def render_sse(request: dict[str, Any], reply: Reply, usage: Usage | None = None) -> list[Event]:
    usage = usage or estimate_usage(request, reply.content)
    events = message_start(request, reply.content, usage)
    for index, block in enumerate(reply.content):
        events.extend(block_events(index, block, reply.delta_chars))
    delta = {
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "stop_details": reply.stop_details,
    }
    events.append(
        _event("message_delta", delta=delta, usage={"output_tokens": usage.output_tokens})
    )
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
