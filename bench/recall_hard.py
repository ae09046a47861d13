"""`recall` on questions about things said once, in passing (bench/recall_hard_data.py):
does it find the conversations that hold the answer, and at what cost?

Two retrievers over the same people and questions:

- `new`: Orion's recall as it is (app/learning/recall.py `search_homes`) through the
  real store — GcsObjectStore against the GCS emulator (fake-gcs-server on loopback) —,
  with each conversation's object (its transcript and summary), the profile listing them
  and the search index seeded in the person's home as turn ends write them. A question
  that names a month passes it as a time range (`after`/`before`, as Claude would); the
  row "new, words only" does not.
- `bm25s`: a plain library BM25 (bm25s, with PyStemmer's stemmer and bm25s's stop words
  of the person's language) over the same text: title, summary and every message.

Recall@k: a question counts for "all" when every conversation holding its evidence is in
the first k, for "any" when one is. CPU per search: `time.process_time()` of this process
(for `new`, the storage client's work included: the emulator runs in its own process;
for bm25s, ranking over an index already in memory). Recall as it was before what was
said was indexed (titles and summaries only) is in docs/benchmarks.md: the code it ran
on no longer exists. Storage reads per search are
counted by a layer over the store. Then one person with 2,000 conversations: the same,
on 200 questions that name what was said, with the search index's size.

Then the second frozen set, whose answers are not where the question's words are
(bench/recall_passages.py: conversation- and message-level recall, characters returned).

Run alone with `uv run python -m bench.recall_hard [--quick]`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import bm25s
import Stemmer

from app.learning import search_index
from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.passages import passages
from app.learning.profile import ConversationEntry, Profile
from app.learning.recall import search_homes
from app.learning.search_index import (
    MAX_BUCKET_CHARS,
    MAX_INDEX_CHARS,
    MAX_INDEXED_SESSIONS,
    SearchIndex,
    document_for,
    parse_search_index,
    render_search_index,
)
from app.learning.search_ranking import TimeRange, rank
from app.learning.search_terms import query_terms
from app.learning.summary_file import Summary
from app.memory import secret_free_store
from app.memory.homes import person as home_of
from app.memory.retention import SessionRetention
from app.storage.gcs import GcsObjectStore
from app.storage.store import StoredObject, StoreLayer, Unchanged, read_if_changed
from bench.environment import benchmark_environment
from bench.recall_hard_data import Conversation, Person, Question, long_history, people
from bench.stats import percentile_ms, print_table
from tests.fakes.gcs import GcsEmulator

K = 5
RETENTION_DAYS = 3_650
CHANNEL = "D0HARD038"
BM25_LANGUAGES = {"en": "english", "fr": "french", "de": "german", "es": "spanish"}


class CountingStore(StoreLayer):
    reads = 0

    async def read(self, key: str) -> StoredObject | None:
        self.reads += 1
        return await super().read(key)

    async def read_if_changed(self, key: str, generation: int) -> StoredObject | Unchanged | None:
        self.reads += 1  # a request all the same, answered 304 or with the content
        return await read_if_changed(self.inner, key, generation)


@dataclass
class Scores:
    """Recall@1/3/5 (all evidence, any evidence) per question kind, and costs."""

    hits: dict[tuple[str, int, str], int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    cpu: list[float] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)

    def add(self, question: Question, found: list[str], cpu: float, reads: int = 0) -> None:
        for kind in (question.kind, "all questions"):
            self.counts[kind] = self.counts.get(kind, 0) + 1
            for k in (1, 3, 5):
                top = set(found[:k])
                evidence = set(question.evidence)
                for mode, hit in (("all", evidence <= top), ("any", bool(evidence & top))):
                    key = (kind, k, mode)
                    self.hits[key] = self.hits.get(key, 0) + hit
        self.cpu.append(cpu)
        self.reads.append(reads)

    def rate(self, kind: str, k: int, mode: str) -> str:
        return f"{self.hits.get((kind, k, mode), 0) / self.counts[kind]:.2f}"

    def rows(self, label: str, kinds: list[str]) -> list[tuple[str, str]]:
        rows = []
        for kind in kinds:
            if kind not in self.counts:
                continue
            figures = " / ".join(
                f"{self.rate(kind, k, 'all')}, {self.rate(kind, k, 'any')}" for k in (1, 3, 5)
            )
            rows.append(
                (
                    f"{label}, {kind} ({self.counts[kind]}): recall@1 / @3 / @5 (all, any)",
                    figures,
                )
            )
        return rows

    def cost_row(self, label: str) -> tuple[str, str]:
        cost = f"{percentile_ms(self.cpu, 50)} / {percentile_ms(self.cpu, 95)}"
        if any(self.reads):
            cost += f"; reads median {statistics.median(self.reads):.0f}, max {max(self.reads)}"
        return (
            f"{label}: CPU per search p50 / p95 ms{', storage reads' if any(self.reads) else ''}",
            cost,
        )


# --- A plain library BM25 over the same text -------------------------------------------


def _text(conversation: Conversation) -> str:
    said_in = "\n".join(m.text for m in conversation.messages)
    return f"{conversation.title}\n{conversation.summary}\n{said_in}"


def _bm25_search(person: Person) -> Callable[[str], list[str]]:
    language = BM25_LANGUAGES.get(person.language)
    stemmer = Stemmer.Stemmer(language) if language else None
    stopwords = person.language if language else None
    corpus = [_text(c) for c in person.conversations]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords=stopwords, stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    threads = [c.thread_ts for c in person.conversations]

    def search(question: str) -> list[str]:
        tokens = bm25s.tokenize(
            [question], stopwords=stopwords, stemmer=stemmer, show_progress=False
        )
        if not tokens.vocab:
            return []
        found, _ = retriever.retrieve(tokens, k=min(K, len(threads)), show_progress=False)
        return [threads[at] for at in found[0]]

    return search


# --- Orion's recall through the store ---------------------------------------------------


def _seed(emulator: GcsEmulator, bucket: str, person: Person) -> int:
    """What turn ends would have written for the person; the search index's size."""
    owner = ConversationOwner(person.user_id, CHANNEL)
    home = home_of(person.user_id)
    profile, documents = Profile(), []
    for c in person.conversations:
        record = ConversationRecord(c.thread_ts, owner, c.started).with_messages(
            said(m.role, m.text, at=m.at, ts=m.ts)
            for m in c.messages  # type: ignore[arg-type]
        )
        record = record.with_summary(Summary(c.title, c.summary, c.updated))
        emulator.write(bucket, home.conversation_key(c.thread_ts), record.render())
        profile = profile.with_conversation(
            ConversationEntry(c.thread_ts, c.title, c.updated, CHANNEL)
        )
        documents.append(
            document_for(c.thread_ts, c.title, c.summary, c.messages, c.updated, c.started, CHANNEL)
        )
    emulator.write(bucket, home.profile_key, profile.render())
    index = SearchIndex(complete=True)
    index.add(documents)
    rendered = render_search_index(index)
    emulator.write(bucket, home.search_key, rendered)
    return len(rendered.encode())


