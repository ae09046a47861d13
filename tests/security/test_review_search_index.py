"""Attacker's review of the per-person search index (`people/{id}/search.json`): a
conversation the person forgot must not come back where they cannot see or forget it.
Each turn end writes the conversation's search entry and then settles the person's
profile (its entry on the Home tab) with their erasure guard. Runs on both backends (the
GCS emulator enforces the generation preconditions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.agent.history import ThreadMessage
from app.learning.erasure import forget_conversation
from app.learning.guard import Guard
from app.learning.profile import Profile
from app.learning.recall import RecallTool
from app.learning.search_index import document_for, parse_search_index, record_search_document
from app.learning.session_summary import learn_from_turn
from app.learning.summary_file import SummaryDraft
from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.storage.gcs import GcsObjectStore
from app.storage.store import ObjectStore
from tests.backends import THREAD, USER, Backend
from tests.fakes.fault_proxy import FaultyProxy
from tests.layout import conversation

NOW = datetime.now(UTC).replace(microsecond=0)
ELSEWHERE = "1712999999.000001"  # the thread recall is asked from
HOME = person(USER)


async def _summarize(previous: object, material: object) -> SummaryDraft:
    return SummaryDraft("Salary negotiation", "Asked for a raise; the target is 95k.")


async def _turn_end(store: ObjectStore, words: str) -> None:
    """A turn in THREAD, from its start (the person's profile read) to its end: the
    transcript written, then the summary, search entry and profile."""
    guard = await Guard.reading(store, HOME)
    question = f"Help me prepare my salary negotiation. {words}"
    answer = "Aim for 95k and lead with the projects you shipped."
    await guard.store.write(
        HOME.conversation_key(THREAD),
        conversation(USER, THREAD, channel_id="D0123ABCD", messages=[("user", question)]),
    )
    await learn_from_turn(
        guard,
        thread_ts=THREAD,
        channel="D0123ABCD",
        history=[ThreadMessage("user", question), ThreadMessage("assistant", answer)],
        previous=None,
        summarize=_summarize,
        now=NOW,
    )


def searchable(backend: Backend) -> set[str]:
    return {*parse_search_index(backend.raw_read(HOME.search_key)).threads}


def listed(backend: Backend) -> set[str]:
    return {e.thread_ts for e in Profile.parse(backend.raw_read(HOME.profile_key)).conversations}


async def recalled(store: ObjectStore) -> str:
    found = await RecallTool(store, MemoryScope(USER, ELSEWHERE)).call({"query": "salary"})
    return found if isinstance(found, str) else str(found)


async def test_a_forgotten_conversation_continued_the_same_day_stays_forgettable(
    store: ObjectStore, backend: Backend
) -> None:
    await _turn_end(store, "First try.")
    assert await forget_conversation(store, USER, THREAD) > 0  # Home tab: Forget

    await _turn_end(store, "Second try.")  # the person writes in that thread again

    assert searchable(backend) <= listed(backend), (
        "recall finds a conversation the Home tab does not list"
    )
    # So the person can forget it again, and then recall finds nothing.
    assert await forget_conversation(store, USER, THREAD) > 0
    assert "Salary negotiation" not in await recalled(store)


async def test_a_forget_cut_short_by_storage_can_be_retried_until_its_search_entry_goes(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=1.0)
    await _turn_end(store, "First try.")
    # Storage refuses the search index while the person clicks Forget: the click fails…
    gcs_proxy.add_rule(HOME.search_key, status=503)
    with pytest.raises(Exception):  # noqa: B017 - whatever the storage client raises
        await forget_conversation(store, USER, THREAD)
    gcs_proxy.clear_rules()

    await forget_conversation(store, USER, THREAD)  # …and they click again

    stored = await store.read(HOME.search_key)
    left = parse_search_index(stored.content if stored else None).threads
    assert left == [], "the forgotten words stay in the search index"
    await store.close()


async def test_a_turn_end_whose_profile_write_fails_leaves_the_conversation_forgettable(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=1.0)
    # The turn end's settle (its one write of the profile, over the version the turn
    # read) fails: the search entry was written before it, and the Home tab does not list
    # the conversation yet.
    generation = await store.write(HOME.profile_key, Profile().render())
    gcs_proxy.add_rule(f"ifGenerationMatch={generation}", status=503, method="POST")
    with pytest.raises(Exception):  # noqa: B017 - the caller logs whatever storage raised
        await _turn_end(store, "First try.")
    gcs_proxy.clear_rules()

    # The conversation is still the person's to forget (the forget tool names its
    # thread), and forgetting it takes its search entry too.
    assert await forget_conversation(store, USER, THREAD) > 0
    stored = await store.read(HOME.search_key)
    assert parse_search_index(stored.content if stored else None).threads == []
    assert "Salary negotiation" not in await recalled(store)
    await store.close()


async def test_a_search_while_an_erasure_is_under_way_writes_nothing(
    store: ObjectStore, backend: Backend
) -> None:
    # An earlier conversation, indexed.
    earlier = NOW - timedelta(days=3)
    await store.write(
        HOME.conversation_key(THREAD),
        conversation(
            USER,
            THREAD,
            title="Salary negotiation",
            summary="Target 95k.",
            messages=[("user", "salary")],
            at=earlier,
        ),
    )
    document = document_for(THREAD, "Salary negotiation", "Target 95k.", [], earlier)
    await record_search_document(store, HOME, document)
    # The person pressed Forget everything a moment ago: their profile is the erasure's
    # mark, and its deletions have not reached these objects yet; meanwhile they ask
    # something in a new thread, which searches.
    await store.write(HOME.profile_key, Profile(erased_at=datetime.now(UTC)).render())
    before = {key: backend.raw_read(key) for key in (HOME.search_key, HOME.profile_key)}

    await recalled(store)

    # A search only reads: nothing it could write would be missed by the erasure's listing.
    assert {key: backend.raw_read(key) for key in before} == before
    listing = await store.list(HOME.prefix)
    assert sorted(o.key for o in listing) == sorted(
        [HOME.conversation_key(THREAD), HOME.search_key, HOME.profile_key]
    )
