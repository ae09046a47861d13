"""Slack's message text format (mrkdwn): how stored text is shown as text.

Slack reads `<…>` as links, mentions and `<!channel>`-style broadcasts, and `&` starts an
entity. A message's text arrives with the `&`, `<` and `>` its author typed written as
`&amp;`, `&lt;` and `&gt;` (`text_of`): Orion reads it as typed, so that Claude, memory and
secret redaction see `p&ss<w0rd>` rather than a password whose tail follows an entity.
Anything a person or Claude wrote — a name, a preference, a summary, a welcome —
is escaped before Orion posts or publishes it, so it can never become a link Orion posted,
and loses Unicode's explicit direction controls, so it can never turn the rest of Orion's
line around.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069). One left open in a
# stored name shows the rest of the line backwards ("Welcome back, Eve" then the greeting
# reversed). The marks (U+200E/F), which change no text but their neighbours', stay.
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
