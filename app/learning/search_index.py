"""Each person's search index over their own conversations: `people/{user_id}/search.json`.

`recall` reads this one object and then only the summaries it ranks first, so a search
costs at most 1 + k storage reads whatever the length of the person's history. It lives
among Orion's own records, beside the conversation index (app/learning/session_index.py),
outside every path the memory tool can reach: only Orion decides which threads a search
can return. The after-turn step rewrites the thread's entry with the summary it has just
written, optimistically (`update`), so two instances finishing two of the person's threads
at once both land.

It is a separate object from the conversation index, which the Home tab and erasure read
and which is rewritten only when a thread's title or day changes: this one changes on
every turn, and is two to three times its size. It is stored by column, so that reading
it makes a handful of Python objects however long the history — no object per entry
(at 2,000 conversations, one list and one tuple per entry cost more CPU to make, and to
sweep for the garbage collector, than ranking them; bench/recall_search.py):

    {"version":2,"complete":true,
     "threads":"1712345678.123456 1712345001.000200 …",
     "updated":[1777889520,1777800000,…],
     "terms":" q3 budget lisbon … \n hiring plan … "}

newest first: the threads (space-separated), when each was last updated (Unix seconds,
never increasing) and every entry's terms (app/learning/search_terms.py: separated by
spaces, the title's twice) in one text, entries separated by " \n " — exactly the text
ranking scans (app/learning/search_ranking.py). `complete` says every conversation of the
person's conversation index has an entry; an index started by a turn end (a person with
history from before this index, or after a corrupted index was dropped) is not, and the
next `recall` fills it in (app/learning/search_backfill.py).

Every conversation within the retention window is kept; older entries are skipped when
read and dropped when written. An index whose columns do not agree (a count, an order, a
thread that is not a Slack timestamp, an entry over its bound) was not written by Orion:
it is read as empty (logged), and filled in again from the conversation index. The first
version (one [thread, time, terms] list per entry) is still read, as far as its entries
are sound, and rewritten by column at the next turn end.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import operator
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple

from app.learning.search_terms import MAX_TERM_CHARS, document_terms, title_terms
from app.learning.session_index import MAX_INDEXED_SESSIONS
from app.learning.summary_file import MAX_SUMMARY_CHARS
from app.memory.retention import cutoff_of
from app.memory.scopes import THREAD_TS_PATTERN, is_thread_ts, search_index_key
from app.memory.tolerant_json import MAX_JSON_CHARS, load_json_object
from app.observability.logging import get_logger
from app.storage.store import ObjectStore, StoredObject, update

log = get_logger(__name__)

VERSION = 2
# Distinct terms kept per conversation: a 2,000-character summary has about 150 words, or
# as many CJK bigrams; the title's and the first ones are kept.
MAX_DOCUMENT_TERMS = 200
# Orion's summaries are at most MAX_SUMMARY_CHARS; one edited by hand or with the memory
# tool is indexed in its first characters only.
MAX_INDEXED_CHARS = 2 * MAX_SUMMARY_CHARS
# One entry's terms as written, and the most a hostile entry is allowed to hold.
MAX_DOCUMENT_CHARS = 2 * MAX_DOCUMENT_TERMS * (MAX_TERM_CHARS + 1)
# The whole object stays well below what Orion's JSON reader parses at all.
MAX_INDEX_CHARS = MAX_JSON_CHARS * 3 // 4
# Between two entries' terms in the index's text.
SEPARATOR = " \n "
# What one entry costs in the written object besides its terms: its thread, its time.
_ENTRY_OVERHEAD_CHARS = 2 * 20 + 2 + 14
# Every thread column Orion writes: timestamps separated by single spaces. No nested
# repetition: linear in the column's length.
_THREADS = re.compile(f"{THREAD_TS_PATTERN}(?: {THREAD_TS_PATTERN})*")


class SearchDocument(NamedTuple):
    """One conversation's entry, as a turn end makes it and a search returns it."""

    thread_ts: str
    updated: int  # Unix seconds of the thread's last turn
    terms: str  # space-separated, title terms twice


