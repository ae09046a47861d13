"""Slack's mrkdwn: incoming text read as typed (entities decoded), and what a person or Claude wrote
escaped before Orion posts it: never a link, mention, broadcast or direction control."""

from __future__ import annotations

import re
from collections.abc import Mapping

# Embeddings, overrides and isolates: one left open in a stored name shows the rest of the
# line backwards. The marks (U+200E/F), which change only their neighbours, stay.
_DIRECTION_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def without_direction_controls(text: str) -> str:
    """`text` for a plain-text field (a title): its direction controls dropped."""
    return _DIRECTION_CONTROLS.sub("", text)


def escape(text: str) -> str:
    """`text` shown as itself in a Slack message or a mrkdwn block."""
    shown = without_direction_controls(text)
    return shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_within(text: str, limit: int) -> str:
    """`text` escaped, within `limit` characters once escaped (`&` alone becomes five):
    cut after escaping, never inside an entity, and marked with "…" where cut."""
    shown = escape(text)
    if len(shown) <= limit:
        return shown
    cut = shown[: limit - 1]
    if (amp := cut.rfind("&")) > cut.rfind(";"):
        cut = cut[:amp]
    return cut.rstrip() + "…"


def text_of(message: Mapping[str, object]) -> str:
    """A Slack message's (or event's) text as its author typed it. Slack's own links,
    mentions and broadcasts stay as they are (`<@U123>`, `<https://…|…>`)."""
    text = str(message.get("text") or "")
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
