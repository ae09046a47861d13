"""Conversations older than the retention window are not brought back, and get deleted;
preferences and notes stay.

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
from app.memory.loader import Scope, load_memories
from app.memory.restore import restore_memory
from app.memory.retention import (
    EXPIRING_PREFIXES,
    ExpiringSessionsStore,
    SessionRetention,
    retention_of,
)
from app.memory.retention_sweep import keep_sweeping, sweep_expired
from app.memory.scopes import (
    global_context_key,
    session_context_key,
    thread_context_key,
    user_preferences_key,
)
from app.services import build_storage
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import CREATE_ONLY, ObjectInfo, ObjectStore, PreconditionFailed, update
from tests.backends import OTHER_THREAD, THREAD, USER, Backend

DAY = timedelta(days=1)
CHANNEL = "D0123ABCD"
SUMMARY = "We compared Postgres and SQLite for the billing service; Postgres won."
OTHER_SUMMARY = "The Q3 budget review: cloud spend is over plan."
PREFERENCES = '{"timezone": "Europe/Berlin"}'
NOTES_KEY = f"users/{USER}/notes.md"
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
    await store.write(user_preferences_key(USER), PREFERENCES)
    await store.write(NOTES_KEY, "Works on the billing service.")
    await store.write(session_context_key(THREAD), SUMMARY)
    await store.write(thread_context_key(CHANNEL, THREAD), '{"channel_id": "C1"}')


# --- not loaded ---------------------------------------------------------------------------


async def test_a_40_day_old_session_summary_is_not_loaded_at_thread_start(
    backend: Backend,
) -> None:
    await seed_person(backend.store)

    loaded = await load_memories(
        viewed(backend, days_later=40), user_id=USER, thread_ts=THREAD, budget_s=5
    )

    assert Scope.SESSION in loaded.missing
    assert set(loaded.found) == {Scope.GLOBAL, Scope.USER}
    restored = await restore_memory(
        viewed(backend, days_later=40),
        user_id=USER,
        thread_ts=THREAD,
        budget_s=5,
        token_budget=2000,
    )
    assert restored.complete and restored.context is not None
    assert SUMMARY not in restored.context and "Europe/Berlin" in restored.context


async def test_a_10_day_old_session_summary_is_loaded(backend: Backend) -> None:
    await seed_person(backend.store)
    loaded = await load_memories(
        viewed(backend, days_later=10), user_id=USER, thread_ts=THREAD, budget_s=5
    )
    assert loaded.contents[Scope.SESSION] == SUMMARY


async def test_by_real_age_on_a_local_directory(local: Backend) -> None:
    await seed_person(local.store)
    await local.store.write(session_context_key(OTHER_THREAD), OTHER_SUMMARY)
    set_age(local, session_context_key(THREAD), 40)
    set_age(local, session_context_key(OTHER_THREAD), 10)
    set_age(local, user_preferences_key(USER), 400)
    store = ExpiringSessionsStore(local.store, SessionRetention(30))

    old = await load_memories(store, user_id=USER, thread_ts=THREAD, budget_s=5)
    recent = await load_memories(store, user_id=USER, thread_ts=OTHER_THREAD, budget_s=5)

    assert Scope.SESSION in old.missing and old.contents[Scope.USER] == PREFERENCES
    assert recent.contents[Scope.SESSION] == OTHER_SUMMARY


async def test_an_old_thread_context_reads_as_absent_and_the_rest_as_always(
    backend: Backend,
) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=40)
    assert await store.read(thread_context_key(CHANNEL, THREAD)) is None
    notes = await store.read(NOTES_KEY)
    assert notes is not None and notes.content == "Works on the billing service."
    assert await store.read(global_context_key()) is not None


# --- what an expired object still is ---------------------------------------------------------


async def test_a_conversation_that_comes_back_starts_afresh(backend: Backend) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=40)
    key = session_context_key(THREAD)

    # Written as if absent (`update` creates only if absent): it replaces the expired one.
    content = await update(store, key, lambda old: f"new summary, built on {old}")
    assert content == "new summary, built on None"
    assert backend.raw_read(key) == content
    # Written just now: today it is not expired, and creating it again is refused as ever.
    today = viewed(backend, days_later=0)
    assert await today.read(key) is not None
    with pytest.raises(PreconditionFailed):
        await today.write(key, "again", if_generation=CREATE_ONLY)


async def test_create_only_still_refuses_a_live_object(backend: Backend) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=10)
    with pytest.raises(PreconditionFailed):
        await store.write(session_context_key(THREAD), "x", if_generation=CREATE_ONLY)
    # Preferences never expire: however old, they are there.
    with pytest.raises(PreconditionFailed):
        await viewed(backend, days_later=4000).write(
            user_preferences_key(USER), "{}", if_generation=CREATE_ONLY
        )
    assert backend.raw_read(session_context_key(THREAD)) == SUMMARY


async def test_listings_still_show_expired_objects_so_forgetting_finds_them(
    backend: Backend,
) -> None:
    await seed_person(backend.store)
    store = viewed(backend, days_later=40)
    assert [obj.key for obj in await store.list("sessions/")] == [session_context_key(THREAD)]
    assert await store.delete(session_context_key(THREAD))
    assert backend.raw_read(session_context_key(THREAD)) is None


# --- deleted ------------------------------------------------------------------------------


async def test_the_sweep_deletes_old_conversations_and_keeps_everything_else(
    local: Backend,
) -> None:
    await seed_person(local.store)
    old_note = f"sessions/{THREAD.replace('.', '-')}/notes.md"
    recent_context = thread_context_key(CHANNEL, OTHER_THREAD)
    await local.store.write(old_note, "a note in the old thread")
    await local.store.write(session_context_key(OTHER_THREAD), OTHER_SUMMARY)
    await local.store.write(recent_context, "{}")
    for key in (session_context_key(THREAD), old_note, thread_context_key(CHANNEL, THREAD)):
        set_age(local, key, 40)
    for key in (session_context_key(OTHER_THREAD), recent_context):
        set_age(local, key, 10)
    for key in (user_preferences_key(USER), NOTES_KEY, global_context_key()):
        set_age(local, key, 400)  # never expire, however old

    deleted = await sweep_expired(local.store, SessionRetention(30))

    assert deleted == {"sessions/": 2, "threads/": 1}
    assert local.raw_names() == sorted(
        [
            global_context_key(),
            session_context_key(OTHER_THREAD),
            recent_context,
            NOTES_KEY,
            user_preferences_key(USER),
        ]
    )


async def test_the_sweep_by_the_clock_on_both_backends(backend: Backend) -> None:
    await seed_person(backend.store)
    await backend.store.write("events/Ev0123456", '{"claimed_by": "x"}')
    await backend.store.write("oauth-states/abc", "{}")

    assert await sweep_expired(backend.store, SessionRetention(30, days_from_now(0.5))) == {}
    # A day on, the day-long records go (the bucket's lifecycle rule's job in GCS).
    deleted = await sweep_expired(backend.store, SessionRetention(30, days_from_now(10)))
    assert deleted == {"events/": 1, "oauth-states/": 1}
    deleted = await sweep_expired(backend.store, SessionRetention(30, days_from_now(40)))

    assert deleted == {"sessions/": 1, "threads/": 1}
    assert backend.raw_names() == sorted(
        [global_context_key(), NOTES_KEY, user_preferences_key(USER)]
    )


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
    set_age(local, session_context_key(THREAD), 40)
    store = WrittenDuringTheSweep(local.store)

    deleted = await sweep_expired(store, SessionRetention(30))  # type: ignore[arg-type]

    assert deleted == {}
    assert local.raw_read(session_context_key(THREAD)) == "written again by a turn"


async def test_sweeping_starts_at_once_and_stops_when_cancelled(local: Backend) -> None:
    await seed_person(local.store)
    set_age(local, session_context_key(THREAD), 40)
    sweeping = asyncio.ensure_future(
        keep_sweeping(local.store, SessionRetention(30), interval_s=3600)
    )
    try:
        for _ in range(1000):  # the first sweep runs as soon as the loop gets to it
            if local.raw_read(session_context_key(THREAD)) is None:
                break
            await asyncio.sleep(0)
        assert local.raw_read(session_context_key(THREAD)) is None
        assert local.raw_read(user_preferences_key(USER)) == PREFERENCES
        assert not sweeping.done(), "it waits for the next sweep"
    finally:
        sweeping.cancel()
        await asyncio.gather(sweeping, return_exceptions=True)
    assert sweeping.cancelled()


def test_the_window_covers_conversations_only() -> None:
    assert EXPIRING_PREFIXES == (
        "sessions/",
        "threads/",
        "people/",
        "conversations/",
        "undo/",
        "channel-records/",
    )
    retention = SessionRetention(30)
    long_ago = datetime(2000, 1, 1, tzinfo=UTC)
    assert retention.expired(session_context_key(THREAD), long_ago)
    assert retention.expired(thread_context_key(CHANNEL, THREAD), long_ago)
    assert not retention.expired(user_preferences_key(USER), long_ago)
    assert not retention.expired(NOTES_KEY, long_ago)
    assert not retention.expired(session_context_key(THREAD), datetime.now(UTC) - 29 * DAY)
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
