"""Attacker's review of the per-person search index (people/{id}/search.json): a
conversation the person forgot must not come back where they cannot see or forget it.
Runs on both backends (the GCS emulator enforces the generation preconditions)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from app.learning.session_index import IndexedToday, SessionEntry, read_index, record_session

from app.agent.history import ThreadMessage
from app.learning.erasure import forget_conversation, tombstone_key
from app.learning.recall import RecallTool
from app.learning.search_index import parse_search_index
from app.learning.session_summary import update_session_summary
from app.learning.summary_file import SessionSummary, SummaryDraft, render_summary
from app.memory.scopes import (
    MemoryScope,
    conversations_index_key,
    search_index_key,
    session_context_key,
)
from app.storage.gcs import GcsObjectStore
from app.storage.store import ObjectStore
from tests.backends import THREAD, USER, Backend
from tests.fakes.fault_proxy import FaultyProxy

NOW = datetime.now(UTC).replace(microsecond=0)
ELSEWHERE = "1712999999.000001"  # the thread recall is asked from


async def _summarize(previous: object, material: object) -> SummaryDraft:
    return SummaryDraft("Salary negotiation", "Asked for a raise; the target is 95k.")


async def _turn_end(store: ObjectStore, indexed: IndexedToday, words: str) -> None:
    history = [
        ThreadMessage("user", f"Help me prepare my salary negotiation. {words}"),
        ThreadMessage("assistant", "Aim for 95k and lead with the projects you shipped."),
    ]
    await update_session_summary(
        store,
        user_id=USER,
        thread_ts=THREAD,
        channel="D0123ABCD",
        history=history,
        summarize=_summarize,
        indexed=indexed,
        now=NOW,
    )


async def test_a_forgotten_conversation_continued_the_same_day_stays_forgettable(
    store: ObjectStore, backend: Backend
) -> None:
    # One instance's turn ends remember the conversation index entries they wrote today.
    indexed = IndexedToday()
    await _turn_end(store, indexed, "First try.")
    assert await forget_conversation(store, USER, THREAD) > 0  # Home tab: Forget

    await _turn_end(store, indexed, "Second try.")  # the person writes in that thread again

    searchable = {*parse_search_index(backend.raw_read(search_index_key(USER))).threads}
    listed = {e.thread_ts for e in await read_index(store, USER)}
    assert searchable <= listed, "recall finds a conversation the Home tab does not list"
    # So the person can forget it again, and then recall finds nothing.
    assert await forget_conversation(store, USER, THREAD) > 0
    found = await RecallTool(store, MemoryScope(USER, ELSEWHERE)).call({"query": "salary"})
    assert "Salary negotiation" not in found


async def test_a_forget_cut_short_by_storage_can_be_retried_until_its_search_entry_goes(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=1.0)
    await _turn_end(store, IndexedToday(), "First try.")
    # Storage refuses the search index while the person clicks Forget: the click fails…
    gcs_proxy.add_rule(search_index_key(USER), status=503)
    with pytest.raises(Exception):  # noqa: B017 - whatever the storage client raises
        await forget_conversation(store, USER, THREAD)
    gcs_proxy.clear_rules()

    await forget_conversation(store, USER, THREAD)  # …and they click again

    stored = await store.read(search_index_key(USER))
    left = parse_search_index(stored.content if stored else None).threads
    assert left == [], "the forgotten words stay in the search index"
    await store.close()


async def test_a_turn_end_whose_conversation_index_write_fails_makes_no_search_entry(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=1.0)
    gcs_proxy.add_rule(conversations_index_key(USER), status=503)
    with pytest.raises(Exception):  # noqa: B017 - the caller logs whatever storage raised
        await _turn_end(store, IndexedToday(), "First try.")
    gcs_proxy.clear_rules()

    # Recall may not find what the Home tab does not list (and so cannot forget).
    stored = await store.read(search_index_key(USER))
    left = parse_search_index(stored.content if stored else None).threads
    assert left == []
    await store.close()


async def test_a_first_search_while_an_erasure_is_under_way_indexes_nothing_erased(
    store: ObjectStore, backend: Backend
) -> None:
    # Months of history from before the search index: a summary and its index entry.
    earlier = NOW - timedelta(days=3)
    summary = SessionSummary("Salary negotiation", "Target 95k.", user_id=USER, updated=earlier)
    await store.write(session_context_key(THREAD), render_summary(summary))
    await record_session(store, USER, SessionEntry(THREAD, "Salary negotiation", earlier, "D1"))
    # The person pressed Forget everything a moment ago: its tombstone is down, its
    # deletions (records last) have not reached these objects yet, and the person has
    # already asked something in a new thread, whose search fills the index in.
    erased_at = datetime.now(UTC)
    await store.write(tombstone_key(USER), json.dumps({"erased_at": erased_at.isoformat()}))

    await RecallTool(store, MemoryScope(USER, ELSEWHERE)).call({"query": "salary"})

    # The erasure's listing of the person's records came before this object existed: what
    # it holds would outlive the erasure.
    written = parse_search_index(backend.raw_read(search_index_key(USER))).threads
    assert written == []
