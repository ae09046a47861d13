"""Would classical retrieval, with no model, find the passages set's missed answers? (issue 45)

Not part of `bench.run`: nothing here is in `app/`. In memory, on the frozen passages set
(bench/recall_passages_data.py; not edited), each question as one query, the message
level — every (any) evidence message's answer inside the passages the tool would return
for its first five conversations, with the tool's own index entries, passages, rooms and
quoting — for:

- `bm25`: the tool's ranking (app/learning/search_ranking.py) and this file's BM25 over
  the same entries (the same figures: what the variants below build on);
- `rm3`: pseudo-relevance feedback — the terms of the best 1, 3 or 5 conversations (term
  frequency over length, times the conversation's score and the term's idf; terms in at
  most a fifth of the conversations), 5, 10 or 20 of them, added at 0.05–0.5 of the
  question's weight; also with the first 3 or 4 places kept from BM25;
- `limit10`: ten conversations, as Claude asking again when the result says more matched.

    scripts/uv run python -m bench.recall_classical bm25|rm3|limit10

(Lemmas added to each question word's stems were measured too, with simplemma installed
apart: docs/benchmarks.md has the figures. simplemma is no dependency of Orion's, so that
variant is not kept here.)
"""

from __future__ import annotations

import collections
import math
import sys
from collections.abc import Callable

from app.learning import recall
from app.learning.passages import passages
from app.learning.search_index import SearchIndex, document_for
from app.learning.search_ranking import rank
from app.learning.search_terms import query_terms
from bench.recall_hard_data import Person
from bench.recall_passages import KINDS, Asked, people

Groups = list[tuple[str, ...]]


class History:
    """One person's conversations: the tool's index, and the same entries' terms."""

    def __init__(self, person: Person) -> None:
        self.by_thread = {c.thread_ts: c for c in person.conversations}
        documents = [
            document_for(c.thread_ts, c.title, c.summary, c.messages, c.updated, c.started)
            for c in person.conversations
        ]
        self.index = SearchIndex(complete=True)
        self.index.add(documents)
        self.terms = {d.thread_ts: d.terms for d in documents}
        self.length = {d.thread_ts: sum(d.terms.values()) for d in documents}
        self.updated = {d.thread_ts: d.updated for d in documents}
        self.average = sum(self.length.values()) / len(documents)
        self.df = collections.Counter(t for d in documents for t in d.terms)

    def idf(self, holders: int) -> float:
        return math.log(1 + (len(self.terms) - holders + 0.5) / (holders + 0.5))

    def bm25(self, groups: Groups, weights: list[float] | None = None) -> dict[str, float]:
        """As app/learning/search_ranking.py scores (a group's best variant per entry)."""
        scores: dict[str, float] = collections.defaultdict(float)
        for at, group in enumerate(groups):
            held: dict[str, int] = {}
            for thread, terms in self.terms.items():
                frequency = max((terms.get(term, 0) for term in group), default=0)
                if frequency:
                    held[thread] = frequency
            idf = self.idf(len(held)) * (1.0 if weights is None else weights[at])
            for thread, frequency in held.items():
                norm = 1.2 * (1 - 0.75 + 0.75 * self.length[thread] / self.average)
                scores[thread] += idf * frequency * 2.2 / (frequency + norm)
        return scores

    def order(self, scores: dict[str, float]) -> list[str]:
        return sorted(scores, key=lambda thread: (-scores[thread], -self.updated[thread]))


Ranker = Callable[[History, str], list[str]]


def evaluate(name: str, ranker: Ranker, *, k: int = 5, groups_of=query_terms) -> None:  # type: ignore[no-untyped-def]
    counts: collections.Counter[str] = collections.Counter()
    hits: collections.Counter[tuple[str, str]] = collections.Counter()
    for person, questions in people():
        history = History(person)
        for asked in questions:
            found = ranker(history, asked.text)[:k]
            inside = _inside(history, asked, found, recall.all_groups([groups_of(asked.text)]))
            for kind in ("all questions", asked.kind):
                counts[kind] += 1
                hits[(kind, "every")] += all(inside)
                hits[(kind, "any")] += any(inside)
    print(
        name,
        "; ".join(
            f"{kind} {hits[(kind, 'every')] / counts[kind]:.3f} / "
            f"{hits[(kind, 'any')] / counts[kind]:.3f}"
            for kind in KINDS
        ),
        flush=True,
    )


def _inside(history: History, asked: Asked, found: list[str], groups: Groups) -> list[bool]:
    shown = {}
    for thread, room in zip(found, recall.rooms(len(found)), strict=True):
        cut = passages(history.by_thread[thread].messages, groups, room=room)
        shown[thread] = "\n".join(recall.quoted_passage(p, None) for p in cut)
    return [e.answer in shown.get(e.thread, "") for e in asked.evidence]


def tool_ranking(history: History, text: str) -> list[str]:
    return [r.thread_ts for r in rank(history.index, query_terms(text), 10)]


def bm25(history: History, text: str) -> list[str]:
    return history.order(history.bm25(query_terms(text)))


def rm3(documents: int, terms: int, weight: float, kept: int = 0) -> Ranker:
    def ranker(history: History, text: str) -> list[str]:
        groups = query_terms(text)
        scores = history.bm25(groups)
        order = history.order(scores)
        if not order:
            return order
        asked = {term for group in groups for term in group}
        best = scores[order[0]]
        feedback: collections.Counter[str] = collections.Counter()
        for thread in order[:documents]:
            for term, frequency in history.terms[thread].items():
                holders = history.df[term]
                if term not in asked and holders <= len(history.terms) / 5:
                    share = frequency / history.length[thread] * scores[thread] / best
                    feedback[term] += share * history.idf(holders)
        added = [term for term, _ in feedback.most_common(terms)]
        total = sum(feedback[term] for term in added) or 1.0
        weights = [1.0] * len(groups) + [
            weight * len(groups) * feedback[term] / total for term in added
        ]
        expanded = history.order(history.bm25(groups + [(term,) for term in added], weights))
        return list(dict.fromkeys(order[:kept] + expanded))

    return ranker


def main(what: str) -> None:
    if what == "bm25":
        evaluate("tool's ranking", tool_ranking)
        evaluate("bm25 here", bm25)
    elif what == "rm3":
        for documents in (1, 3, 5):
            for terms in (5, 10, 20):
                for weight in (0.2, 0.5):
                    evaluate(f"rm3 {documents} {terms} {weight}", rm3(documents, terms, weight))
        for kept in (3, 4):
            for weight in (0.1, 0.3, 1.0):
                evaluate(f"rm3 3 10 {weight}, first {kept} kept", rm3(3, 10, weight, kept))
        for weight in (0.05, 0.1):
            evaluate(f"rm3 3 10 {weight}", rm3(3, 10, weight))
    elif what == "limit10":
        evaluate("ten conversations", bm25, k=10)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bm25")
