"""Thinking blocks as the 5.5 models return them, and the checks the API makes on the ones
sent back.

A script says what the model writes. `shape` turns that into what the API returns for the
request's thinking setting (tests/fakes/claude_models.py):

- `between_tools` (Sonnet 5.5's lowest setting): no up-front thinking; text the model
  writes before a tool call (its progress note) comes back as a `thinking` block carrying
  that text as its summary.
- `adaptive` (the default on 5.5 models): an up-front `thinking` block first, and progress
  notes in `thinking` blocks too; their text is returned only with `display: "summarized"`
  (the default, `omitted`, returns an empty string), so an app that streams text goes quiet
  between tool calls.
- `disabled`, or an older model: the script as written.

Every thinking block gets a signature bound to the model and to everything before it in the
conversation (tools, system, earlier messages; `cache_control` aside). A request that sends
one back altered, under another model, after a changed earlier turn, or that drops one the
fake returned with a tool call, gets the API's 400.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import os
import threading
from dataclasses import dataclass
from typing import Any

from tests.fakes.claude_models import thinking_type

UP_FRONT_THINKING = "The person asked something; I will think it through before answering."


class ThinkingRefused(Exception):
    """A request the API refuses for its thinking blocks (HTTP 400)."""


@dataclass(frozen=True)
class _Issued:
    binding: str
    shown: str  # the `thinking` text as returned (empty when omitted)


def strip_cache_control(value: Any) -> Any:
    """`value` without any `cache_control` (a breakpoint changes no content)."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def content_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content as blocks (a string is one text block, as the API reads it)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def binding(body: dict[str, Any], upto: int) -> str:
    """What a thinking block at `messages[upto]` is tied to."""
    messages = [
        {"role": m.get("role"), "content": strip_cache_control(content_blocks(m))}
        for m in (body.get("messages") or [])[:upto]
    ]
    tied = {
        "model": body.get("model"),
        "system": strip_cache_control(body.get("system")),
        "tools": strip_cache_control(body.get("tools")),
        "messages": messages,
    }
    return hashlib.sha256(json.dumps(tied, sort_keys=True).encode()).hexdigest()


class ThinkingLedger:
    """The signatures this fake issued and the replies that carried them."""

    def __init__(self) -> None:
        self._key = os.urandom(16)
        self._lock = threading.Lock()
        self._issued: dict[str, _Issued] = {}
        # tool_use id → the thinking blocks returned beside it, in order.
        self._beside_tool: dict[str, list[dict[str, Any]]] = {}

    def clear(self) -> None:
        with self._lock:
            self._issued.clear()
            self._beside_tool.clear()

    def shape(self, body: dict[str, Any], content: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The content the API returns for what the script says the model wrote."""
        kind = thinking_type(body)
        thinking = body.get("thinking") if isinstance(body.get("thinking"), dict) else {}
        summarized = thinking.get("display") == "summarized"
        written = copy.deepcopy(content)
        if kind in ("adaptive", "between_tools"):
            written = _notes_as_thinking(written)
        if kind == "adaptive" and not any(b.get("type") == "thinking" for b in written[:1]):
            written.insert(0, {"type": "thinking", "thinking": UP_FRONT_THINKING})
        tied = binding(body, len(body.get("messages") or []))
        shaped: list[dict[str, Any]] = []
        for index, block in enumerate(written):
            if block.get("type") != "thinking":
                shaped.append(block)
                continue
            full = str(block.get("thinking", ""))
            # `between_tools` returns progress notes with their summary; adaptive thinking
            # only when asked to.
            shown = full if kind == "between_tools" or summarized else ""
            shaped.append(self._sign(tied, index, full, shown))
        with self._lock:
            notes = [b for b in shaped if b["type"] == "thinking"]
            for block in shaped:
                if block.get("type") == "tool_use" and notes:
                    self._beside_tool[str(block.get("id"))] = notes
        return shaped

    def _sign(self, tied: str, index: int, full: str, shown: str) -> dict[str, Any]:
        mac = hmac.new(self._key, f"{tied}\n{index}\n{full}".encode(), hashlib.sha256)
        signature = base64.b64encode(mac.digest()).decode()
        with self._lock:
            self._issued[signature] = _Issued(tied, shown)
        return {"type": "thinking", "thinking": shown, "signature": signature}

    def check(self, body: dict[str, Any]) -> None:
        """Raise ThinkingRefused as the API would for the thinking blocks sent back."""
        for i, message in enumerate(body.get("messages") or []):
            if message.get("role") != "assistant":
                continue
            blocks = content_blocks(message)
            sent = [b for b in blocks if b.get("type") == "thinking"]
            for j, block in enumerate(blocks):
                if block.get("type") == "thinking":
                    self._check_block(body, i, j, block)
            for block in blocks:
                if block.get("type") != "tool_use":
                    continue
                with self._lock:
                    returned = self._beside_tool.get(str(block.get("id")))
                if returned is not None and strip_cache_control(sent) != returned:
                    raise ThinkingRefused(
                        f"messages.{i}.content: the thinking blocks returned with this "
                        "tool_use must be passed back unchanged, in order (one was dropped "
                        "or altered)"
                    )

    def _check_block(self, body: dict[str, Any], i: int, j: int, block: dict[str, Any]) -> None:
        where = f"messages.{i}.content.{j}"
        if "cache_control" in block:
            raise ThinkingRefused(f"{where}.cache_control: thinking blocks cannot be cached")
        with self._lock:
            issued = self._issued.get(str(block.get("signature")))
        if issued is None or block.get("thinking") != issued.shown:
            raise ThinkingRefused(f"{where}: Invalid `signature` in `thinking` block")
        if issued.binding != binding(body, i):
            raise ThinkingRefused(
                f"{where}: this thinking block was produced by another model or conversation "
                "(the model, tools, system or an earlier turn changed)"
            )


def _notes_as_thinking(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text written before a tool call in the same reply: a progress note, which the 5.5
    models return in a thinking block."""
    last_tool = max(
        (i for i, b in enumerate(content) if b.get("type") in ("tool_use", "server_tool_use")),
        default=-1,
    )
    return [
        {"type": "thinking", "thinking": b.get("text", "")}
        if b.get("type") == "text" and i < last_tool
        else b
        for i, b in enumerate(content)
    ]
