"""A signed request's payload, parsed once, as Bolt will parse it, refusing what would
crash it.

Slack posts Events API callbacks as JSON and interactivity as a form whose `payload`
field is JSON; Bolt reads both the same way (slack_bolt/request/internals.py,
`parse_body`), and so does this. What Bolt could not handle is refused here with a 400
instead of a 500 further down: text that is neither, a payload that is not an object,
and nesting deeper than any Slack payload (a Home-tab click, the deepest, is about 15
levels), which would otherwise exhaust the interpreter's recursion limit in the parser or
in whatever walks the payload later (Bolt, logging, the listeners).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

MAX_DEPTH = 64


class MalformedPayload(ValueError):
    """The signed body is not a payload Orion can handle; the message says why."""


def parse_payload(text: str, content_type: str | None) -> dict[str, Any]:
    media_type = (content_type or "").split(";")[0].strip()
    try:
        if media_type == "application/json" or text.startswith("{"):
            data: Any = json.loads(text)
        else:
            form = dict(parse_qsl(text, keep_blank_values=True))
            data = json.loads(form["payload"]) if "payload" in form else form
    except RecursionError as exc:
        raise MalformedPayload("nested too deeply") from exc
    except ValueError as exc:
        raise MalformedPayload("neither JSON nor a form") from exc
    if not isinstance(data, dict):
        raise MalformedPayload("not an object")
    if _deeper_than(data, MAX_DEPTH):
        raise MalformedPayload("nested too deeply")
    return data


def _deeper_than(value: dict[str, Any], limit: int) -> bool:
    """Whether the payload nests objects and arrays more than `limit` levels deep;
    walked with a stack, not recursion, for the same reason the limit exists."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
