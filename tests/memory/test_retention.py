"""Conversations older than the retention window are not brought back, and get deleted;
preferences, notes, profiles and a channel's memory stay.

On both backends. A GCS object's `updated` time cannot be set, so ages there come from the
retention's clock, moved forward; a local file's age is its modification time, which the
tests set back (as days passing would), so the sweep is tested on real ages too.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.config import StorageSettings
from app.learning.conversation_record import ConversationOwner
from app.learning.opening import open_event
from app.memory.homes import channel, person, preferences_key, workspace_channels_key
from app.memory.loader import Scope, load_memories
from app.memory.retention import ExpiringSessionsStore, SessionRetention, retention_of
from app.memory.retention_sweep import keep_sweeping, sweep_expired
from app.memory.scopes import global_context_key
from app.services import build_storage
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import CREATE_ONLY, ObjectInfo, ObjectStore, PreconditionFailed, update
from tests.backends import OTHER_THREAD, THREAD, USER, Backend
from tests.layout import conversation, profile, summary_in

DAY = timedelta(days=1)
DM = "D0123ABCD"
CHANNEL = "C0LAUNCH1"
SUMMARY = "We compared Postgres and SQLite for the billing service; Postgres won."
OTHER_SUMMARY = "The Q3 budget review: cloud spend is over plan."
PREFERENCES = '{"timezone": "Europe/Berlin"}'
HOME = person(USER)
CONVERSATION = HOME.conversation_key(THREAD)
OTHER_CONVERSATION = HOME.conversation_key(OTHER_THREAD)
NOTES_KEY = f"{HOME.memory_prefix}notes.md"
THREAD_NOTE = f"{HOME.notes_prefix(THREAD)}notes.md"
GLOBAL = "Kestrel Labs ships on Thursdays."


def days_from_now(days: float) -> Callable[[], datetime]:
    return lambda: datetime.now(UTC) + days * DAY


def viewed(backend: Backend, *, days_later: float) -> ExpiringSessionsStore:
    """The backend as Orion sees it, `days_later` days after now."""
    return ExpiringSessionsStore(backend.store, SessionRetention(30, days_from_now(days_later)))


def set_age(backend: Backend, key: str, days: float) -> None:
    """Make a local file `days` old, as if it had been written then."""
    assert backend.directory is not None
    then = (datetime.now(UTC) - days * DAY).timestamp()
    os.utime(backend.directory / key, (then, then))


@pytest.fixture
def local(tmp_path: Path) -> Backend:
    """A local directory alone: a bucket's object times cannot be set back (and in a
    bucket, its lifecycle rule deletes)."""
    directory = tmp_path / "memories"
    return Backend("local", LocalDirectoryStore(directory), directory=directory)


async def seed_person(store: ObjectStore) -> None:
    await store.write(global_context_key(), GLOBAL)
    await store.write(HOME.profile_key, profile(conversations=[(THREAD, "Billing database")]))
    await store.write(preferences_key(USER), PREFERENCES)
    await store.write(NOTES_KEY, "Works on the billing service.")
    await store.write(
        CONVERSATION,
        conversation(USER, THREAD, channel_id=DM, summary=SUMMARY, messages=[("user", "hi")]),
    )


def keys_of(thread_ts: str) -> dict[Scope, str]:
    return {
        Scope.GLOBAL: global_context_key(),
        Scope.USER: preferences_key(USER),
        Scope.CONVERSATION: HOME.conversation_key(thread_ts),
    }


# --- not loaded ---------------------------------------------------------------------------


async def test_a_40_day_old_conversation_is_not_brought_back(backend: Backend) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=40)

    loaded = await load_memories(store, keys_of(THREAD), budget_s=5)
    opening = await open_event(
        store, ConversationOwner(USER, DM), THREAD, budget_s=5, token_budget=2000
    )

    assert Scope.CONVERSATION in loaded.missing
    assert set(loaded.found) == {Scope.GLOBAL, Scope.USER}
    assert opening.complete and opening.remembers and opening.context is not None
    assert SUMMARY not in opening.context and "Europe/Berlin" in opening.context
    assert opening.conversation is not None and opening.conversation.transcript == ()


async def test_a_40_day_old_summary_waiting_in_the_profile_is_not_brought_back(
    backend: Backend,
) -> None:
    """The newest summary waits in the profile's welcome until the conversation's next
    turn: it is as old as the conversation, and expires with it."""
    from app.learning.summary_file import Summary
    from app.learning.welcome import Welcome

    await seed_person(backend.store)
    await backend.store.write(CONVERSATION, conversation(USER, THREAD, channel_id=DM))
    then = datetime.now(UTC)
    waiting = Welcome(THREAD, "Billing database", then, summary=Summary("B", OTHER_SUMMARY, then))
    await backend.store.write(HOME.profile_key, profile(welcome=waiting, at=then))

    later = await open_event(
        viewed(backend, days_later=40),
        ConversationOwner(USER, DM),
        THREAD,
        budget_s=5,
        token_budget=2000,
    )
    today = await open_event(
        viewed(backend, days_later=0),
        ConversationOwner(USER, DM),
        THREAD,
        budget_s=5,
        token_budget=2000,
    )

    assert today.context is not None and OTHER_SUMMARY in today.context
    assert later.context is not None and OTHER_SUMMARY not in later.context


async def test_a_10_day_old_conversation_is_loaded(backend: Backend) -> None:
    await seed_person(backend.store)
    loaded = await load_memories(viewed(backend, days_later=10), keys_of(THREAD), budget_s=5)
    assert summary_in(loaded.content(Scope.CONVERSATION)) == SUMMARY


async def test_by_real_age_on_a_local_directory(local: Backend) -> None:
    await seed_person(local.store)
    await local.store.write(
        OTHER_CONVERSATION, conversation(USER, OTHER_THREAD, channel_id=DM, summary=OTHER_SUMMARY)
    )
    set_age(local, CONVERSATION, 40)
    set_age(local, OTHER_CONVERSATION, 10)
    set_age(local, preferences_key(USER), 400)
    store = ExpiringSessionsStore(local.store, SessionRetention(30))

    old = await load_memories(store, keys_of(THREAD), budget_s=5)
    recent = await load_memories(store, keys_of(OTHER_THREAD), budget_s=5)

    assert Scope.CONVERSATION in old.missing and old.content(Scope.USER) == PREFERENCES
    assert summary_in(recent.content(Scope.CONVERSATION)) == OTHER_SUMMARY


async def test_an_old_conversations_notes_read_as_absent_and_the_rest_as_always(
    backend: Backend,
) -> None:
    await seed_person(backend.store)
    await backend.store.write(THREAD_NOTE, "a note in the old thread")
    store = viewed(backend, days_later=40)
    assert await store.read(THREAD_NOTE) is None
    assert await store.read(CONVERSATION) is None
    notes = await store.read(NOTES_KEY)
    assert notes is not None and notes.content == "Works on the billing service."
    assert await store.read(global_context_key()) is not None
    # The profile is about conversations: unwritten for the window, it goes with them.
    assert await store.read(HOME.profile_key) is None


# --- what an expired object still is ---------------------------------------------------------


async def test_a_conversation_that_comes_back_starts_afresh(backend: Backend) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=40)

    # Written as if absent (`update` creates only if absent): it replaces the expired one.
    stored = await update(store, CONVERSATION, lambda old: f"new conversation, built on {old}")
    content = stored.content
    assert content == "new conversation, built on None"
    assert backend.raw_read(CONVERSATION) == content
    # Written just now: today it is not expired, and creating it again is refused as ever.
    today = viewed(backend, days_later=0)
    assert await today.read(CONVERSATION) is not None
    with pytest.raises(PreconditionFailed):
        await today.write(CONVERSATION, "again", if_generation=CREATE_ONLY)


async def test_create_only_still_refuses_a_live_object(backend: Backend) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=10)
    with pytest.raises(PreconditionFailed):
        await store.write(CONVERSATION, "x", if_generation=CREATE_ONLY)
    # Preferences and settings never expire: however old, they are there.
    await backend.store.write(f"{HOME.prefix}settings.json", "{}")
    for key in (preferences_key(USER), f"{HOME.prefix}settings.json"):
        with pytest.raises(PreconditionFailed):
            await viewed(backend, days_later=4000).write(key, "{}", if_generation=CREATE_ONLY)
    assert summary_in(backend.raw_read(CONVERSATION)) == SUMMARY


async def test_listings_still_show_expired_objects_so_forgetting_finds_them(
    backend: Backend,
) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=40)
    assert [obj.key for obj in await store.list(HOME.conversations_prefix)] == [CONVERSATION]
    assert await store.delete(CONVERSATION)
    assert backend.raw_read(CONVERSATION) is None


# --- deleted ------------------------------------------------------------------------------


async def test_the_sweep_deletes_old_conversations_and_keeps_everything_else(
    local: Backend,
) -> None:
    await seed_person(local.store)
    undo = HOME.undo_key("0" * 32)
    room = channel(CHANNEL)
    old_channel_thread = room.conversation_key(THREAD)
    channel_memory = f"{room.memory_prefix}decisions.md"
    archived = f"{room.archived_prefix}decisions.md"
    await local.store.write(THREAD_NOTE, "a note in the old thread")
    await local.store.write(undo, "{}")
    await local.store.write(
        OTHER_CONVERSATION, conversation(USER, OTHER_THREAD, channel_id=DM, summary=OTHER_SUMMARY)
    )
    await local.store.write(
        old_channel_thread, conversation(USER, THREAD, channel_id=CHANNEL, in_channel=True)
    )
    await local.store.write(room.profile_key, profile())
    await local.store.write(channel_memory, "We ship on Thursdays.")
    await local.store.write(archived, "We shipped on Fridays.")
    await local.store.write(HOME.search_key, "{}")
    await local.store.write(workspace_channels_key(), "{}")
    for key in (CONVERSATION, THREAD_NOTE, undo, old_channel_thread, archived):
        set_age(local, key, 40)
    set_age(local, OTHER_CONVERSATION, 10)
    # The person's profile and index, rewritten by every turn end: kept while it goes on.
    set_age(local, HOME.profile_key, 10)
    set_age(local, HOME.search_key, 10)
    kept = [
        global_context_key(),
        HOME.profile_key,
        preferences_key(USER),
        NOTES_KEY,
        HOME.search_key,
        room.profile_key,
        channel_memory,
        workspace_channels_key(),
    ]
    for key in kept:
        if key not in (HOME.profile_key, HOME.search_key):
            set_age(local, key, 400)  # never expire, however old

    deleted = await sweep_expired(local.store, SessionRetention(30))

    assert deleted == {"people/": 3, "channels/": 2}
    assert local.raw_names() == sorted([*kept, OTHER_CONVERSATION])


async def test_the_sweep_by_the_clock_on_both_backends(backend: Backend) -> None:
    await seed_person(backend.store)
    await backend.store.write("events/Ev0123456", '{"claimed_by": "x"}')
    await backend.store.write("oauth-states/abc", "{}")

    assert await sweep_expired(backend.store, SessionRetention(30, days_from_now(0.5))) == {}
    # A day on, the day-long records go (the bucket's lifecycle rule's job in GCS).
    deleted = await sweep_expired(backend.store, SessionRetention(30, days_from_now(10)))
    assert deleted == {"events/": 1, "oauth-states/": 1}
    deleted = await sweep_expired(backend.store, SessionRetention(30, days_from_now(40)))

    assert deleted == {"people/": 2}  # the conversation, and the profile about it
    assert backend.raw_names() == sorted([global_context_key(), NOTES_KEY, preferences_key(USER)])


class WrittenDuringTheSweep:
    """A store in which a turn rewrites every object right after the sweep listed it."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        listing = await self.inner.list(prefix)
        for obj in listing:
            await self.inner.write(obj.key, "written again by a turn")
        return listing


