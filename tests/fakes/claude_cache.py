"""Prompt caching as the Messages API does it, for FakeClaude's usage figures.

The prompt is read in the API's order (tools, then system, then messages), one block at a
time. A block marked `cache_control` is a breakpoint (at most 4 a request, else a 400).
At each breakpoint the cache is looked up for the prefix ending there, and for those ending
at up to 20 blocks before it (where earlier requests wrote); the longest hit is read. Every
breakpoint whose prefix reaches the model's minimum cacheable length is written (if not
there already). So the usage of a request splits its prompt into three parts that add up
to the whole:

- `cache_read_input_tokens`: the longest cached prefix;
- `cache_creation_input_tokens`: from there to the last breakpoint (when that is long
  enough to cache at all), by TTL in `cache_creation`;
- `input_tokens`: the rest, after the last breakpoint.

Entries never expire here (a test is shorter than the 5-minute TTL); `clear` forgets them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any

from tests.fakes.claude_models import rules_for
from tests.fakes.claude_thinking import content_blocks, strip_cache_control

MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20


class CacheRefused(Exception):
    """A request the API refuses for its cache breakpoints (HTTP 400)."""


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0

    def to_api(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": (
                    self.cache_creation_input_tokens - self.ephemeral_1h_input_tokens
                ),
                "ephemeral_1h_input_tokens": self.ephemeral_1h_input_tokens,
            },
        }


@dataclass(frozen=True)
class _Block:
    prefix: str  # the digest of the prompt up to and including this block
    tokens: int  # the prompt's tokens up to and including this block
    ttl: str | None  # its breakpoint's TTL; None: not a breakpoint


def prompt_blocks(body: dict[str, Any], count_tokens: Any) -> list[_Block]:
    """The prompt as the API reads it, block by block, with running digests and counts."""
    digest = hashlib.sha256(str(body.get("model")).encode())
    parts: list[tuple[str, dict[str, Any]]] = []
    for tool in body.get("tools") or []:
        parts.append(("tool", tool))
    system = body.get("system")
    if isinstance(system, str):
        parts.append(("system", {"type": "text", "text": system}))
    for block in system if isinstance(system, list) else []:
        parts.append(("system", block))
    for message in body.get("messages") or []:
        for block in content_blocks(message):
            parts.append((str(message.get("role")), block))
    blocks: list[_Block] = []
    total = 0
    for role, part in parts:
        text = json.dumps([role, strip_cache_control(part)], sort_keys=True, ensure_ascii=False)
        digest.update(text.encode())
        total += count_tokens(text)
        control = part.get("cache_control")
        ttl = str(control.get("ttl") or "5m") if isinstance(control, dict) else None
        blocks.append(_Block(digest.hexdigest(), total, ttl))
    return blocks


class PromptCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: set[str] = set()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def usage(self, body: dict[str, Any], count_tokens: Any) -> CacheUsage:
        """The request's input usage; writes what it caches. Raises CacheRefused."""
        blocks = prompt_blocks(body, count_tokens)
        breakpoints = [i for i, b in enumerate(blocks) if b.ttl is not None]
        if len(breakpoints) > MAX_BREAKPOINTS:
            raise CacheRefused(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {len(breakpoints)}."
            )
        total = blocks[-1].tokens if blocks else 0
        minimum = rules_for(body.get("model")).min_cacheable_tokens
        with self._lock:
            read = 0
            for point in breakpoints:
                for i in range(point, max(-1, point - LOOKBACK_BLOCKS - 1), -1):
                    if blocks[i].prefix in self._entries:
                        read = max(read, blocks[i].tokens)
                        break
            written = [p for p in breakpoints if blocks[p].tokens >= minimum]
            for point in written:
                self._entries.add(blocks[point].prefix)
        cached_to = max((blocks[p].tokens for p in written), default=0)
        creation = max(0, cached_to - read)
        last_ttl = blocks[written[-1]].ttl if written else None
        return CacheUsage(
            input_tokens=total - read - creation,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=creation,
            ephemeral_1h_input_tokens=creation if last_ttl == "1h" else 0,
        )
