"""The passages of a found conversation that answer a question: the exchanges around the
messages holding its words (the answer is often next to them), best first, within `room`
characters (docs/architecture.md, "Recall", results Claude can cite). Words match as the index
matches them; linear in the text, one `str.find` pass per word, MAX_FOUND places each."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.learning.search_terms import MAX_TERM_CHARS, continues_number, is_bigram, normalise

# What one conversation shows when the caller gives no room.
DEFAULT_ROOM = 2_000
# A message found, cut around the first word found in it; a neighbour, from its start.
PASSAGE_CHARS = 400
NEIGHBOUR_CHARS = 300
# Around each message found, in the order room is given: the message itself, the two
# replies after it (an answer often follows a "which one?" or "when?"), the message before.
AROUND = (0, 1, 2, -1)
# Exchanges shown per conversation, at most.
MAX_EXCHANGES = 4
# What each passage costs besides its text once shown (who said it and when).
SHOWN_CHARS = 40
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
    matched: bool = True  # it holds the question's words (else: a neighbour of one that does)


def passages(
    messages: Sequence[Utterance], groups: list[tuple[str, ...]], *, room: int = DEFAULT_ROOM
) -> list[Passage]:
    """The exchanges around the messages that hold most of the question's words (the rarer in this
    conversation, the more each counts), best first until `room` characters are shown, in the order
    they were said; with no words, the opening message and the newest."""
    if not messages:
        return []
    if not groups:
        return [_cut(messages[at], -1) for at in sorted({0, len(messages) - 1})]
    scores, first = _scored(messages, groups)
    shown: dict[int, Passage] = {}
    spent, exchanges = 0, 0
    for at in sorted(scores, key=lambda at: (-scores[at], at)):
        if at not in shown:  # a new exchange (a neighbour shown already widens its own)
            if exchanges == MAX_EXCHANGES:
                break
            exchanges += 1
        for near in (at + offset for offset in AROUND):
            if not 0 <= near < len(messages) or (near != at and near in shown):
                continue
            passage = _cut(messages[near], first[at] if near == at else -1, near == at)
            cost = (
                len(passage.text) - len(shown[near].text)
                if near in shown
                else len(passage.text) + SHOWN_CHARS
            )
            if shown and spent + cost > room:
                if near == at:
                    return [shown[at] for at in sorted(shown)]
                continue  # a neighbour that does not fit: the next may
            shown[near] = passage
            spent += cost
    return [shown[at] for at in sorted(shown)]


def _scored(
    messages: Sequence[Utterance], groups: list[tuple[str, ...]]
) -> tuple[dict[int, float], dict[int, int]]:
    """Each message holding a word of the question: its score, and where in it the
    first word found begins."""
    texts = [normalise(m.text) for m in messages]
    joined = "\n".join(texts)
    starts = _starts(texts)
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
    return scores, {at: first[at] - starts[at] for at in first}


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
        # A number cut to the term's length (its last digits) is found as cut.
        whole, number = is_bigram(needle), needle[:1].isdigit() and len(needle) < MAX_TERM_CHARS
        at, steps = text.find(needle), 0
        while at != -1 and steps < 2 * MAX_FOUND:
            steps += 1
            if number and at and continues_number(text[at - 1]):
                pass  # "5日" inside "15日": where the index does not hold it either
            elif whole or not at or not text[at - 1].isalnum():
                places.append(at)
            at = text.find(needle, at + len(needle))
    return places


def _cut(message: Utterance, found: int, matched: bool = True) -> Passage:
    """The message, or its stretch around the first word found (`found`, -1: its start;
    a neighbour of a message found is cut shorter)."""
    text = message.text.strip()
    size = PASSAGE_CHARS if matched else NEIGHBOUR_CHARS
    if len(text) > size:
        start = max(0, min(found - LEAD_CHARS, len(text) - size)) if found >= 0 else 0
        excerpt = text[start : start + size].strip()
        text = ("…" if start else "") + excerpt + ("…" if start + size < len(text) else "")
    return Passage(
        message.role, text, message.at, message.ts, getattr(message, "user", None), matched
    )
