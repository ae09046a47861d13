"""Ranking a person's conversations for a question: BM25 over their search index.

BM25 favours the words that are rare in this person's history (a topic named once beats
"meeting", which every summary has) and does not let long summaries win by length. It
is small enough to keep here rather than take a library (the well-known ones need numpy
and scipy). Standard parameters: k1 = 1.2, b = 0.75.

Nothing is built per search: the entries' term strings are joined into one text, and
each query term is found in it with `str.find` (C speed) — a word by its beginning, so
inflected forms match (search_terms.stem), a character pair whole. A hit's entry is
found by bisecting the entries' offsets. The cost is a few scans of the text per query
term, bounded by MAX_QUERY_TERMS; no pattern can backtrack.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass

from app.learning.search_index import SearchDocument
from app.learning.search_terms import is_bigram, stem

K1 = 1.2
B = 0.75


@dataclass(frozen=True, slots=True)
class Ranked:
    document: SearchDocument
    score: float


def rank(documents: list[SearchDocument], terms: list[str], limit: int) -> list[Ranked]:
    """The best `limit` documents for `terms`, best first, newest first on ties; with no
    terms, the newest. Documents matching no term are left out."""
    if not terms:
        return [Ranked(d, 0.0) for d in documents[:limit]]
    if not documents:
        return []
    # " a b c \n d e \n": every term has a space before and after it.
    text = " " + " \n ".join(d.terms for d in documents) + " "
    starts: list[int] = []
    offset = 0
    for document in documents:
        starts.append(offset)
        offset += len(document.terms) + 3
    count = len(documents)
    average_length = max(1.0, (text.count(" ") - count) / count)
    scores: Counter[int] = Counter()
    for term in terms:
        frequencies = _hits(text, starts, term)
        if not frequencies:
            continue
        idf = math.log(1 + (count - len(frequencies) + 0.5) / (len(frequencies) + 0.5))
        for index, frequency in frequencies.items():
            length = documents[index].terms.count(" ") + 1
            norm = K1 * (1 - B + B * length / average_length)
            scores[index] += idf * frequency * (K1 + 1) / (frequency + norm)
    # Documents are newest first: on equal scores the lower index (newer) wins.
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [Ranked(documents[index], score) for index, score in best]


def _hits(text: str, starts: list[int], term: str) -> Counter[int]:
    """How often each document holds `term` (a word: any word it begins)."""
    needle = f" {term} " if is_bigram(term) else f" {stem(term)}"
    frequencies: Counter[int] = Counter()
    position = text.find(needle)
    while position != -1:
        frequencies[bisect_right(starts, position) - 1] += 1
        # From the space that ends this term: the next one may start there.
        position = text.find(needle, position + len(needle) - 1)
    return frequencies
