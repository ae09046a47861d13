"""Turn a Slack thread into Claude's message history, bounded in size."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["user", "assistant"]

MAX_HISTORY_MESSAGES = 30
MAX_HISTORY_CHARS = 40_000
# A single message larger than this is trimmed so one paste can't crowd out the rest.
MAX_MESSAGE_CHARS = 12_000
TRIM_NOTE = "\n\n[Message trimmed: it was too long to process in full.]"


@dataclass(frozen=True)
class ThreadMessage:
    role: Role
    text: str


def trim_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + TRIM_NOTE


def build_messages(thread: list[ThreadMessage]) -> list[dict[str, Any]]:
    """Newest messages that fit the bounds, merged so roles alternate, starting with the user.

    The Messages API requires alternating roles beginning with `user`; Slack threads don't
    guarantee that (two user messages in a row, a greeting from Orion first).
    """
    kept: list[ThreadMessage] = []
    total = 0
    for message in reversed(thread[-MAX_HISTORY_MESSAGES:]):
        text = trim_message(message.text.strip())
        if not text:
            continue
        if total + len(text) > MAX_HISTORY_CHARS and kept:
            break
        kept.append(ThreadMessage(message.role, text))
        total += len(text)
    kept.reverse()
    while kept and kept[0].role != "user":
        kept.pop(0)

    messages: list[dict[str, Any]] = []
    for message in kept:
        if messages and messages[-1]["role"] == message.role:
            messages[-1]["content"] += "\n\n" + message.text
        else:
            messages.append({"role": message.role, "content": message.text})
    return messages
