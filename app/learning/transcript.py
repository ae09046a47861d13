"""What of a thread is worth summarising (the last summary plus what was said since), and
`fallback_summary`, without a model, so a turn never ends without one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from app.learning.plain_text import clip, one_line
from app.learning.summary_file import (
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
    UNTITLED,
    Summary,
    SummaryDraft,
)

# Below this many characters of conversation a thread has nothing worth summarising.
MIN_CONVERSATION_CHARS = 100
# What the summarizer is shown when there is no previous summary: the newest part.
MAX_TRANSCRIPT_CHARS = 12_000
# How much of one message the deterministic fallback quotes.
FALLBACK_EXCERPT_CHARS = 240


class Utterance(Protocol):
    """One message of the conversation (app.agent.history.ThreadMessage fits)."""

    @property
    def role(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def sent_at(self) -> float | None:
        """When it was posted (seconds since the epoch); None when not known."""
        ...


def conversation(history: Sequence[Utterance]) -> list[Utterance]:
    """The exchange proper: non-empty messages from the person's first one on (Orion's
    greeting opens every thread and says nothing about this conversation)."""
    messages = [m for m in history if m.text.strip()]
    while messages and messages[0].role != "user":
        messages.pop(0)
    return messages


def conversation_chars(messages: Sequence[Utterance]) -> int:
    return sum(len(m.text.strip()) for m in messages)


def latest_exchange(messages: Sequence[Utterance]) -> list[Utterance]:
    """The last answer and the person's message(s) it answered."""
    end = len(messages)
    start = end
    while start > 0 and messages[start - 1].role != "user":
        start -= 1  # the answer (possibly in several messages)
    while start > 0 and messages[start - 1].role == "user":
        start -= 1
    return list(messages[start:end])


def newest_within(messages: Sequence[Utterance], limit: int) -> list[Utterance]:
    """The newest messages whose text fits in `limit` characters (at least the last one)."""
    kept: list[Utterance] = []
    total = 0
    for message in reversed(messages):
        total += len(message.text)
        if kept and total > limit:
            break
        kept.append(message)
    return kept[::-1]


def fallback_summary(previous: Summary | None, new_material: Sequence[Utterance]) -> SummaryDraft:
    """A summary without a model: the previous one plus excerpts of the new messages."""
    person = [m.text for m in new_material if m.role == "user"]
    orion = [m.text for m in new_material if m.role != "user"]
    lines = []
    if person:
        lines.append(f"- The person said: {_excerpt(' '.join(person))}")
    if orion:
        lines.append(f"- Orion answered: {_excerpt(' '.join(orion))}")
    added = "\n".join(lines)
    earlier = previous.body.strip() if previous is not None else ""
    room = MAX_SUMMARY_CHARS - len(added) - 1
    if len(earlier) > room:
        # Keep the start (the gist of the thread) and the newest exchange; drop the middle.
        cut = earlier[: max(0, room - 2)]
        earlier = (cut[: cut.rfind("\n")] if "\n" in cut else cut).rstrip() + "\n…"
    body = f"{earlier}\n{added}".strip() if earlier else added
    if previous is not None and previous.title != UNTITLED:
        title = previous.title
    else:
        title = one_line(person[0], MAX_TITLE_CHARS) if person else UNTITLED
    return SummaryDraft(title=title or UNTITLED, body=body)


def _excerpt(text: str) -> str:
    return clip(one_line(text, 10 * FALLBACK_EXCERPT_CHARS), FALLBACK_EXCERPT_CHARS)
