"""The passages of a found conversation that answer a question: the messages holding its
words, best first, each cut around the first word found.

A search ranks whole conversations (app/learning/search_ranking.py); Claude then needs
what was said, not a whole transcript: a detail mentioned once, in passing, in a long
conversation, is shown as the message that holds it, with who said it and when. Words are
matched as the index matches them: normalised (search_terms.normalise), a word by the
beginning its stems share, a character pair whole. Linear in the conversation's text, one
`str.find` pass per question word, at most MAX_FOUND places each.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.learning.search_terms import is_bigram, normalise

MAX_PASSAGES = 3
PASSAGE_CHARS = 400
# Places one word is counted at, per conversation.
MAX_FOUND = 200
# Before the first word found, when a message is cut.
LEAD_CHARS = 120


class Utterance(Protocol):
    """A message of a found conversation (app/learning/conversation_record.
    TranscriptMessage fits)."""

    @property
    def role(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def at(self) -> datetime | None: ...

    @property
    def ts(self) -> str | None: ...


@dataclass(frozen=True)
class Passage:
    role: str
    text: str
    at: datetime | None
    ts: str | None  # the message's Slack ts, where known (to link to it)
    user: str | None = None  # who wrote it, in a channel's conversation


def passages(
    messages: Sequence[Utterance], groups: list[tuple[str, ...]], *, limit: int = MAX_PASSAGES
) -> list[Passage]:
    """The messages that hold most of the question's words (the rarer in this
    conversation, the more each counts), in the order they were said; with no words, the
    opening message and the newest."""
    if not messages:
        return []
    if not groups:
        chosen = sorted({0, len(messages) - 1})[:limit]
        return [_cut(messages[at], -1) for at in chosen]
    texts = [normalise(m.text) for m in messages]
    joined = "\n".join(texts)
    starts = list(_starts(texts))
    scores: dict[int, float] = {}
    first: dict[int, int] = {}
    for group in groups:
        places = _found(joined, _needles(group))
        held = {bisect.bisect_right(starts, place) - 1 for place in places}
        weight = 1.0 / len(held) if held else 0.0
        for at in held:
            scores[at] = scores.get(at, 0.0) + weight
        for place in places:
            at = bisect.bisect_right(starts, place) - 1
            first[at] = min(first.get(at, place), place)
    best = sorted(scores, key=lambda at: (-scores[at], at))[:limit]
    return [_cut(messages[at], first[at] - starts[at]) for at in sorted(best)]


def _starts(texts: list[str]) -> list[int]:
    position, starts = 0, []
    for text in texts:
        starts.append(position)
        position += len(text) + 1
    return starts


def _needles(group: tuple[str, ...]) -> list[str]:
    """What a word is found by: a pair whole, a word by the beginning its stems share
    (a stem may differ from every written form in its last letters: `happi`)."""
    if len(group) == 1 and is_bigram(group[0]):
        return [group[0]]
    return [stem[:-1] if len(stem) > 4 else stem for stem in group]


def _found(text: str, needles: list[str]) -> list[int]:
    """Where the needles begin words of `text`, at most MAX_FOUND places (and as many
    looks again inside words) per needle."""
    places: list[int] = []
    for needle in dict.fromkeys(needles):
        whole = is_bigram(needle)
        at, steps = text.find(needle), 0
        while at != -1 and steps < 2 * MAX_FOUND:
            steps += 1
            if whole or not at or not text[at - 1].isalnum():
                places.append(at)
            at = text.find(needle, at + len(needle))
    return places


def _cut(message: Utterance, found: int) -> Passage:
    """The message, or its stretch around the first word found (`found`, -1: its start)."""
    text = message.text.strip()
    if len(text) > PASSAGE_CHARS:
        start = max(0, min(found - LEAD_CHARS, len(text) - PASSAGE_CHARS))
        excerpt = text[start : start + PASSAGE_CHARS].strip()
        text = ("…" if start else "") + excerpt + ("…" if start + PASSAGE_CHARS < len(text) else "")
    return Passage(message.role, text, message.at, message.ts, getattr(message, "user", None))
