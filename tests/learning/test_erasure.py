"""Forgetting a person: every object holding their content goes, nobody else's does, and a
turn finishing meanwhile cannot write them back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.learning.conversation_record import ConversationOwner, said
from app.learning.conversations import (
    TurnTranscript,
    begin_conversation,
    open_conversation,
    read_conversation,
)
from app.learning.erasure import (
    erased_since,
    forget_again_if_erased,
    forget_conversation,
    forget_everything,
    forget_note,
    forget_preference,
)
from app.learning.person_settings import choose_memory_notes
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.learning.session_index import SessionEntry, read_index, record_session
from app.learning.summary_file import SessionSummary, render_summary
from app.learning.undo import save_undo_record
from app.learning.welcome import Welcome, parse_welcome, save_welcome
from app.memory.change_log import MemoryChange
from app.memory.key_prefixes import KEY_PREFIXES
from app.memory.scopes import (
    conversation_record_key,
    session_context_key,
    thread_context_key,
    undo_markers_prefix,
    user_preferences_key,
    welcome_key,
)
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend

DM, OTHER_DM = "D0123ABCD", "D0999ZZZZ"
UNINDEXED_THREAD = "1712345800.000002"  # opened, never summarised: only its context exists
SHORT_THREAD = "1712345900.000003"  # "hi" and "hello": a record and its marker, nothing else
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


async def _seed_person(store: ObjectStore, user: str, dm: str, thread: str) -> None:
    await save_preferences(store, user, detect_preferences("Call me Sam. Answer in French."))
    await store.write(f"users/{user}/notes/project.md", "Working on the Q3 budget.\n")
    summary = SessionSummary("Q3 budget", f"{user} reviewed the budget.", user_id=user)
    await store.write(session_context_key(thread), render_summary(summary))
    await store.write(f"sessions/{thread.replace('.', '-')}/notes.md", "thread note\n")
    await record_session(store, user, SessionEntry(thread, "Q3 budget", NOW, dm))
    context = {"memory": f"preferences of {user}: French"}
    await store.write(thread_context_key(dm, thread), json.dumps(context))
    # An answer's undo record (the old content of what it changed), and their settings.
    change = MemoryChange(f"users/{user}/notes/project.md", "Q2 budget.\n", None, 7)
    lines = ["Updated: notes/project.md"]
    await save_undo_record(store, user, [change], lines, created_at=NOW, thread_ts=thread)
    await choose_memory_notes(store, user, shown=False)
    await _converse(store, user, dm, thread, f"{user} asked about the Q3 budget, in French.")


async def _converse(store: ObjectStore, user: str, dm: str, thread: str, text: str) -> None:
    """The conversation's record, as a turn leaves it: its owner and one exchange."""
    owner = ConversationOwner(user, dm)
    assert await begin_conversation(store, owner, thread, started=NOW)
    transcript = TurnTranscript(store, owner, thread, await open_conversation(store, owner, thread))
    transcript.add(said("user", text, at=NOW), said("assistant", "Noted.", at=NOW))
    await transcript.written()


def _holding(backend: Backend, needle: str) -> list[str]:
    return [
        name
        for name in backend.raw_names()
        if needle in name or needle in (backend.raw_read(name) or "")
    ]


