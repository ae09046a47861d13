"""Ranking a person's conversations for a question: BM25 over their search index, with standard
parameters, sliced from the index's lines in place (nothing built per search but a map from ids
to places) and bounded whatever it holds. A time range is a hint, not a filter; a question's
parts are ranked apart and taken in turn (docs/architecture.md, "Recall", ranking)."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from app.learning.search_index import SearchIndex

K1 = 1.2
B = 0.75
# Lines of postings looked at per search (a question's words times their variants).
MAX_LOOKUPS = 96
# Places read per search, over all of a question's words: a crafted index whose every
# term is in every entry costs this many steps, not one per posting it holds.
MAX_POSTINGS = 8_000

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Ranked:
    at: int  # the entry's place in the index
    thread_ts: str
    score: float


class Ranking(list[Ranked]):
    """The best entries, best first; `matched`: the places of every entry that matched
    (beyond the limit too), to say how many more there are."""

    matched: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class TimeRange:
    """Conversations that went on between `after` and `before` (Unix seconds, either
    open): those whose first and last messages span any of it."""

    after: int | None = None
    before: int | None = None

    def holds(self, index: SearchIndex, at: int) -> bool:
        return (self.after is None or index.updated[at] >= self.after) and (
            self.before is None or index.started[at] < self.before
        )


def rank(
    index: SearchIndex,
    groups: list[tuple[str, ...]],
    limit: int,
    *,
    exclude: str | None = None,
    within: TimeRange | None = None,
    share: int = 1,
) -> Ranking:
    """The best `limit` entries for the question's term groups, best first, newest first on ties (no
    terms: the newest); with `within`, those held then and the best of all in turn. `exclude`: a
    thread left out; `share`: of how many parts of a question this is one (they share one search's
    bounds)."""
    count = len(index)
    excluded = index.place_of(exclude)
    # Those held in the time range, in order (newest first); only a range looks at all.
    hinted = (
        [at for at in range(count) if at != excluded and within.holds(index, at)]
        if within is not None
        else []
    )
    if not groups:
        first = set(hinted)
        others = (at for at in range(count) if at != excluded and at not in first)
        newest = itertools.islice(itertools.chain(hinted, others), limit)
        return Ranking(Ranked(at, index.threads[at], 0.0) for at in newest)
    if count - (excluded is not None) <= 0:
        return Ranking()
    spans = _spans(index, groups, MAX_LOOKUPS // share)
    place = index.position_of()
    average = max(1.0, sum(index.lengths) / count)
    scores: dict[int, float] = {}
    budget = MAX_POSTINGS // share
    body = index.body  # spans are where the postings are in it
    # Rarest first: what the budget leaves out weighs least.
    for _, group in sorted(spans, key=lambda item: item[0]):
        counts: dict[int, int] = {}
        for start, end in group:
            if budget <= 0:
                break
            postings = body[start + 1 : end].split(",", budget)[:budget]
            budget -= len(postings)
            for posting in postings:
                frequency = 1
                if "*" in posting:
                    posting, _, times = posting.partition("*")
                    frequency = int(times) if times.isdigit() and len(times) < 4 else 1
                at = place.get(posting)
                if at is None or at == excluded:
                    continue  # an id no entry has (expired), or the current thread
                if frequency > counts.get(at, 0):
                    counts[at] = frequency
        if not counts:
            continue
        idf = math.log(1 + (count - len(counts) + 0.5) / (len(counts) + 0.5))
        for at, frequency in counts.items():
            norm = K1 * (1 - B + B * index.lengths[at] / average)
            scores[at] = scores.get(at, 0.0) + idf * frequency * (K1 + 1) / (frequency + norm)
    ranked = _best(index, scores, limit)
    if within is not None:
        # A time range names the conversations too: those held then, best match first and
        # then the newest, taken in turn with the best of all.
        held = _best(index, {at: scores[at] for at in hinted if at in scores}, limit)
        rest = (at for at in hinted if at not in scores)
        held += [Ranked(at, index.threads[at], 0.0) for at in itertools.islice(rest, limit)]
        ranked = Ranking(in_turn([held, ranked], limit, key=_place))
    ranked.matched = frozenset(scores)
    return ranked


def _place(ranked: Ranked) -> int:
    return ranked.at


def _best(index: SearchIndex, scores: dict[int, float], limit: int) -> Ranking:
    # Entries are newest first: on equal scores the lower place (newer) wins.
    best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
    return Ranking(Ranked(at, index.threads[at], score) for at, score in best)


def in_turn(lists: Sequence[Sequence[T]], limit: int, key: Callable[[T], Hashable]) -> list[T]:
    """Each list's best not yet taken (by `key`), in turn, at most `limit`: a list whose best
    another list took gives its next best in that round."""
    taken: list[T] = []
    seen: set[Hashable] = set()
    left = [iter(entries) for entries in lists]
    while left and len(taken) < limit:
        for entries in list(left):
            best = next((entry for entry in entries if key(entry) not in seen), None)
            if best is None:
                left.remove(entries)
                continue
            seen.add(key(best))
            taken.append(best)
            if len(taken) == limit:
                break
    return taken


def rank_parts(
    index: SearchIndex,
    queries: list[list[tuple[str, ...]]],
    limit: int,
    *,
    exclude: str | None = None,
    within: TimeRange | None = None,
) -> list[Ranking]:
    """`rank` for each part of a question (each part's term groups): the parts share one
    search's bounds."""
    return [
        rank(index, groups, limit, exclude=exclude, within=within, share=len(queries))
        for groups in queries
    ]


def _spans(
    index: SearchIndex, groups: list[tuple[str, ...]], lookups: int
) -> list[tuple[int, list[tuple[int, int]]]]:
    """Where each group's postings are (its variants'), with how long they are (the
    rarer, the shorter), within `lookups` lookups."""
    found: list[tuple[int, list[tuple[int, int]]]] = []
    for group in groups:
        spans = [span for term in group[:lookups] if (span := index.span(term)) is not None]
        lookups -= min(lookups, len(group))
        if spans:
            found.append((sum(end - start for start, end in spans), spans))
        if not lookups:
            break
    return found