class SearchIndex:
    """A person's entries, newest first, by column: `threads`, `updated`, and `text`
    (every entry's terms, " a b \n c d ": each term between spaces, entry `i` starting
    at `starts[i]`)."""

    def __init__(self, documents: Sequence[SearchDocument] = (), complete: bool = False) -> None:
        """From entries already newest first."""
        self.threads = [d.thread_ts for d in documents]
        self.updated = [d.updated for d in documents]
        self.text = " " + SEPARATOR.join(d.terms for d in documents) + " "
        self.complete = complete

    @classmethod
    def of_columns(
        cls, threads: list[str], updated: list[int], text: str, complete: bool
    ) -> SearchIndex:
        index = cls.__new__(cls)
        index.threads, index.updated, index.text, index.complete = threads, updated, text, complete
        return index

    def __len__(self) -> int:
        return len(self.threads)

    @cached_property
    def starts(self) -> list[int]:
        """Where each entry's text begins (its leading space), and one past the end."""
        # Each entry's stretch and its line break, added up: all in C, no loop of ours.
        stretches = map((1).__add__, map(len, self.text.split("\n")))
        return list(itertools.accumulate(stretches, initial=0))

    def terms(self, at: int) -> str:
        """Entry `at`'s terms (without the spaces around them)."""
        starts = self.starts
        return self.text[starts[at] + 1 : starts[at + 1] - 2]

    def document(self, at: int) -> SearchDocument:
        return SearchDocument(self.threads[at], self.updated[at], self.terms(at))

    @property
    def documents(self) -> list[SearchDocument]:
        """Every entry as an object: for writers (a turn end) and tests, never a search."""
        return [self.document(at) for at in range(len(self.threads))]

    def newer_than(self, floor: int) -> SearchIndex:
        """Without the entries updated before `floor` (they are the last ones)."""
        keep = sum(1 for _ in itertools.takewhile(lambda u: u >= floor, self.updated))
        if keep == len(self.threads):
            return self
        text = self.text[: self.starts[keep] - 2] + " " if keep else "  "
        return SearchIndex.of_columns(self.threads[:keep], self.updated[:keep], text, self.complete)


def document_for(thread_ts: str, title: str, body: str, updated: datetime) -> SearchDocument:
    """A conversation's entry, from its summary's title and text (a summary edited to any
    length is indexed in its first `MAX_INDEXED_CHARS`)."""
    terms = document_terms(
        title[:MAX_INDEXED_CHARS], body[:MAX_INDEXED_CHARS], limit=MAX_DOCUMENT_TERMS
    )
    # The title names the topic: its terms count twice (BM25's term frequency).
    in_title = title_terms(title[:MAX_INDEXED_CHARS])
    repeated = [t for t in terms if t in in_title]
    return SearchDocument(thread_ts, int(updated.timestamp()), " ".join([*terms, *repeated]))


def parse_search_index(raw: str | None, *, cutoff: datetime | None = None) -> SearchIndex:
    """The index as Orion wrote it (an unsound one is empty and logged), never raised."""
    data = load_json_object(raw, what="search_index")
    if not data:
        return SearchIndex()
    if data.get("version") == VERSION:
        index = _by_column(data)
        if index is None:
            log.warning("memory.file.unreadable", file="search_index", reason="columns_disagree")
            return SearchIndex()
    else:
        index = _first_version(data)
    return index.newer_than(int(cutoff.timestamp())) if cutoff is not None else index


def _by_column(data: dict[str, Any]) -> SearchIndex | None:
    """The index if its columns agree with each other, else None."""
    threads, updated, text = data.get("threads"), data.get("updated"), data.get("terms")
    if type(threads) is not str or type(updated) is not list or type(text) is not str:
        return None
    complete = data.get("complete") is True
    if not threads:
        return SearchIndex(complete=complete) if not updated else None
    if _THREADS.fullmatch(threads) is None:
        return None
    ids = threads.split(" ")
    count = len(ids)
    # Checked in C wherever it can be (each is one pass): `type(u) is int`, as a bool is
    # not a time; newest first, so the first is the latest and the last the earliest.
    sound = (
        count <= MAX_INDEXED_SESSIONS
        and len(updated) == count
        and len(set(ids)) == count
        and set(map(type, updated)) == {int}
        and all(map(operator.ge, updated, itertools.islice(updated, 1, None)))
        and updated[-1] >= 0
        and updated[0] < 2**40
        and text.startswith(" ")
        and text.endswith(" ")
        # Before the text is cut at its line breaks: however many a hostile one holds.
        and text.count("\n") == count - 1
    )
    if not sound:
        return None
    index = SearchIndex.of_columns(ids, updated, text, complete)
    starts = index.starts
    longest = max(map(operator.sub, itertools.islice(starts, 1, None), starts))
    # An entry's stretch of the text: its terms, the spaces around them and a line break.
    return index if longest <= MAX_DOCUMENT_CHARS + len(SEPARATOR) else None


def _first_version(data: dict[str, Any]) -> SearchIndex:
    """A first-version index ([thread, time, terms] per entry), as far as it is sound:
    malformed entries are skipped and counted in one log line."""
    items = data.get("docs")
    if not isinstance(items, list):
        log.warning("memory.file.unreadable", file="search_index", reason="no_docs")
        return SearchIndex()
    sound = [item for item in items[:MAX_INDEXED_SESSIONS] if _sound(item)]
    malformed = min(len(items), MAX_INDEXED_SESSIONS) - len(sound)
    documents = [SearchDocument._make(item) for item in sound]
    if len({d.thread_ts for d in documents}) < len(documents):
        documents = _newest_per_thread(documents)  # written twice (an edited index)
    if malformed or len(items) > MAX_INDEXED_SESSIONS:
        log.warning(
            "memory.file.unreadable",
            file="search_index",
            reason="malformed_entries",
            skipped=malformed + max(0, len(items) - MAX_INDEXED_SESSIONS),
        )
    complete = data.get("complete") is True and not malformed
    return SearchIndex(_newest_first(documents), complete=complete)