async def test_the_sweep_keeps_a_conversation_written_again_meanwhile(local: Backend) -> None:
    await seed_person(local.store)
    set_age(local, CONVERSATION, 40)
    store = WrittenDuringTheSweep(local.store)

    deleted = await sweep_expired(store, SessionRetention(30))  # type: ignore[arg-type]

    assert deleted == {}
    assert local.raw_read(CONVERSATION) == "written again by a turn"


async def test_sweeping_starts_at_once_and_stops_when_cancelled(local: Backend) -> None:
    await seed_person(local.store)
    set_age(local, CONVERSATION, 40)
    sweeping = asyncio.ensure_future(
        keep_sweeping(local.store, SessionRetention(30), interval_s=3600)
    )
    try:
        for _ in range(1000):  # the first sweep runs as soon as the loop gets to it
            if local.raw_read(CONVERSATION) is None:
                break
            await asyncio.sleep(0)
        assert local.raw_read(CONVERSATION) is None
        assert local.raw_read(preferences_key(USER)) == PREFERENCES
        assert not sweeping.done(), "it waits for the next sweep"
    finally:
        sweeping.cancel()
        await asyncio.gather(sweeping, return_exceptions=True)
    assert sweeping.cancelled()


@pytest.mark.parametrize(
    ("key", "expires"),
    [
        (CONVERSATION, True),
        (THREAD_NOTE, True),
        (HOME.undo_key("0" * 32), True),
        (channel(CHANNEL).conversation_key(THREAD), True),
        (f"{channel(CHANNEL).archived_prefix}decisions.md", True),
        (f"people/teams/-/T0123ABC/{USER}/conversations/1712345678-123456.json", True),
        (HOME.profile_key, True),
        (preferences_key(USER), False),
        (NOTES_KEY, False),
        (HOME.search_key, True),
        (f"{channel(CHANNEL).memory_prefix}decisions.md", False),
        (channel(CHANNEL).profile_key, False),
        (workspace_channels_key(), False),
        (global_context_key(), False),
        # A person's note named like a conversation is still a note.
        (f"{HOME.memory_prefix}conversations/1712345678-123456.json", False),
    ],
)
def test_the_window_covers_conversations_only(key: str, expires: bool) -> None:
    retention = SessionRetention(30)
    long_ago = datetime(2000, 1, 1, tzinfo=UTC)
    assert retention.expired(key, long_ago) is expires
    assert not retention.expired(key, datetime.now(UTC) - 29 * DAY)


def test_the_window_is_at_least_a_day() -> None:
    with pytest.raises(ValueError):
        SessionRetention(0)


@pytest.mark.parametrize("bucket", [None, "orion-test-bucket"])
def test_readers_of_orions_records_find_the_window_of_the_store_as_composed(
    bucket: str | None, tmp_path: Path
) -> None:
    # Orion's records skip expired entries by the window the store enforces: whatever layers
    # the composition root puts around it (the breaker for a bucket), readers must find it.
    settings = StorageSettings(
        gcs_memories_bucket=bucket, memory_dir=tmp_path, memory_session_retention_days=12
    )
    retention = retention_of(build_storage(settings).store)
    assert retention is not None and retention.days == 12
