"""Filling in a person's search index from the summaries it does not cover yet.

A person who talked to Orion before the search index existed (or before it held every
message) has a conversation index (app/learning/session_index.py), summaries and
perhaps conversation records, but no search entries for them; so has a person whose
search index was unreadable and was started afresh by a turn end. Such an index is not
`complete`. The first `recall` that finds it so reads the conversation index, reads the
summary and the record (its transcript) of each conversation missing from the search
index — at most `MAX_BACKFILL_READS` conversations, newest first, so one search costs a
bounded number of reads —, adds their entries (never over an entry a turn end wrote
meanwhile) and marks the index complete once nothing is missing. Each later search reads
the index alone again. A record that names someone else adds nothing of its transcript.

What is added must not outlive a forgetting that ran while the summaries were read:
like every writer of a person's data, the backfill then checks the erasure tombstone
(app/learning/erasure.py) and erases again, and it drops the entries of threads the
conversation index no longer lists (a conversation forgotten meanwhile). Conversations
last updated before the person's latest erasure are never added: that erasure may still
be deleting them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

from app.learning.conversation_record import ConversationRecord
from app.learning.conversations import whose
from app.learning.erasure import erased_after, erasure_time, forget_again_if_erased
from app.learning.search_index import (
    SearchDocument,
    SearchIndex,
    document_for,
    parse_search_index,
    remove_search_documents,
    with_documents,
)
from app.learning.session_index import SessionEntry, read_index
from app.learning.summary_file import parse_summary
from app.memory.retention import cutoff_of
from app.memory.scopes import conversation_record_key, search_index_key, session_context_key
from app.observability.logging import get_logger
from app.storage.store import ObjectStore, StoredObject, update

log = get_logger(__name__)

# Summaries read by one search to fill in the index: about a year of one conversation a
# working day. A longer history is filled in over the next searches.
MAX_BACKFILL_READS = 250
READ_CONCURRENCY = 8


@dataclass(frozen=True)
class Backfilled:
    index: SearchIndex
    read: int  # conversations read
    failed: int  # conversations that could not be read (tried again next time)


async def fill_in(
    store: ObjectStore, user_id: str, stored: StoredObject | None, index: SearchIndex
) -> Backfilled:
    """`index` (as read from `stored`) with the entries it lacks, written back when it
    can be; a storage failure here still returns what was read, for this search."""
    started = datetime.now(UTC)
    covered = set(index.threads)
    listed, erased_at = await asyncio.gather(
        read_index(store, user_id), erasure_time(store, user_id)
    )
    # A conversation last updated before the person asked to be forgotten is erased, even
    # if the erasure, still under way, has not deleted it yet: its deletions may already
    # have passed this index by.
    missing = [
        e for e in listed if e.thread_ts not in covered and not erased_after(erased_at, e.updated)
    ]
    batch = missing[:MAX_BACKFILL_READS]
    gate = asyncio.Semaphore(READ_CONCURRENCY)
    failures = 0

    async def document(entry: SessionEntry) -> SearchDocument | None:
        nonlocal failures
        async with gate:
            try:
                summary, record = await asyncio.gather(
                    store.read(session_context_key(entry.thread_ts)),
                    store.read(conversation_record_key(entry.thread_ts)),
                )
            except Exception as exc:
                failures += 1
                # The same line as a search's own summary read: recall could not read it.
                log.warning(
                    "tool.recall.read_failed",
                    error=type(exc).__name__,
                    during="fill_in",
                    exc_info=exc,
                )
                return None
        if summary is None:
            return None  # expired or forgotten: nothing to find
        parsed = parse_summary(summary.content)
        kept = ConversationRecord.parse(record.content) if record is not None else None
        theirs = kept is not None and whose(kept, user_id) is True
        return await asyncio.to_thread(
            document_for,
            entry.thread_ts,
            parsed.title,
            parsed.body,
            kept.messages if theirs and kept is not None else (),
            entry.updated,
            kept.started if theirs and kept is not None else None,
            entry.channel,
        )

    found = [d for d in await asyncio.gather(*(document(e) for e in batch)) if d is not None]
    complete = len(missing) <= MAX_BACKFILL_READS and failures == 0
    cutoff = cutoff_of(store)
    log.info(
        "memory.search_index.backfill",
        missing=len(missing),
        added=len(found),
        failed=failures,
        complete=complete,
    )
    if stored is None and not found and failures == 0:
        return Backfilled(index, 0, 0)  # no history at all: nothing to write
    try:
        written = await update(
            store,
            search_index_key(user_id),
            lambda raw: with_documents(raw, found, cutoff=cutoff, replace=False, complete=complete),
            already_read=stored,
        )
        if await forget_again_if_erased(store, user_id, started):
            return Backfilled(SearchIndex(), len(batch), failures)
        gone = await _forgotten_meanwhile(store, user_id, found)
    except Exception as exc:  # this search still answers from what was read
        log.warning("memory.search_index.backfill_write_failed", exc_info=exc)
        content = stored.content if stored is not None else None
        merged = with_documents(content, found, cutoff=cutoff, replace=False)
        return Backfilled(parse_search_index(merged, cutoff=cutoff), len(batch), failures)
    fresh = await asyncio.to_thread(parse_search_index, written, cutoff=cutoff)
    fresh.without(gone)
    return Backfilled(fresh, len(batch), failures)


async def _forgotten_meanwhile(
    store: ObjectStore, user_id: str, added: list[SearchDocument]
) -> set[str]:
    """The threads of `added` forgotten while their summaries were read, their entries
    removed again."""
    if not added:
        return set()
    listed = {e.thread_ts for e in await read_index(store, user_id, expired_too=True)}
    gone = {d.thread_ts for d in added} - listed
    if gone:
        await remove_search_documents(store, user_id, gone)
    return gone
