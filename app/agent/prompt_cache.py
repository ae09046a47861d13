"""Where Orion's requests mark prompt-cache breakpoints, and what a call's usage says of them
(docs/claude-settings.md, "The prompt cache"; bench/prompt_cache.py)."""

from __future__ import annotations

from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# Blocks that cannot carry a breakpoint themselves.
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def with_conversation_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` with a breakpoint on the last block of the last message (a copy: the
    conversation kept for the next call stays unmarked, so breakpoints never pile up)."""
    if not messages:
        return messages
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, str):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
    else:
        blocks = [dict(block) for block in content or []]
    for block in reversed(blocks):
        if block.get("type") not in _UNMARKABLE:
            block["cache_control"] = EPHEMERAL
            break
    else:
        return messages
    return [*messages[:-1], {**last, "content": blocks}]


def usage_figures(usage: Any) -> dict[str, int]:
    """A call's token usage as Orion logs and traces it (Langfuse's usage keys): input
    read fresh, output, and what the cache read and wrote."""
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens or 0,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens or 0,
    }


def logged_usage(figures: dict[str, int]) -> dict[str, int]:
    """`usage_figures` as a call's log line names them (`input_tokens`, …)."""
    return {key if key.endswith("_tokens") else f"{key}_tokens": n for key, n in figures.items()}
