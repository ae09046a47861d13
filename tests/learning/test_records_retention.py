"""Retention removes everything about an expired conversation from Orion's records: its
entry and title in the person's index, the welcome back to it, and the thread a preference
was learned in — in what is read, in what is written, and in the store itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.learning.memory_inventory import take_inventory
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.learning.session_index import SessionEntry, read_index, record_session
from app.learning.welcome import Welcome, save_welcome
from app.memory.retention import ExpiringSessionsStore, SessionRetention
from app.memory.retention_sweep import sweep_expired
from app.memory.scopes import (
    conversations_index_key,
    user_preferences_key,
    welcome_key,
)
from tests.backends import OTHER_THREAD, THREAD, USER, Backend

DAY = timedelta(days=1)
DM = "D0123ABCD"


def days_later(backend: Backend, days: float) -> ExpiringSessionsStore:
    """The backend as Orion sees it, `days` days after now."""
    return ExpiringSessionsStore(
        backend.store, SessionRetention(30, lambda: datetime.now(UTC) + days * DAY)
    )


async def test_an_expired_entry_is_neither_read_nor_written_back(backend: Backend) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    store = days_later(backend, 0)
    await record_session(store, USER, SessionEntry(THREAD, "Old plans", now - 31 * DAY, DM))
    await record_session(store, USER, SessionEntry(OTHER_THREAD, "New plans", now, DM))

    assert [e.title for e in await read_index(store, USER)] == ["New plans"]
    assert [e.title for e in await read_index(store, USER, expired_too=True)] == ["New plans"]
    assert "Old plans" not in (backend.raw_read(conversations_index_key(USER)) or "")


async def test_records_older_than_the_window_read_as_gone_and_the_sweep_deletes_them(
    backend: Backend,
) -> None:
    now = datetime.now(UTC)
    store = days_later(backend, 0)
    await record_session(store, USER, SessionEntry(THREAD, "Plans", now, DM))
    await save_welcome(store, USER, Welcome(THREAD, "Plans", now, greeting="Welcome back!"))
    later = days_later(backend, 31)

    assert await read_index(later, USER) == []
    assert await later.read(welcome_key(USER)) is None
    await sweep_expired(backend.store, later.retention)
    assert backend.raw_read(conversations_index_key(USER)) is None
    assert backend.raw_read(welcome_key(USER)) is None


async def test_a_preference_keeps_its_value_but_not_its_expired_thread(backend: Backend) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    store = days_later(backend, 0)
    name = detect_preferences("Call me Sam.")
    await save_preferences(store, USER, name, channel=DM, thread_ts=THREAD, now=now - 40 * DAY)

    [shown] = (await take_inventory(store, USER)).preferences
    assert shown.value == "Sam" and shown.learned is not None
    assert (shown.learned.channel, shown.learned.thread_ts) == (None, None), "no link to it"

    # The next preference written drops the expired thread from the file itself.
    language = detect_preferences("Please answer in French.")
    await save_preferences(store, USER, language, channel=DM, thread_ts=OTHER_THREAD, now=now)
    stored = backend.raw_read(user_preferences_key(USER)) or ""
    assert THREAD not in stored and OTHER_THREAD in stored and "Sam" in stored
