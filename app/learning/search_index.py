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
every turn, and is two to three times its size. Compact, so that reading, parsing and
ranking 2,000 conversations stays within a few milliseconds (bench/recall_search.py):

    {"version":1,"complete":true,"docs":[["1712345678.123456",1777889520,"q3 budget …"],…]}

one entry per thread — its thread, when it was last updated (Unix seconds), and its
terms (app/learning/search_terms.py) separated by spaces, the title's twice — newest
first. `complete` says every conversation of the person's conversation index has an
entry; an index started by a turn end (a person with history from before this index, or
after a corrupted index was dropped) is not, and the next `recall` fills it in
(app/learning/search_backfill.py).

Every conversation within the retention window is kept; older entries are skipped when
read and dropped when written. A malformed, hostile or oversized index is read as far as
its entries are sound (logged), and the next write rewrites it from what was readable.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple

from app.learning.search_terms import MAX_TERM_CHARS, document_terms, title_terms
from app.learning.session_index import MAX_INDEXED_SESSIONS
from app.learning.summary_file import MAX_SUMMARY_CHARS
from app.memory.retention import cutoff_of
from app.memory.scopes import is_thread_ts, search_index_key
from app.memory.tolerant_json import MAX_JSON_CHARS, load_json_object
from app.observability.logging import get_logger
from app.storage.store import ObjectStore, StoredObject, update

log = get_logger(__name__)

VERSION = 1
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


class SearchDocument(NamedTuple):
    # A tuple: built 2,000 times per search, where a dataclass costs twice as much.
    thread_ts: str
    updated: int  # Unix seconds of the thread's last turn
    terms: str  # space-separated, title terms twice

    def to_json(self) -> list[str | int]:
        return [self.thread_ts, self.updated, self.terms]


@dataclass(frozen=True)
class SearchIndex:
    documents: list[SearchDocument]  # newest first, one per thread
    complete: bool = False

    @cached_property
    def text(self) -> str:
        """Every entry's terms in one text, " a b c \n d e ": each term between spaces,
        entries in order, each starting at its offset in `starts` (for ranking)."""
        return " " + " \n ".join(d.terms for d in self.documents) + " "

    @cached_property
    def starts(self) -> list[int]:
        return list(itertools.accumulate((len(d.terms) + 3 for d in self.documents), initial=0))


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
    """The index as far as it is sound: malformed entries are skipped and counted in one
    log line, an unreadable object is empty (tolerant_json logs it), never raised."""
    data = load_json_object(raw, what="search_index")
    items = data.get("docs")
    if not isinstance(items, list):
        if data:
            log.warning("memory.file.unreadable", file="search_index", reason="no_docs")
        return SearchIndex([])
    floor = int(cutoff.timestamp()) if cutoff is not None else 0
    sound = [item for item in items[:MAX_INDEXED_SESSIONS] if _sound(item)]
    malformed = min(len(items), MAX_INDEXED_SESSIONS) - len(sound)
    # One C call per entry (a tuple of its three values), and the expired left out.
    documents = [_make(item) for item in sound if item[1] >= floor]
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
    """An entry as Orion writes it: [thread, Unix seconds, terms]. `type(...) is`: a bool
    is not a time. Terms hold no line break (ranking joins the entries with line breaks):
    one that does was not written by Orion."""
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


def _make(item: list[Any]) -> SearchDocument:
    return SearchDocument._make(item)


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
    documents = index.documents[:MAX_INDEXED_SESSIONS]
    kept, total = 0, 0
    for document in documents:
        # What the entry takes once written (terms hold nothing JSON escapes).
        total += len(document.terms) + len(document.thread_ts) + 24
        if total > MAX_INDEX_CHARS:
            break
        kept += 1
    if kept < len(index.documents):
        log.warning("memory.search_index.trimmed", dropped=len(index.documents) - kept)
    data = {
        "version": VERSION,
        "complete": index.complete,
        "docs": [document.to_json() for document in documents[:kept]],
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
    by_thread = {d.thread_ts: d for d in current.documents}
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
    kept = [d for d in current.documents if d.thread_ts not in threads]
    if len(kept) == len(current.documents):
        return raw
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
