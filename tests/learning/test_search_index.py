"""The per-person search index (`people/{id}/search.json`): written at turn end, never
losing a concurrent thread's entry, within retention, forgotten with its conversation,
filled in for a history from before it, and a search that tells storage trouble apart
from "nothing found". Every test runs on both backends (the GCS one enforces the
generation preconditions optimistic updates rely on)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
from anthropic.tools import ToolError

from app.agent.history import ThreadMessage
from app.learning.conversation_record import said
from app.learning.erasure import forget_conversation, tombstone_key
from app.learning.recall import COULD_NOT_SEARCH, RecallTool
from app.learning.search_backfill import MAX_BACKFILL_READS
from app.learning.search_index import (
    document_for,
    parse_search_index,
    record_search_document,
    with_documents,
)
from app.learning.session_index import SessionEntry, record_session
from app.learning.session_summary import update_session_summary
from app.learning.summary_file import SessionSummary, SummaryDraft, render_summary
from app.memory import keeping
from app.memory.retention import SessionRetention
from app.memory.scopes import (
    MemoryScope,
    conversations_index_key,
    search_index_key,
    session_context_key,
)
from app.storage.gcs import GcsObjectStore
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore, StoredObject, StoreLayer
from tests.backends import THREAD, USER, Backend
from tests.fakes.fault_proxy import FaultyProxy

NOW = datetime.now(UTC).replace(microsecond=0)
DM = "D0123ABCD"
DAY = timedelta(days=1)


def threads(count: int) -> list[str]:
    return [f"{1_712_000_000 + n}.{n:06d}" for n in range(count)]


def stored_threads(backend: Backend, user: str = USER) -> list[str]:
    return parse_search_index(backend.raw_read(search_index_key(user))).threads


async def write_conversation(
    store: ObjectStore, thread: str, title: str, body: str, updated: datetime
) -> None:
    """A conversation as Orion kept it before the search index: summary and index entry."""
    summary = SessionSummary(title, body, user_id=USER, updated=updated)
    await store.write(session_context_key(thread), render_summary(summary))
    await record_session(store, USER, SessionEntry(thread, title, updated, DM))


def recall(store: ObjectStore) -> RecallTool:
    return RecallTool(store, MemoryScope(USER, THREAD))


async def test_each_turn_end_writes_the_threads_entry_with_its_summary(
    store: ObjectStore, backend: Backend
) -> None:
    history = [
        ThreadMessage("user", "Can we cut the Q3 cloud bill? Spot instances for batch jobs?"),
        ThreadMessage("assistant", "Yes: moving batch jobs to spot instances saves about 20%."),
    ]

    async def summarize(previous: object, material: object) -> SummaryDraft:
        return SummaryDraft("Q3 cloud bill", "Spot instances for the batch jobs.")

    await update_session_summary(
        store, user_id=USER, thread_ts=THREAD, history=history, summarize=summarize, now=NOW
    )
    index = parse_search_index(backend.raw_read(search_index_key(USER)))
    assert index.threads == [THREAD] and index.updated == [int(NOW.timestamp())]
    for term in ("q3", "cloud", "bill", "spot", "instanc", "batch", "save"):
        assert index.postings(term), term  # the summary's words and the messages'
    result = await RecallTool(store, MemoryScope(USER, "1712999999.000001")).call(
        {"query": "saves 20%"}  # said in a message, not in the summary
    )
    assert json.dumps(result).count("Q3 cloud bill") == 1


async def test_concurrent_turn_ends_on_two_instances_lose_no_entry(backend: Backend) -> None:
    # A second instance: its own client (or directory handle) on the same objects.
    if backend.emulator is not None:
        assert backend.bucket is not None
        other: ObjectStore = GcsObjectStore(backend.bucket)
    else:
        assert backend.directory is not None
        other = LocalDirectoryStore(backend.directory)
    instances = [backend.store, other]
    started = threads(12)
    await asyncio.gather(
        *(
            record_search_document(
                instances[n % 2], USER, document_for(thread, f"Topic {n}", "Body.", [], NOW)
            )
            for n, thread in enumerate(started)
        )
    )
    assert sorted(stored_threads(backend)) == started


async def test_every_conversation_within_retention_is_kept_and_expired_ones_go(
    backend: Backend,
) -> None:
    clock = [NOW]
    store = keeping.kept(backend.store, SessionRetention(days=30, clock=lambda: clock[0]))
    old, new = threads(2)
    await record_search_document(
        store, USER, document_for(old, "Old plans", "", [], NOW - 25 * DAY)
    )
    await record_search_document(store, USER, document_for(new, "New plans", "", [], NOW))
    assert stored_threads(backend) == [new, old]
    # Ten days on (the index itself was written since): the old entry is past the window.
    clock[0] = NOW + 10 * DAY
    raw = backend.raw_read(search_index_key(USER))
    cutoff = clock[0] - 30 * DAY
    assert parse_search_index(raw, cutoff=cutoff).threads == [new]
    assert "Old plans" not in json.dumps(await recall(store).call({"query": "plans"}))
    await record_search_document(store, USER, document_for(THREAD, "Today", "", [], clock[0]))
    assert stored_threads(backend) == [THREAD, new]


async def test_no_count_cap_below_retention(store: ObjectStore, backend: Backend) -> None:
    many = threads(600)
    raw = None
    for n, thread in enumerate(many):
        raw = with_documents(raw, [document_for(thread, f"Topic {n}", "Body.", [], NOW)])
    assert raw is not None
    await store.write(search_index_key(USER), raw)
    assert len(stored_threads(backend)) == 600


async def test_forgetting_a_conversation_removes_its_entry(
    store: ObjectStore, backend: Backend
) -> None:
    kept_thread, forgotten = threads(2)
    for thread, title in ((kept_thread, "Hiring plan"), (forgotten, "Offsite in Lisbon")):
        await write_conversation(store, thread, title, "Details.", NOW)
        await record_search_document(store, USER, document_for(thread, title, "Details.", [], NOW))
    assert await forget_conversation(store, USER, forgotten) >= 1
    assert stored_threads(backend) == [kept_thread]
    assert "Offsite" not in json.dumps(await recall(store).call({"query": "offsite Lisbon"}))


async def test_a_history_from_before_the_index_is_filled_in_once_then_one_read_per_search(
    backend: Backend,
) -> None:
    counting = CountingReads(backend.store)
    old = threads(40)
    for n, thread in enumerate(old):
        await write_conversation(
            backend.store, thread, f"Weekly sync {n}", "Status.", NOW - timedelta(hours=n)
        )
    await write_conversation(
        backend.store, old[-1], "Offsite in Lisbon", "Venue booked.", NOW - timedelta(days=20)
    )
    first = await recall(counting).call({"query": "offsite Lisbon"})
    assert "Offsite in Lisbon" in json.dumps(first)
    assert len(stored_threads(backend)) == 40
    assert parse_search_index(backend.raw_read(search_index_key(USER))).complete

    counting.reads = 0
    again = await recall(counting).call({"query": "offsite Lisbon", "limit": 3})
    assert "Offsite in Lisbon" in json.dumps(again)
    # Conversations from before records were kept: each hit's record (absent), then its
    # summary. With a record, one read per hit (bench/recall_hard.py).
    assert counting.reads <= 1 + 2 * 3


async def test_a_long_history_is_filled_in_a_bounded_number_of_reads_per_search(
    backend: Backend,
) -> None:
    counting = CountingReads(backend.store)
    many = threads(MAX_BACKFILL_READS + 30)
    index = [
        SessionEntry(t, f"Topic {n}", NOW - timedelta(minutes=n), DM).to_json()
        for n, t in enumerate(many)
    ]
    await backend.store.write(conversations_index_key(USER), json.dumps(index))
    for n, thread in enumerate(many):
        summary = SessionSummary(f"Topic {n}", "Body.", user_id=USER, updated=NOW)
        await backend.store.write(session_context_key(thread), render_summary(summary))
    await recall(counting).call({"query": "topic"})
    # The index, the conversation index, a batch of summaries and records, the tombstone
    # and the conversation index again, the conversation index for the links, and the
    # hits (each its record, then its summary).
    assert counting.reads <= 2 * MAX_BACKFILL_READS + 6 + 2 * 5
    assert len(stored_threads(backend)) == MAX_BACKFILL_READS
    await recall(counting).call({"query": "topic"})
    assert len(stored_threads(backend)) == len(many)


async def test_a_fill_in_racing_forget_everything_leaves_nothing(
    store: ObjectStore, backend: Backend
) -> None:
    await write_conversation(store, THREAD, "Offsite", "Venue.", NOW)
    # The erasure lands while the summaries are read (its tombstone is later than the
    # search's start): the search's writes are erased again.
    later = datetime.now(UTC) + timedelta(minutes=1)
    await store.write(tombstone_key(USER), json.dumps({"erased_at": later.isoformat()}))
    await recall(store).call({"query": "offsite"})
    assert backend.raw_read(search_index_key(USER)) is None


async def test_a_fill_in_racing_forget_one_conversation_does_not_bring_it_back(
    backend: Backend,
) -> None:
    kept_thread, forgotten = threads(2)
    for thread, title in ((kept_thread, "Hiring plan"), (forgotten, "Offsite in Lisbon")):
        await write_conversation(backend.store, thread, title, "Details.", NOW)
    # The person forgets the offsite conversation just as its summary is read.
    racing = ForgetWhileRead(backend.store, session_context_key(forgotten), forgotten)
    await recall(racing).call({"query": "offsite"})
    assert stored_threads(backend) == [kept_thread]


async def test_storage_down_is_an_error_to_the_model_never_nothing_found(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=1.0)
    await write_conversation(store, THREAD, "Offsite", "Venue.", NOW)
    gcs_proxy.add_rule(search_index_key(USER), status=503)
    with pytest.raises(ToolError) as raised:
        await RecallTool(store, MemoryScope(USER, "1712999999.000001")).call({"query": "x"})
    assert str(raised.value) == COULD_NOT_SEARCH
    await store.close()


class CountingReads(StoreLayer):
    reads = 0

    async def read(self, key: str) -> StoredObject | None:
        self.reads += 1
        return await super().read(key)


class ForgetWhileRead(StoreLayer):
    """The store, with the person forgetting `thread` right after `key` is read (as a
    Home tab click on another instance would)."""

    def __init__(self, inner: ObjectStore, key: str, thread: str) -> None:
        super().__init__(inner)
        self.key, self.thread = key, thread

    async def read(self, key: str) -> StoredObject | None:
        stored = await super().read(key)
        if key == self.key:
            await forget_conversation(self.inner, USER, self.thread)
        return stored


async def test_a_turn_end_indexes_every_message_of_the_transcript_it_is_handed(
    store: ObjectStore, backend: Backend
) -> None:
    # The turn's history holds only the newest exchange; the transcript (the conversation
    # as Orion keeps it) holds a detail said weeks before, and one said before the person
    # asked to be forgotten, which no entry may hold again.
    erased_at = NOW - 30 * DAY
    await store.write(tombstone_key(USER), json.dumps({"erased_at": erased_at.isoformat()}))
    transcript = [
        said("user", "My old locker code hint is the heron.", at=erased_at - DAY),
        said("user", "Let's plan the billing page launch.", at=NOW - 20 * DAY),
        said("user", "Our puppy Biscuit chewed the projector cable.", at=NOW - 20 * DAY),
        said("assistant", "Copy from Dana, ship on Friday.", at=NOW - 20 * DAY),
        said("user", "Is Friday still the launch day?", at=NOW),
    ]
    history = [ThreadMessage("user", "Is Friday still the launch day?", sent_at=NOW.timestamp())]

    async def summarize(previous: object, material: object) -> SummaryDraft:
        return SummaryDraft("Billing page launch", "Ship on Friday.")

    await update_session_summary(
        store,
        user_id=USER,
        thread_ts=THREAD,
        channel=DM,
        history=[*history, ThreadMessage("assistant", "Yes: Friday, with Dana's copy. " * 4)],
        summarize=summarize,
        transcript=transcript,
        now=NOW,
    )
    index = parse_search_index(backend.raw_read(search_index_key(USER)))
    assert index.threads == [THREAD] and index.channel(0) == DM
    assert index.started == [int((NOW - 20 * DAY).timestamp())]
    assert index.postings("biscuit") and index.postings("projector")
    assert not index.postings("heron") and not index.postings("locker")