def _sound(item: object) -> bool:
    """A first-version entry as Orion wrote it: [thread, Unix seconds, terms]. `type(...)
    is`: a bool is not a time. Terms hold no line break (it separates entries)."""
    if type(item) is not list or len(item) != 3:
        return False
    thread, updated, terms = item
    return (
        type(updated) is int
        and type(terms) is str
        and 0 <= updated < 2**40
        and len(terms) <= MAX_DOCUMENT_CHARS
        and "\n" not in terms
        and is_thread_ts(thread)
    )


def _newest_per_thread(documents: list[SearchDocument]) -> list[SearchDocument]:
    newest: dict[str, SearchDocument] = {}
    for document in documents:
        known = newest.get(document.thread_ts)
        if known is None or known.updated < document.updated:
            newest[document.thread_ts] = document
    return list(newest.values())


def _newest_first(documents: Iterable[SearchDocument]) -> list[SearchDocument]:
    return sorted(documents, key=itemgetter(1, 0), reverse=True)


def render_search_index(index: SearchIndex) -> str:
    """The object as written: compact, bounded (when a flood of conversations would
    outgrow it, the oldest entries go, logged)."""
    starts = index.starts
    # The most entries that fit, by what the first `kept` take once written (terms hold
    # nothing JSON escapes).
    kept = (
        bisect_right(
            range(min(len(index), MAX_INDEXED_SESSIONS) + 1),
            MAX_INDEX_CHARS,
            key=lambda k: starts[k] + k * _ENTRY_OVERHEAD_CHARS,
        )
        - 1
    )
    if kept < len(index):
        log.warning("memory.search_index.trimmed", dropped=len(index) - kept)
        index = SearchIndex.of_columns(
            index.threads[:kept],
            index.updated[:kept],
            index.text[: starts[kept] - 2] + " " if kept else "  ",
            index.complete,
        )
    data = {
        "version": VERSION,
        "complete": index.complete,
        "threads": " ".join(index.threads),
        "updated": index.updated,
        "terms": index.text,
    }
    # One call to the C encoder: the whole index in a few milliseconds.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def with_documents(
    raw: str | None,
    documents: Iterable[SearchDocument],
    *,
    cutoff: datetime | None = None,
    replace: bool = True,
    complete: bool | None = None,
) -> str:
    """The index with `documents` added (`replace`: over the entries of their threads;
    else only where a thread has none), without expired entries. `complete` sets the
    flag; None keeps it."""
    current = parse_search_index(raw, cutoff=cutoff)
    floor = int(cutoff.timestamp()) if cutoff is not None else None
    by_thread = {d.thread_ts: d for d in current.documents}  # a turn end: objects are fine
    for document in documents:
        if floor is not None and document.updated < floor:
            continue
        if replace or document.thread_ts not in by_thread:
            by_thread[document.thread_ts] = document
    flag = current.complete if complete is None else complete
    return render_search_index(SearchIndex(_newest_first(by_thread.values()), flag))


def without_threads(raw: str | None, threads: set[str]) -> str | None:
    """The index without the entries of `threads` (conversations the person forgot);
    `raw` itself when none of them is there."""
    if raw is None:
        return None
    current = parse_search_index(raw)
    if threads.isdisjoint(current.threads):
        return raw
    kept = [d for d in current.documents if d.thread_ts not in threads]
    return render_search_index(SearchIndex(kept, current.complete))


WRITE_ATTEMPTS = 10


async def record_search_document(
    store: ObjectStore, user_id: str, document: SearchDocument
) -> None:
    """Add or replace the thread's entry (at turn end, with its summary)."""
    cutoff = cutoff_of(store)
    key = search_index_key(user_id)
    stored = await store.read(key)
    read = stored.content if stored is not None else None
    # Rewriting a long history's index takes milliseconds: off the event loop, from the
    # version just read; only a concurrent writer's version is redone in `update`.
    written = await asyncio.to_thread(with_documents, read, [document], cutoff=cutoff)

    def transform(raw: str | None) -> str:
        return written if raw is read else with_documents(raw, [document], cutoff=cutoff)

    # More tries than `update`'s default: every turn end of the person's concurrent threads,
    # on any instance, rewrites this one object, and a write that gives up loses the entry
    # until the thread is continued. It runs after the answer, so waiting costs nobody.
    await update(store, key, transform, attempts=WRITE_ATTEMPTS, already_read=stored)


async def remove_search_documents(store: ObjectStore, user_id: str, threads: set[str]) -> None:
    await update(store, search_index_key(user_id), lambda raw: without_threads(raw, threads))


async def read_search_index(store: ObjectStore, user_id: str) -> StoredObject | None:
    """The stored object (parse it off the event loop with `parse_search_index`)."""
    return await store.read(search_index_key(user_id))