async def _new_search(
    store: CountingStore, person: Person, question: Question, *, ranged: bool
) -> tuple[list[str], float, int]:
    within = None
    if ranged and question.month is not None:
        first, last = question.month
        within = TimeRange(int(first.timestamp()), int(last.timestamp()))
    reads, started = store.reads, time.process_time()
    hits, _ = await search_homes(
        store, [home_of(person.user_id)], [question.text], limit=K, within=within
    )
    return [h.thread_ts for h in hits], time.process_time() - started, store.reads - reads


async def _measure(store: CountingStore, persons: list[Person]) -> dict[str, Scores]:
    scores = {name: Scores() for name in ("new", "new, words only", "bm25s")}
    for person in persons:
        plain = _bm25_search(person)
        for question in person.questions:
            found, cpu, reads = await _new_search(store, person, question, ranged=True)
            scores["new"].add(question, found, cpu, reads)
            found, cpu, reads = await _new_search(store, person, question, ranged=False)
            scores["new, words only"].add(question, found, cpu, reads)
            started = time.process_time()
            found = plain(question.text)
            scores["bm25s"].add(question, found, time.process_time() - started)
    return scores


def crafted_index(words: list[str]) -> str:
    """A search index at its cap, as an attacker with the bucket would write it, for the
    costliest search: the most entries, every line at its bound, every word of the
    question in it with postings naming every entry (issue 36)."""
    count = MAX_INDEXED_SESSIONS
    ids = [format(n, "x") for n in range(count)]
    buckets = 32
    postings = "," + ",".join(ids)
    lines = [""] * buckets
    for word in words:
        line = search_index.bucket_of(word, buckets)
        if len(lines[line]) + len(word) + len(postings) + 1 < MAX_BUCKET_CHARS:
            lines[line] += f"\t{word}{postings}"
    header_room = 700_000
    filler = "\tzz" + "0" * 20 + ",0"
    for line in range(buckets):
        room = min(
            MAX_BUCKET_CHARS - len(lines[line]),
            MAX_INDEX_CHARS - header_room - sum(map(len, lines)),
        )
        lines[line] += filler * max(0, room // len(filler))
    offsets = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    header = {
        "version": 3,
        "complete": True,
        "next": count,
        "threads": " ".join(f"{1_700_000_000 + n}.{n:06d}" for n in range(count)),
        "ids": " ".join(ids),
        "updated": list(range(2**30 + count, 2**30, -1)),
        "started": [1] * count,
        "lengths": [1] * count,
        "titles": ["t"] * count,
        "channels": " ".join(["-"] * count),
        "buckets": offsets,
    }
    return json.dumps(header) + "\n" + "\n".join(lines)


async def _crafted(store: CountingStore, emulator: GcsEmulator, bucket: str) -> list[float]:
    question = " ".join(f"word{n}" for n in range(40))
    words = [group[0] for group in query_terms(question)]
    content = crafted_index(words)
    assert len(content) <= MAX_INDEX_CHARS and len(parse_search_index(content)) > 0
    emulator.write(bucket, home_of("U0CRAFTED").search_key, content)
    cpu = []
    words = question.split()
    in_parts = [" ".join(words[part::4]) for part in range(4)]
    for queries in [[question]] * 7 + [in_parts] * 7:
        started = time.process_time()
        await search_homes(store, [home_of("U0CRAFTED")], queries, limit=10)
        cpu.append(time.process_time() - started)
    return cpu


def _in_memory(emulator: GcsEmulator, bucket: str, person: Person) -> list[float]:
    """The new recall's own work, like the other rows' (their index already in memory):
    the index's text and the records as read, then parse, rank and passages."""
    home = home_of(person.user_id)
    raw = emulator.read(bucket, home.search_key)
    assert raw is not None
    content = raw.decode()
    records = {
        c.thread_ts: (emulator.read(bucket, home.conversation_key(c.thread_ts)) or b"").decode()
        for c in person.conversations
    }
    cpu = []
    for question in person.questions:
        started = time.process_time()
        index = parse_search_index(content)
        groups = query_terms(question.text)
        for ranked in rank(index, groups, K):
            record = ConversationRecord.parse(records[ranked.thread_ts])
            assert record is not None
            passages(record.messages, groups)
        cpu.append(time.process_time() - started)
    return cpu


async def _run(quick: bool, emulator: GcsEmulator) -> list[tuple[str, str]]:
    bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
    emulator.create_bucket(bucket)
    gcs = GcsObjectStore(bucket)
    store = CountingStore(secret_free_store.kept(gcs, SessionRetention(days=RETENTION_DAYS)))
    rows: list[tuple[str, str]] = []
    try:
        await gcs.connect()
        persons = people()
        for person in persons:
            _seed(emulator, bucket, person)
        conversations = sum(len(p.conversations) for p in persons)
        label = f"hard set ({len(persons)} people, {conversations} conversations)"
        scores = await _measure(store, persons)
        kinds = ["all questions", "single", "two", "date"]
        for name, score in scores.items():
            rows += score.rows(f"{label}, {name}", kinds)
        for name, score in scores.items():
            rows.append(score.cost_row(f"{label}, {name}"))
        # The second set (issue 45): the answer next to the question's words, over several
        # conversations, in other words (bench/recall_passages.py).
        from bench import recall_passages

        rows += await recall_passages.measure(store, emulator, bucket)
        size = 200 if quick else 2_000
        person = long_history(size)
        if quick:
            person.questions = person.questions[:40]
        index_bytes = _seed(emulator, bucket, person)
        label = f"{size} conversations, {len(person.questions)} questions naming what was said"
        scores = await _measure(store, [person])
        for name in ("new", "bm25s"):
            rows += scores[name].rows(f"{label}, {name}", ["date"])
            rows.append(scores[name].cost_row(f"{label}, {name}"))
        rows.append((f"{size} conversations: search index size", f"{index_bytes / 1e6:.2f} MB"))
        cpu = _in_memory(emulator, bucket, person)
        rows.append(
            (
                f"{label}, new in memory (parse + rank + 5 transcripts' passages, no storage "
                "client): CPU per search p50 / p95 ms",
                f"{percentile_ms(cpu, 50)} / {percentile_ms(cpu, 95)}",
            )
        )
        cpu = await _crafted(store, emulator, bucket)
        for name, part in (("one query", cpu[:7]), ("the same words as four queries", cpu[7:])):
            rows.append(
                (
                    f"a crafted index at the cap ({MAX_INDEX_CHARS / 1e6:.0f} MB, "
                    f"{MAX_INDEXED_SESSIONS:,} entries), {name}: CPU per search, "
                    "median / max ms",
                    f"{percentile_ms(part, 50)} / {max(part) * 1000:.1f}",
                )
            )
    finally:
        await gcs.close()
    return rows


def run(quick: bool) -> list[tuple[str, str]]:
    with GcsEmulator() as emulator, benchmark_environment(emulator.url):
        return asyncio.run(_run(quick, emulator))


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