async def test_forgetting_everything_leaves_nothing_of_the_person_and_all_of_the_others(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    await store.write(thread_context_key(DM, UNINDEXED_THREAD), json.dumps({"memory": USER}))
    await _converse(store, USER, DM, SHORT_THREAD, "hi")
    await _seed_person(store, OTHER_USER, OTHER_DM, OTHER_THREAD)
    others_before = {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)}
    # Something of the person under every prefix that holds people's content: a prefix
    # added to the list without being taught to erasure fails here.
    personal = {kind.prefix for kind in KEY_PREFIXES if kind.personal}
    assert {name.split("/")[0] + "/" for name in _holding(backend, USER)} == personal

    report = await forget_everything(store, USER, dm_channels=(DM,), now=NOW)

    assert _holding(backend, USER) == [], "no object names or holds the person"
    assert set(_holding(backend, "French")) <= set(others_before), "no copy left elsewhere"
    assert {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)} == (
        others_before
    ), "another person's memory is untouched"
    assert report.deleted == {
        "person": 2,
        "sessions": 2,
        "thread_contexts": 2,
        "undo_records": 1,
        "settings": 1,
        "conversations": 2,  # the records of THREAD and SHORT_THREAD (found by its marker)
        # The conversation index, the undo record's marker, the two conversations' markers.
        "records": 4,
    }
    assert await erased_since(store, USER, NOW)
    assert not await erased_since(store, OTHER_USER, NOW)


async def test_a_turn_that_wrote_after_the_erasure_began_erases_its_writes(
    store: ObjectStore, backend: Backend
) -> None:
    turn_began = NOW - timedelta(seconds=5)
    await forget_everything(store, USER, dm_channels=(DM,), now=NOW)
    # The turn's end-of-turn writes land after the erasure's deletions...
    await _seed_person(store, USER, DM, THREAD)
    # ...and its check after writing finds the tombstone and takes them back.
    assert await forget_again_if_erased(store, USER, turn_began, dm_channels=(DM,))
    assert _holding(backend, USER) == []


async def test_a_turn_that_began_after_the_erasure_keeps_what_it_writes(
    store: ObjectStore, backend: Backend
) -> None:
    await forget_everything(store, USER, dm_channels=(DM,), now=NOW)
    await _seed_person(store, USER, DM, THREAD)
    assert not await forget_again_if_erased(store, USER, NOW + timedelta(seconds=2))
    assert _holding(backend, USER), "a new conversation after forgetting is remembered"


async def test_forgetting_one_conversation_or_note_leaves_the_rest(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    await record_session(store, USER, SessionEntry(OTHER_THREAD, "Offsite", NOW, DM))
    await store.write(session_context_key(OTHER_THREAD), "# Offsite\n\nPlanning.\n")

    # The summary, its note, its saved context, and its transcript (emptied).
    assert await forget_conversation(store, USER, THREAD) == 4
    assert [e.thread_ts for e in await read_index(store, USER)] == [OTHER_THREAD]
    record = await read_conversation(store, THREAD)
    assert record is not None and record.owner.user == USER and record.messages == ()
    assert backend.raw_read(session_context_key(OTHER_THREAD)) is not None
    assert await forget_note(store, USER, f"users/{USER}/notes/project.md")
    assert backend.raw_read(f"users/{USER}/notes/project.md") is None
    assert backend.raw_read(f"users/{USER}/preferences.json") is not None


async def test_a_note_of_someone_else_cannot_be_forgotten_through_another_person(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, OTHER_USER, OTHER_DM, OTHER_THREAD)
    for key in (f"users/{OTHER_USER}/notes/project.md", f"users/{USER}/../{OTHER_USER}/x"):
        try:
            await forget_note(store, USER, key)
        except ValueError:
            continue
        raise AssertionError(f"{key} was accepted")
    assert backend.raw_read(f"users/{OTHER_USER}/notes/project.md") is not None


async def test_a_thread_listed_where_the_person_can_write_is_not_theirs_to_forget(
    store: ObjectStore, backend: Backend
) -> None:
    # The person's memory directory is Claude's to write: naming another person's thread
    # there (where the index used to live) must not let anyone forget that person's memory.
    await _seed_person(store, OTHER_USER, OTHER_DM, OTHER_THREAD)
    forged = [SessionEntry(OTHER_THREAD, "Not mine", NOW, OTHER_DM).to_json()]
    await store.write(f"users/{USER}/sessions.json", json.dumps(forged))
    others_before = {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)}

    assert await forget_conversation(store, USER, OTHER_THREAD) == 0
    await forget_everything(store, USER, dm_channels=(DM,), now=NOW)
    assert {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)} == (
        others_before
    )
    assert backend.raw_read(session_context_key(OTHER_THREAD)) is not None
    assert backend.raw_read(thread_context_key(OTHER_DM, OTHER_THREAD)) is not None


