"""Forgetting a person: everything in their home goes but the mark of when, their words
leave the channel threads they spoke in, nobody else's memory is touched, and a turn
finishing meanwhile cannot write them back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from app.learning.conversation_record import ConversationOwner, TranscriptMessage, said
from app.learning.conversations import (
    TurnTranscript,
    begin_conversation,
    read_conversation,
)
from app.learning.erasure import (
    forget_conversation,
    forget_everything,
    forget_note,
    forget_preference,
)
from app.learning.guard import Forgotten, Guard
from app.learning.opening import open_event
from app.learning.person_settings import choose_memory_notes
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.learning.profile import Profile
from app.learning.recall import Shown, search_homes
from app.learning.search_index import parse_search_index
from app.learning.session_summary import learn_from_turn
from app.learning.summary_file import Summary, SummaryDraft
from app.learning.undo import save_undo_record
from app.learning.welcome import Welcome, welcome_of, with_welcome
from app.memory.change_log import MemoryChange
from app.memory.homes import Home, channel, person, preferences_key
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend
from tests.layout import open_conversation, said_in_of

DM, OTHER_DM = "D0123ABCD", "D0999ZZZZ"
CHANNEL = "C0LAUNCH1"
CHANNEL_THREAD = "1712345800.000002"
SHORT_THREAD = "1712345900.000003"  # "hi" and "hello": a record and nothing else
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


async def _summarize(previous: Summary | None, said: Sequence[object]) -> SummaryDraft:
    return SummaryDraft("Q3 budget", "They reviewed the Q3 budget, in French.", "Hi Sam!", "Go on")


async def _converse(
    store: ObjectStore, owner: ConversationOwner, thread: str, *texts: str
) -> TurnTranscript:
    """One turn as Orion keeps it: the conversation's object with the exchange, then the
    summary, the search entry and the profile (the event's settle)."""
    home = owner.home
    guard = await Guard.reading(store, home)
    opened = await open_conversation(store, owner, thread)
    transcript = TurnTranscript(guard.store, owner, thread, opened)
    author = owner.user if owner.in_channel else None
    for n, text in enumerate(texts):
        role = "user" if n % 2 == 0 else "assistant"
        transcript.add(said(role, text, at=NOW, user=author if role == "user" else None))
    await transcript.write()
    messages: Sequence[TranscriptMessage] = transcript.messages() or ()
    await learn_from_turn(
        guard,
        thread_ts=thread,
        channel=owner.channel,
        history=messages,
        previous=None,
        summarize=_summarize,
        transcript=messages,
        now=NOW,
    )
    return transcript


async def _seed_person(store: ObjectStore, user: str, dm: str, thread: str) -> None:
    home = person(user)
    await save_preferences(store, user, detect_preferences("Call me Sam. Answer in French."))
    await store.write(f"{home.memory_prefix}notes/project.md", "Working on the Q3 budget.\n")
    await store.write(f"{home.notes_prefix(thread)}notes.md", "thread note\n")
    owner = ConversationOwner(user, dm)
    assert await begin_conversation(store, owner, thread, started=NOW, context={"channel_id": dm})
    await _converse(
        store,
        owner,
        thread,
        f"{user} asks about the Q3 budget, in French, with every line item explained.",
        "Here is the Q3 budget, line by line, in French as you like it.",
    )
    # An answer's undo record (the old content of what it changed), and their settings.
    change = MemoryChange(f"{home.memory_prefix}notes/project.md", "Q2 budget.\n", None, 7)
    lines = ["Updated: notes/project.md"]
    await save_undo_record(store, user, [change], lines, created_at=NOW)
    await choose_memory_notes(store, user, shown=False)


async def _speak_in_channel(store: ObjectStore, user: str, text: str) -> None:
    """A channel thread's turn, with what `user` said there noted in their profile."""
    from app.learning.channel_memory import after_channel_turn

    owner = ConversationOwner(user, CHANNEL, kind="channel")
    transcript = await _converse(store, owner, CHANNEL_THREAD, text, "Noted for the channel.")
    await after_channel_turn(
        store, CHANNEL, CHANNEL_THREAD, public=True, authors=transcript.authors, since=NOW
    )


def _holding(backend: Backend, needle: str) -> list[str]:
    return sorted(
        name
        for name in backend.raw_names()
        if needle in name or needle in (backend.raw_read(name) or "")
    )


def _indexed_terms(backend: Backend, home: Home) -> str:
    return backend.raw_read(home.search_key) or ""


async def test_forgetting_everything_leaves_only_when_and_nothing_of_the_others(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    await _converse(store, ConversationOwner(USER, DM), SHORT_THREAD, "hi", "hello")
    await _seed_person(store, OTHER_USER, OTHER_DM, OTHER_THREAD)
    others_before = {
        name: backend.raw_read(name)
        for name in _holding(backend, OTHER_USER)
        if name.startswith(person(OTHER_USER).prefix)
    }
    mine = person(USER)
    # Profile, settings, preferences, a note, two conversations, one's note, search index,
    # undo.
    assert len([n for n in backend.raw_names() if n.startswith(mine.prefix)]) == 9

    report = await forget_everything(store, USER, now=NOW)

    assert _holding(backend, USER) == [mine.profile_key], "only the mark of the erasure"
    mark = json.loads(backend.raw_read(mine.profile_key) or "{}")
    assert mark.keys() == {"version", "erased_at"}
    assert Profile.parse(backend.raw_read(mine.profile_key)).erased_at == NOW
    assert {name: backend.raw_read(name) for name in others_before} == others_before
    assert report.deleted == {"home": 8}


async def test_forgetting_everything_takes_their_words_out_of_the_channel_threads_only(
    store: ObjectStore, backend: Backend
) -> None:
    await _speak_in_channel(store, OTHER_USER, "Launch checklist: ship the rocket on Tuesday.")
    await _speak_in_channel(store, USER, "My flamingo password hint is in the vault.")
    room = channel(CHANNEL)
    assert "flamingo" in _indexed_terms(backend, room)
    assert said_in_of(backend.raw_names(), USER) == {(CHANNEL, CHANNEL_THREAD)}

    report = await forget_everything(store, USER, now=NOW)

    assert report.deleted["channel_threads"] == 1
    record = await read_conversation(store, room, CHANNEL_THREAD)
    assert record is not None
    assert [m.text for m in record.messages if m.role == "user"] == [
        "Launch checklist: ship the rocket on Tuesday."
    ]
    assert "flamingo" not in (backend.raw_read(room.conversation_key(CHANNEL_THREAD)) or "")
    index = _indexed_terms(backend, room)
    assert "flamingo" not in index and "rocket" in index, "made again without their words"
    assert list(parse_search_index(index).threads) == [CHANNEL_THREAD]


async def test_forgetting_everything_reaches_their_channel_words_after_their_profile_expired(
    store: ObjectStore, backend: Backend
) -> None:
    """A member spoke in a channel thread, then was quiet: their profile expired with the
    retention window (the bucket's lifecycle rule deletes it 30 days after its last write)
    while the thread, written by others since, lives on. Forget everything still finds
    their words there, and takes them out."""
    await _speak_in_channel(store, USER, "My flamingo password hint is in the vault.")
    await _speak_in_channel(store, OTHER_USER, "Launch checklist: ship the rocket on Tuesday.")
    await store.delete(person(USER).profile_key)  # expired: they have not talked to Orion since

    report = await forget_everything(store, USER, now=NOW)

    room = channel(CHANNEL)
    assert report.deleted["channel_threads"] == 1
    assert "flamingo" not in (backend.raw_read(room.conversation_key(CHANNEL_THREAD)) or "")
    index = _indexed_terms(backend, room)
    assert "flamingo" not in index and "rocket" in index
    assert [n for n in _holding(backend, USER) if n.startswith(room.prefix)] == []


async def test_forgetting_everything_leaves_no_id_of_theirs_in_a_channel_thread_they_opened(
    store: ObjectStore, backend: Backend
) -> None:
    await _speak_in_channel(store, USER, "Kick-off: who owns the launch checklist?")
    await _speak_in_channel(store, OTHER_USER, "I do, and we ship on Tuesday.")

    await forget_everything(store, USER, now=NOW)

    room = channel(CHANNEL)
    assert [n for n in _holding(backend, USER) if n.startswith(room.prefix)] == []
    record = await read_conversation(store, room, CHANNEL_THREAD)
    assert record is not None and record.owner.channel == CHANNEL
    assert [m.text for m in record.messages if m.role == "user"] == [
        "I do, and we ship on Tuesday."
    ]


async def test_a_turn_that_wrote_after_the_erasure_began_takes_its_writes_back(
    store: ObjectStore, backend: Backend
) -> None:
    home = person(USER)
    owner = ConversationOwner(USER, DM)
    guard = await Guard.reading(store, home)  # the turn began
    transcript = TurnTranscript(
        guard.store, owner, THREAD, await open_conversation(store, owner, THREAD)
    )
    await forget_everything(store, USER, now=NOW)
    # The turn's end writes land after the erasure's deletions...
    transcript.add(said("user", "Remember my flamingo.", at=NOW))
    await transcript.write()
    await guard.store.write(preferences_key(USER), '{"name": "Sam"}')
    # ...and its settle finds the mark and takes them back.
    with pytest.raises(Forgotten):
        await guard.settle(thread_ts=THREAD)
    assert _holding(backend, USER) == [home.profile_key]


async def test_a_turn_that_began_after_the_erasure_keeps_what_it_writes(
    store: ObjectStore, backend: Backend
) -> None:
    await forget_everything(store, USER, now=NOW)
    await _seed_person(store, USER, DM, THREAD)
    assert len(_holding(backend, USER)) > 1, "a new conversation after forgetting is remembered"
    profile = Profile.parse(backend.raw_read(person(USER).profile_key))
    assert profile.erased_at == NOW and profile.entry(THREAD) is not None


async def test_a_thread_start_that_began_before_the_erasure_keeps_no_record_after_it(
    store: ObjectStore, backend: Backend
) -> None:
    """Slack's thread start arrives as the person presses Forget everything: the erasure
    marks the profile before the start reads it, and the start's record (its claim, with
    Slack's context) lands after the erasure's deletions. Its settle takes the record back:
    of the person, only the erasure's mark is left."""
    await _seed_person(store, USER, DM, OTHER_THREAD)
    owner = ConversationOwner(USER, DM)
    began = datetime.now(UTC)  # the thread start's event arrived
    await forget_everything(store, USER)
    opening = await open_event(
        store, owner, THREAD, budget_s=5, token_budget=2_000, conversation=False, since=began
    )
    recorded = await begin_conversation(
        store, owner, THREAD, started=began, context={"channel_id": CHANNEL}
    )
    assert opening.guard is not None and recorded is not None
    # As the thread start settles after its greeting (app/slack/assistant_view).
    opening.guard.noted(person(USER).conversation_key(THREAD), recorded)
    with pytest.raises(Forgotten):
        await opening.guard.settle()
    assert _holding(backend, USER) == [person(USER).profile_key]


async def test_forgetting_one_conversation_or_note_leaves_the_rest(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    await _converse(
        store,
        ConversationOwner(USER, DM),
        OTHER_THREAD,
        "Let us plan the offsite in Lisbon for the whole team next spring, please.",
        "Here is a plan for the Lisbon offsite.",
    )
    home = person(USER)

    # Its object (transcript and summary), its note, and its place in the profile.
    assert await forget_conversation(store, USER, THREAD) == 3
    profile = Profile.parse(backend.raw_read(home.profile_key))
    assert [e.thread_ts for e in profile.conversations] == [OTHER_THREAD]
    assert THREAD in profile.forgotten
    assert backend.raw_read(home.conversation_key(THREAD)) is None
    assert backend.raw_read(f"{home.notes_prefix(THREAD)}notes.md") is None
    assert list(parse_search_index(backend.raw_read(home.search_key)).threads) == [OTHER_THREAD]
    assert backend.raw_read(home.conversation_key(OTHER_THREAD)) is not None
    assert await forget_note(store, USER, f"{home.memory_prefix}notes/project.md")
    assert backend.raw_read(f"{home.memory_prefix}notes/project.md") is None
    assert backend.raw_read(preferences_key(USER)) is not None
    # Clicked again (a stale button): it finds the conversation forgotten and brings back
    # nothing of it.
    await forget_conversation(store, USER, THREAD)
    assert backend.raw_read(home.conversation_key(THREAD)) is None
    assert list(parse_search_index(backend.raw_read(home.search_key)).threads) == [OTHER_THREAD]


async def test_a_note_of_someone_else_cannot_be_forgotten_through_another_person(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, OTHER_USER, OTHER_DM, OTHER_THREAD)
    theirs = f"{person(OTHER_USER).memory_prefix}notes/project.md"
    for key in (
        theirs,
        f"{person(USER).memory_prefix}../../{OTHER_USER}/memory/notes/project.md",
        person(USER).profile_key,
        person(USER).conversation_key(THREAD),
    ):
        with pytest.raises(ValueError):
            await forget_note(store, USER, key)
    assert backend.raw_read(theirs) is not None


async def test_someone_elses_thread_is_not_theirs_to_forget(
    store: ObjectStore, backend: Backend
) -> None:
    # Whatever names it, a conversation is found only in its owner's home.
    await _seed_person(store, OTHER_USER, OTHER_DM, OTHER_THREAD)
    await store.write(
        f"{person(USER).memory_prefix}sessions.json", json.dumps([{"thread": OTHER_THREAD}])
    )
    others_before = {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)}

    assert await forget_conversation(store, USER, OTHER_THREAD) == 0
    await forget_everything(store, USER, now=NOW)

    assert {name: backend.raw_read(name) for name in _holding(backend, OTHER_USER)} == (
        others_before
    )


async def test_every_conversation_is_found_however_many_and_whatever_the_person_deleted(
    store: ObjectStore, backend: Backend
) -> None:
    # 250 conversations, and the person had Claude delete their whole memory directory
    # first: the home's listing still finds every one.
    threads = [f"1712340{n:03d}.000001" for n in range(250)]
    owner = ConversationOwner(USER, DM)
    for thread in threads:
        await begin_conversation(store, owner, thread, started=NOW)
    for obj in await store.list(person(USER).memory_prefix):
        await store.delete(obj.key)

    report = await forget_everything(store, USER, now=NOW)

    assert report.deleted["home"] == 250
    assert _holding(backend, USER) == [person(USER).profile_key]


async def test_forgetting_a_conversation_drops_the_welcome_back_to_it(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)  # its turn end left the welcome back to it
    home = person(USER)
    assert welcome_of(Profile.parse(backend.raw_read(home.profile_key))) is not None

    await forget_conversation(store, USER, THREAD)

    assert welcome_of(Profile.parse(backend.raw_read(home.profile_key))) is None


async def test_forgetting_a_conversation_keeps_the_welcome_back_to_another(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    home = person(USER)
    welcome = Welcome(OTHER_THREAD, "Offsite", NOW, greeting="Hi Sam!")
    await (await Guard.reading(store, home)).settle(lambda p: with_welcome(p, welcome))

    await forget_conversation(store, USER, THREAD)

    kept = welcome_of(Profile.parse(backend.raw_read(home.profile_key)))
    assert kept is not None and kept.thread_ts == OTHER_THREAD and kept.greeting == "Hi Sam!"


async def test_forgetting_a_preference_takes_its_old_values_and_the_welcome_with_it(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed_person(store, USER, DM, THREAD)
    home = person(USER)
    # An answer that changed the name: its undo record holds the file with the old one.
    before = backend.raw_read(preferences_key(USER))
    assert before is not None and "Sam" in before
    assert welcome_of(Profile.parse(backend.raw_read(home.profile_key))) is not None
    change = MemoryChange(preferences_key(USER), before, None, 3)
    await save_undo_record(store, USER, [change], ["Updated: name"], created_at=NOW)
    undo_before = len(await store.list(f"{home.prefix}undo/"))

    assert await forget_preference(store, USER, "name")

    assert "Sam" not in (backend.raw_read(preferences_key(USER)) or "")
    welcome = welcome_of(Profile.parse(backend.raw_read(home.profile_key)))
    assert welcome is None or welcome.greeting is None, "the greeting named them"
    assert [name for name in _holding(backend, "Sam") if name.startswith(home.prefix)] == []
    # The other answer's record (a note's) stays: it holds nothing of the preference.
    assert len(await store.list(f"{home.prefix}undo/")) == undo_before - 1


async def test_their_channel_words_a_search_kept_are_not_shown_after_forgetting_everything(
    store: ObjectStore,
) -> None:
    await _speak_in_channel(store, OTHER_USER, "Launch checklist: ship the rocket on Tuesday.")
    await _speak_in_channel(store, USER, "My flamingo hint for the launch is in the vault.")
    room = channel(CHANNEL)
    turn: dict[str, Shown] = {}  # what a turn's recall tool keeps between its searches

    async def shown(query: str) -> str:
        hits, _ = await search_homes(store, [room], [query], shown=turn)
        return " ".join(p.text for hit in hits for p in hit.passages)

    assert "flamingo" in await shown("launch")  # read, and kept for the turn's next search
    assert turn, "kept"

    await forget_everything(store, USER, now=NOW)

    later = await shown("launch")
    assert "rocket" in later and "flamingo" not in later
