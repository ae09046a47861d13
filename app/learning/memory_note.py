"""What a turn changed in a person's memory, in words ("Saved to memory: notes/travel.md"), one
line per file the store confirmed, for the note under the answer (docs/memory-notes.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.learning.plain_text import clip
from app.memory.change_log import MemoryChange
from app.memory.homes import person, preferences_key
from app.memory.preferences_file import read_preferences

SAVED = "Saved to memory"
UPDATED = "Updated"
DELETED = "Deleted"
MOVED = "Moved"
# Preference names listed on one line; more are counted.
MAX_PREFERENCE_NAMES = 4
# Lines a note shows (Slack's blocks and a terminal alike); more are counted.
MAX_LINES = 5
# A line as shown: in a terminal as it is, in Slack once escaped (app/slack/mrkdwn.py).
LINE_CHARS = 200


@dataclass(frozen=True)
class NoteLine:
    verb: str
    name: str
    detail: str | None = None  # e.g. which preferences changed

    def __str__(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.verb}: {self.name}{detail}"


def describe_changes(user_id: str, changes: Sequence[MemoryChange]) -> list[NoteLine]:
    """One line per changed file, in the order the turn first changed them; a file the
    turn moved (deleted here, created there with the same content: how a bucket renames)
    is one line, "Moved: old.md → new.md"."""
    moves = _moves(changes)
    moved_away = set(moves.values())
    lines = []
    for change in changes:
        if change.key in moved_away:
            continue
        if (source := moves.get(change.key)) is not None:
            old, new = file_name(user_id, source), file_name(user_id, change.key)
            lines.append(NoteLine(MOVED, f"{old} → {new}"))
        else:
            lines.append(_line(user_id, change))
    return lines


def _moves(changes: Sequence[MemoryChange]) -> dict[str, str]:
    """Created key → the deleted key it was moved from."""
    deleted = {c.before: c.key for c in changes if c.deleted and c.before is not None}
    moves: dict[str, str] = {}
    for change in changes:
        if change.created and change.after is not None:
            source = deleted.pop(change.after, None)
            if source is not None:
                moves[change.key] = source
    return moves


def shown_lines(lines: Sequence[str], fit: Callable[[str], str] | None = None) -> list[str]:
    """What a note shows: at most MAX_LINES lines, then "…and N more". Each line is made
    to fit by `fit` — by default clipped to LINE_CHARS; Slack escapes it first and clips
    what it will send, since escaping lengthens it."""
    shown = [fit(line) if fit else clip(line, LINE_CHARS) for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        shown.append(f"…and {len(lines) - MAX_LINES} more")
    return shown


def _line(user_id: str, change: MemoryChange) -> NoteLine:
    verb = SAVED if change.created else DELETED if change.deleted else UPDATED
    if change.key == preferences_key(user_id):
        return NoteLine(verb, "preferences", _changed_preferences(change) or None)
    return NoteLine(verb, file_name(user_id, change.key))


def file_name(user_id: str, key: str) -> str:
    """How the person knows the file at `key`."""
    home = person(user_id)
    if key == preferences_key(user_id):
        return "preferences"
    if key.startswith(home.memory_prefix):
        return key[len(home.memory_prefix) :]
    if key.startswith(home.conversations_prefix):
        # conversations/{thread}/plan.md: a file of this conversation's.
        _, _, rest = key[len(home.conversations_prefix) :].partition("/")
        return f"{rest} (this conversation)"
    return key


def _changed_preferences(change: MemoryChange) -> str:
    before, after = read_preferences(change.before), read_preferences(change.after)
    names = [
        key.replace("_", " ")
        for key in dict.fromkeys([*after, *before])
        if before.get(key) != after.get(key)
    ]
    shown = ", ".join(names[:MAX_PREFERENCE_NAMES])
    more = len(names) - MAX_PREFERENCE_NAMES
    return f"{shown} and {more} more" if more > 0 else shown