async def test_every_conversation_is_found_however_many_and_whatever_the_person_deleted(
    store: ObjectStore, backend: Backend
) -> None:
    # 250 conversations (the index used to keep 200), and the person had Claude delete their
    # whole memory directory first: Orion's own index still finds every summary.
    threads = [f"1712340{n:03d}.000001" for n in range(250)]
    for n, thread in enumerate(threads):
        summary = SessionSummary(f"Topic {n}", f"{USER} talked about topic {n}.", user_id=USER)
        await store.write(session_context_key(thread), render_summary(summary))
        await record_session(store, USER, SessionEntry(thread, f"Topic {n}", NOW, DM))
    for obj in await store.list(f"users/{USER}/"):
        await store.delete(obj.key)
    assert len(await read_index(store, USER)) == 250

    report = await forget_everything(store, USER, now=NOW)

    assert report.deleted["sessions"] == 250
    assert _holding(backend, USER) == []


async def test_a_thread_whose_record_names_someone_else_is_theirs_whatever_points_at_it(
    store: ObjectStore, backend: Backend
) -> None:
    # The other person's conversation, with its record; then what a forged event could have
    # left among this person's things before records were kept: an index entry and a
    # saved context in their own DM, both naming the other's thread.
    await _seed_person(store, OTHER_USER, OTHER_DM, OTHER_THREAD)
    await record_session(store, USER, SessionEntry(OTHER_THREAD, "Not mine", NOW, DM))
    await store.write(thread_context_key(DM, OTHER_THREAD), json.dumps({"channel_id": DM}))
    others_before = {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)}

    assert await forget_conversation(store, USER, OTHER_THREAD) == 0
    await forget_everything(store, USER, dm_channels=(DM,), now=NOW)

    assert {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)} == (
        others_before
    )
    assert backend.raw_read(conversation_record_key(OTHER_THREAD)) is not None
    assert backend.raw_read(session_context_key(OTHER_THREAD)) is not None
    # What was in this person's own DM goes: it was theirs.
    assert backend.raw_read(thread_context_key(DM, OTHER_THREAD)) is None


async def test_forgetting_a_conversation_drops_the_welcome_back_to_it_only(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    await save_welcome(store, USER, Welcome(OTHER_THREAD, "Offsite", NOW, greeting="Hi Sam!"))
    await forget_conversation(store, USER, THREAD)
    assert parse_welcome(backend.raw_read(welcome_key(USER))) is not None, "about another one"

    await save_welcome(store, USER, Welcome(THREAD, "Q3 budget", NOW, greeting="Hi Sam!"))
    await forget_conversation(store, USER, THREAD)
    assert backend.raw_read(welcome_key(USER)) is None


async def test_forgetting_a_preference_takes_its_old_values_and_the_welcome_with_it(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    # An answer that changed the name: its undo record holds the file with the old one.
    before = backend.raw_read(user_preferences_key(USER))
    assert before is not None and "Sam" in before
    await save_welcome(store, USER, Welcome(THREAD, "Q3 budget", NOW, greeting="Hi Sam!"))
    change = MemoryChange(user_preferences_key(USER), before, None, 3)
    await save_undo_record(store, USER, [change], ["Updated: name"], created_at=NOW)
    undo_before = len(await store.list(undo_markers_prefix(USER)))

    assert await forget_preference(store, USER, "name")

    assert "Sam" not in (backend.raw_read(user_preferences_key(USER)) or "")
    assert [name for name in _holding(backend, "Sam") if USER in name] == []
    assert backend.raw_read(welcome_key(USER)) is None
    # The other answer's record (a note's) stays: it holds nothing of the preference.
    assert len(await store.list(undo_markers_prefix(USER))) == undo_before - 1
