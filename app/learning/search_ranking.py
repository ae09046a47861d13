"""Ranking a person's conversations for a question: BM25 over their search index.

BM25 favours the words that are rare in this person's history (a topic named once beats
"meeting", which every summary has) and does not let long summaries win by length. It
is small enough to keep here rather than take a library (the well-known ones need numpy
and scipy). Standard parameters: k1 = 1.2, b = 0.75.

Nothing is built per search: the index holds every entry's terms in one text
(SearchIndex.text, as stored). Each query term is found in it with `str.find` (C) — a
word by its beginning, so inflected forms match (search_terms.stem), a character pair
whole — and a hit's entry by bisecting the entries' offsets. The cost is one scan of the
text per query term, bounded by MAX_QUERY_TERMS (a question in Chinese, Japanese, Korean
or Thai asks for every other pair only: search_terms.query_terms); no pattern, nothing
can backtrack.
"""

from __future__ import annotations

import heapq
import itertools
import math
from bisect import bisect_right
from dataclasses import dataclass

from app.learning.search_index import SearchDocument, SearchIndex
from app.learning.search_terms import is_bigram, stem

K1 = 1.2
B = 0.75
# Places one query term is credited in, newest entries first. A term found more often says
# little about which conversation is meant (its weight is near nothing), and without a cap
# an index whose every term shares one beginning (the person's own words can make it so)
# costs a Python step per place per term: 0.66 s of CPU per search at the index's size cap.
MAX_HITS_PER_TERM = 4_000


@dataclass(frozen=True, slots=True)
class Ranked:
    document: SearchDocument
    score: float


def rank(
    index: SearchIndex, terms: list[str], limit: int, *, exclude: str | None = None
) -> list[Ranked]:
    """The best `limit` entries for `terms`, best first, newest first on ties; with no
    terms, the newest. Entries matching no term, and the thread `exclude`, are left out."""
    count = len(index)
    if not terms:
        newest = (at for at in range(count) if index.threads[at] != exclude)
        return [Ranked(index.document(at), 0.0) for at in itertools.islice(newest, limit)]
    if not count:
        return []
    text, starts = index.text, index.starts
    # Every term has a space before it: the spaces count the terms (two per entry are
    # separators).
    average_length = max(1.0, (text.count(" ") - count) / count)
    scores: dict[int, float] = {}
    lengths: dict[int, int] = {}
    for term in terms:
        found = _hits(text, starts, term)
        if not found:
            continue
        idf = math.log(1 + (count - len(found) + 0.5) / (len(found) + 0.5))
        for at, frequency in found.items():
            length = lengths.get(at)
            if length is None:
                # The entry's stretch holds a space before each term and one after the last.
                length = lengths[at] = text.count(" ", starts[at], starts[at + 1]) - 1
            norm = K1 * (1 - B + B * length / average_length)
            scores[at] = scores.get(at, 0.0) + idf * frequency * (K1 + 1) / (frequency + norm)
    if exclude is not None and exclude in index.threads:
        scores.pop(index.threads.index(exclude), None)
    # Entries are newest first: on equal scores the lower index (newer) wins.
    best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
    return [Ranked(index.document(at), score) for at, score in best]


def _hits(text: str, starts: list[int], term: str) -> dict[int, int]:
    """How often each entry holds `term` (a word: any word it begins), in the newest
    entries holding it MAX_HITS_PER_TERM times in all."""
    needle = f" {term} " if is_bigram(term) else f" {stem(term)}"
    step = len(needle) - 1  # from the space that ends a term: the next starts with it
    find = text.find
    found: dict[int, int] = {}
    position = find(needle)
    for _ in range(MAX_HITS_PER_TERM):
        if position == -1:
            break
        at = bisect_right(starts, position) - 1
        found[at] = found.get(at, 0) + 1
        position = find(needle, position + step)
    return found
