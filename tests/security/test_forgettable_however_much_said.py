"""A person is forgettable however much they said, and whatever became of their settings.

Forget everything finds the channel threads holding a member's words in their own home. As
an attacker would: a member who spoke in more channel threads than any list kept (their
oldest thread fell out of a 1,000-entry list), and a member whose settings — which once
listed those threads — cannot be read (cut short). Both forget everything: none of their
words is left in any thread, nor found by a search of the channel, and everyone else's
stay.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from app.learning.channel_memory import after_channel_turn
from app.learning.conversation_record import ConversationOwner, said
from app.learning.conversations import TurnTranscript, read_conversation
from app.learning.erasure import forget_everything, reindex
from app.learning.search_index import parse_search_index
from app.memory.homes import channel, person
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore
from tests.backends import OTHER_USER, THREAD, USER, Backend
from tests.layout import open_conversation

CHANNEL = "C0LAUNCH1"
ROOM = channel(CHANNEL)
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
WORDS = "the pelican mascot needs a bigger budget"
OTHERS = "and the print shop wants CMYK"


async def _speak(
    store: ObjectStore, thread_ts: str, *messages: tuple[str, str], noted: bool = True
) -> None:
    """A channel turn in `thread_ts` keeping `messages` (author, text), as a turn ends
    (`noted` False: with no note of the thread in its authors' homes)."""
    owner = ConversationOwner(messages[0][0], CHANNEL, kind="channel")
    transcript = TurnTranscript(
        store, owner, thread_ts, await open_conversation(store, owner, thread_ts)
    )
    transcript.add(*(said("user", text, at=NOW, user=author) for author, text in messages))
    await transcript.write()
    if noted:
        await after_channel_turn(
            store, CHANNEL, thread_ts, public=True, authors=transcript.authors, since=NOW
        )


async def _assert_none_of_theirs_is_left(store: ObjectStore, thread_ts: str) -> None:
    record = await read_conversation(store, ROOM, thread_ts)
    assert record is not None, "the thread stays the channel's"
    assert [(m.user, m.text) for m in record.messages] == [(OTHER_USER, OTHERS)]
    index = await store.read(ROOM.search_key)
    assert not parse_search_index(index.content if index else None).postings("pelican")


async def test_a_member_who_spoke_in_more_threads_than_a_list_holds_is_forgotten_in_all(
    tmp_path: Path,
) -> None:
    # A directory store: 1,001 channel turns on the emulator would take the test's time.
    store = LocalDirectoryStore(tmp_path / "memories")
    first = "1700000000.000001"
    await _speak(store, first, (USER, WORDS), (OTHER_USER, OTHERS))
    for n in range(1, 1_001):  # a thousand threads more, the newest last (their ends)
        thread_ts = f"{1700000000 + n}.000001"
        await after_channel_turn(store, CHANNEL, thread_ts, public=True, authors={USER}, since=NOW)

    report = await forget_everything(store, USER)

    assert report.deleted["channel_threads"] == 1
    await _assert_none_of_theirs_is_left(store, first)
    assert [o.key for o in await store.list(person(USER).prefix)] == [person(USER).profile_key]


async def test_a_member_whose_settings_cannot_be_read_is_forgotten_in_every_thread(
    store: ObjectStore, backend: Backend
) -> None:
    await _speak(store, THREAD, (USER, WORDS), (OTHER_USER, OTHERS))
    settings = person(USER).settings_key
    # What settings written before kept of a thread (and nothing else noted it), and the
    # object since cut short: it cannot be read.
    older = "1712000000.000100"
    await _speak(store, older, (USER, WORDS), (OTHER_USER, OTHERS), noted=False)
    await store.write(settings, f'{{"said_in": [["{CHANNEL}", "{older}"]], "memory_no')

    report = await forget_everything(store, USER)

    assert report.deleted["channel_threads"] == 2
    for thread_ts in (THREAD, older):
        await _assert_none_of_theirs_is_left(store, thread_ts)
    assert backend.raw_read(settings) is None, "their settings go with the rest"
    assert [o.key for o in await store.list(person(USER).prefix)] == [person(USER).profile_key]


async def test_a_member_who_spoke_in_many_threads_of_one_channel_is_forgotten_in_each(
    store: ObjectStore,
) -> None:
    # Every thread's search entry lives in the channel's one index, which each thread's
    # forgetting rewrites: all at once, they must not give up on each other.
    threads = [f"{1712000000 + n}.000100" for n in range(20)]
    for thread_ts in threads:
        await _speak(store, thread_ts, (USER, WORDS), (OTHER_USER, OTHERS))
        await reindex(store, ROOM, {thread_ts})
    index = await store.read(ROOM.search_key)
    assert parse_search_index(index.content if index else None).postings("pelican")

    report = await forget_everything(store, USER)

    assert report.deleted["channel_threads"] == len(threads)
    for thread_ts in threads:
        await _assert_none_of_theirs_is_left(store, thread_ts)
    index = await store.read(ROOM.search_key)
    assert len(parse_search_index(index.content if index else None)) == len(threads)
