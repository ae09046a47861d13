"""Retention removes everything about an expired conversation from what Orion reads: its
entry and title in the person's profile, its object (transcript and summary), the welcome
back to it, and the thread a preference was learned in — in what is read, in what is
written, and (the conversation's own object) in the store itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.learning.guard import Guard
from app.learning.memory_inventory import take_inventory
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.learning.profile import ConversationEntry
from app.learning.summary_file import Summary
from app.learning.welcome import Welcome, with_welcome
from app.memory.homes import person, preferences_key
from app.memory.retention import ExpiringSessionsStore, SessionRetention
from app.memory.retention_sweep import sweep_expired
from tests.backends import OTHER_THREAD, THREAD, USER, Backend
from tests.layout import conversation

DAY = timedelta(days=1)
DM = "D0123ABCD"
HOME = person(USER)


def days_later(backend: Backend, days: float) -> ExpiringSessionsStore:
    """The backend as Orion sees it, `days` days after now."""
    return ExpiringSessionsStore(
        backend.store, SessionRetention(30, lambda: datetime.now(UTC) + days * DAY)
    )


async def test_an_expired_entry_is_neither_read_nor_written_back(backend: Backend) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    store = days_later(backend, 0)
    for thread, title, at in [(THREAD, "Old plans", now - 31 * DAY), (OTHER_THREAD, "New", now)]:
        entry = ConversationEntry(thread, title, at, DM)
        await (await Guard.reading(store, HOME)).settle(lambda p, e=entry: p.with_conversation(e))

    await store.write(HOME.conversation_key(OTHER_THREAD), conversation(USER, OTHER_THREAD))
    inventory = await take_inventory(store, USER)
    assert [c.title for c in inventory.conversations] == ["New"]
    assert "Old plans" not in (backend.raw_read(HOME.profile_key) or "")


async def test_an_expired_conversation_reads_as_gone_and_the_sweep_deletes_it(
    backend: Backend,
) -> None:
    now = datetime.now(UTC)
    store = days_later(backend, 0)
    await store.write(HOME.conversation_key(THREAD), conversation(USER, THREAD, summary="Plans."))
    welcome = Welcome(
        THREAD, "Plans", now, greeting="Welcome back!", summary=Summary("Plans", "Plans.", now)
    )
    entry = ConversationEntry(THREAD, "Plans", now, DM)
    await (await Guard.reading(store, HOME)).settle(
        lambda p: with_welcome(p.with_conversation(entry), welcome)
    )
    later = days_later(backend, 31)

    inventory = await take_inventory(later, USER)
    assert inventory.conversations == [] and inventory.conversations_total == 0
    assert await later.read(HOME.conversation_key(THREAD)) is None
    # The profile (its welcome and the summary waiting in it) went with the conversation.
    assert await later.read(HOME.profile_key) is None
    await sweep_expired(backend.store, later.retention)
    assert backend.raw_read(HOME.conversation_key(THREAD)) is None
    assert backend.raw_read(HOME.profile_key) is None


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
    stored = backend.raw_read(preferences_key(USER)) or ""
    assert THREAD not in stored and OTHER_THREAD in stored and "Sam" in stored
