"""A Slack thread as Claude's message history, bounded in estimated tokens; each message first cut
to a number of characters, which bounds the work of estimating it whatever it holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.learning.conversation_record import MAX_MESSAGE_CHARS, Role
from app.memory.token_estimate import clip_to_tokens, estimate_tokens

MAX_HISTORY_MESSAGES = 30
# About 40,000 characters of English.
MAX_HISTORY_TOKENS = 13_000
# A single message larger than this is trimmed so one paste can't crowd out the rest: about
# 12,000 characters of English, 3,300 of Japanese.
MAX_MESSAGE_TOKENS = 4_000
TRIM_NOTE = "\n\n[Message trimmed: it was too long to process in full.]"
CUT_NOTE = "\n\n[Earlier messages of this thread are omitted here; the newest follow.]"


@dataclass(frozen=True)
class ThreadMessage:
    role: Role
    text: str
    # The thread's opening message, followed by messages that were not read at all (a long
    # thread is read from its newest end): the history must say so.
    opens_cut: bool = False
    # When it was posted (Slack's ts, in seconds); None for what the turn itself adds.
    sent_at: float | None = field(default=None, compare=False)


def build_messages(thread: list[ThreadMessage]) -> list[dict[str, Any]]:
    """The newest messages that fit the bounds ("what did I just say?" matters most), with the
    thread's opening request first when it fits and a note where messages were cut; merged so
    roles alternate from `user`, as the Messages API requires and Slack threads don't ensure."""
    # What precedes the person's first message (Orion's greeting) is never sent: the
    # history must start with the user, and the opening is the request, not the greeting.
    start = next((i for i, m in enumerate(thread) if m.role == "user" and _clean(m)), len(thread))
    if start == len(thread):
        return []
    opening, rest = thread[start], thread[start + 1 :]
    opening_text = _clean(opening)  # at most MAX_MESSAGE_CHARS: it always fits
    kept = _newest_within(
        rest, MAX_HISTORY_MESSAGES - 1, MAX_HISTORY_TOKENS - estimate_tokens(opening_text)
    )
    cut = len(kept) < sum(1 for m in rest if _clean(m)) or opening.opens_cut
    kept.insert(0, ThreadMessage(opening.role, opening_text + (CUT_NOTE if cut else "")))

    messages: list[dict[str, Any]] = []
    for message in kept:
        if messages and messages[-1]["role"] == message.role:
            messages[-1]["content"] += "\n\n" + message.text
        else:
            messages.append({"role": message.role, "content": message.text})
    return messages


def _clean(message: ThreadMessage | None) -> str:
    """Its text, or its start within MAX_MESSAGE_CHARS and MAX_MESSAGE_TOKENS and a note."""
    text = message.text.strip() if message is not None else ""
    kept = clip_to_tokens(text[:MAX_MESSAGE_CHARS], MAX_MESSAGE_TOKENS)
    return text if kept == text else kept + TRIM_NOTE


def _newest_within(
    thread: list[ThreadMessage], max_messages: int, max_tokens: int
) -> list[ThreadMessage]:
    """The newest messages (oldest first) that fit `max_messages` and `max_tokens` (the
    newest one always, trimmed)."""
    kept: list[ThreadMessage] = []
    total = 0
    for message in reversed(thread):
        text = _clean(message)
        if not text:
            continue
        tokens = estimate_tokens(text)
        if len(kept) >= max_messages or (total + tokens > max_tokens and kept):
            break
        kept.append(ThreadMessage(message.role, text))
        total += tokens
    kept.reverse()
    return kept
