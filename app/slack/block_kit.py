"""Block Kit pieces and Slack's limits on them, as Orion's views use them: headers,
sections, context lines, buttons, and stored text made safe to show (escaped, clipped,
dates in the reader's own time zone)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.learning.plain_text import clip

HEADER_CHARS = 150
SECTION_TEXT_CHARS = 3_000


def header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": plain(clip(text, HEADER_CHARS))}


def section(text: str, *, block_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "section", "text": mrkdwn(clip(text, SECTION_TEXT_CHARS))}
    if block_id is not None:
        block["block_id"] = block_id
    return block


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [mrkdwn(text)]}


def button(text: str, action_id: str, value: str) -> dict[str, Any]:
    return {"type": "button", "text": plain(text), "action_id": action_id, "value": value}


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}


def mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


def date(moment: datetime) -> str:
    """Shown in the reader's own time zone by Slack; the fallback is UTC."""
    utc = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)
    fallback = utc.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(utc.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


def size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
