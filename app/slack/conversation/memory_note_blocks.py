"""The memory note's messages as Block Kit (docs/memory-notes.md shows each shape; a test holds
them together). Each line escaped, then clipped, stays far below Slack's limit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.learning.memory_note import LINE_CHARS, shown_lines
from app.learning.undo import UNDONE
from app.slack.mrkdwn import escape_within

UNDO_ACTION_ID = "memory.undo"
NOTE_BLOCK_ID = "memory_note"

UNDO_UNAVAILABLE = "Undo isn't available for this answer."
# Slack's limit on a section's text.
SECTION_CHARS = 3_000


def note_fallback(lines: Sequence[str]) -> str:
    """The message's plain text (notifications, screen readers), escaped as Slack reads it."""
    return " · ".join(_shown(lines))


def note_blocks(lines: Sequence[str], undo_id: str | None) -> list[dict[str, Any]]:
    """The note under an answer; an Undo button when its record was kept."""
    block: dict[str, Any] = {
        "type": "section",
        "block_id": NOTE_BLOCK_ID,
        "text": _mrkdwn("\n".join(_shown(lines))),
    }
    if undo_id is None:
        return [block, _context(UNDO_UNAVAILABLE)]
    block["accessory"] = {
        "type": "button",
        "action_id": UNDO_ACTION_ID,
        "text": {"type": "plain_text", "text": "Undo", "emoji": True},
        "value": undo_id,
        "accessibility_label": "Undo these memory changes",
    }
    return [block]


def undone_blocks(lines: Sequence[str]) -> list[dict[str, Any]]:
    """The note once undone: its lines struck through, no button."""
    struck = "\n".join(f"~{line}~" for line in _shown(lines))
    return [
        {"type": "section", "block_id": NOTE_BLOCK_ID, "text": _mrkdwn(struck)},
        _context(UNDONE),
    ]


def refusal_blocks(text: str) -> list[dict[str, Any]]:
    """A line only the clicking person sees."""
    return [{"type": "section", "text": _mrkdwn(escape_within(text, SECTION_CHARS))}]


def _shown(lines: Sequence[str]) -> list[str]:
    """The note's lines as Slack shows them: escaped, then clipped."""
    return shown_lines(lines, fit=lambda line: escape_within(line, LINE_CHARS))


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [_mrkdwn(text)]}


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}
