"""One home per owner: where each object lives (app/memory/homes.py), how the memory tool's
paths map into the owner's home and back (app/memory/tool/model_paths.py), the erasure
guard every event's writes pass (app/learning/guard.py) and the owner's profile it reads
(app/learning/profile.py).

The keys here are the layout docs/architecture.md states and every bucket holds: a
change to them strands what people already have.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.learning.erasure import erase_home, forget_conversation
from app.learning.guard import Forgotten, Guard
from app.learning.person_settings import channel_threads
from app.learning.profile import (
    MAX_CONVERSATIONS,
    MAX_FORGOTTEN,
    ConversationEntry,
    Profile,
)
from app.learning.search_index import (
    document_for,
    parse_search_index,
    record_search_document,
)
from app.memory.homes import (
    Home,
    channel,
    expires_with_conversations,
    person,
    preferences_key,
    thread_of_name,
    workspace_channels_key,
)
from app.memory.scopes import ChannelMemoryScope, MemoryScope, to_key
from app.memory.tool.model_paths import ModelPathStore, person_memory_key, storage_roots
from app.storage.gcs import GcsObjectStore
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.layout import conversation, profile

CHANNEL, OTHER_CHANNEL = "C0LAUNCH1", "C0LAUNCH10"  # one's id a prefix of the other's
DM = "D0123ABCD"
SESSION = THREAD.replace(".", "-")
UNDO_ID = "0123456789abcdef0123456789abcdef"

# -- the keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        (person(USER).prefix, "people/U0123ABCD/"),
        (person(USER).profile_key, "people/U0123ABCD/profile.json"),
        (person(USER).memory_prefix, "people/U0123ABCD/memory/"),
        (preferences_key(USER), "people/U0123ABCD/memory/preferences.json"),
        (preferences_key("W0ENTERPRISE1"), "people/W0ENTERPRISE1/memory/preferences.json"),
        (
            person(USER).conversation_key(THREAD),
            "people/U0123ABCD/conversations/1712345678-123456.json",
        ),
        (person(USER).notes_prefix(THREAD), "people/U0123ABCD/conversations/1712345678-123456/"),
        (person(USER).search_key, "people/U0123ABCD/search.json"),
        (person(USER).undo_key(UNDO_ID), f"people/U0123ABCD/undo/{UNDO_ID}.json"),
        (channel(CHANNEL).prefix, "channels/C0LAUNCH1/"),
        (channel(CHANNEL).profile_key, "channels/C0LAUNCH1/profile.json"),
        (channel(CHANNEL).memory_prefix, "channels/C0LAUNCH1/memory/"),
        (
            channel(CHANNEL).conversation_key(THREAD),
            "channels/C0LAUNCH1/conversations/1712345678-123456.json",
        ),
        (channel(CHANNEL).search_key, "channels/C0LAUNCH1/search.json"),
        (channel(CHANNEL).archived_prefix, "channels/C0LAUNCH1/archived/"),
        (channel("G0PRIVATE1").prefix, "channels/G0PRIVATE1/"),
        (workspace_channels_key(), "workspace/channels.json"),
    ],
)
def test_every_object_of_an_owner_lives_in_its_home(built: str, expected: str) -> None:
    assert built == expected


def test_a_key_segment_gives_back_its_thread_and_nothing_else_does() -> None:
    assert thread_of_name(SESSION) == THREAD
    assert thread_of_name("1712345678") is None


@pytest.mark.parametrize(
    "user_id", ["", "u123", "U", "X0123", "U01/../x", "U0123\n", "U0123 ", "B0123ABC", "U..", 42]
)
def test_a_person_is_a_slack_user_id(user_id: object) -> None:
    with pytest.raises(ValueError):
        person(user_id)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "channel_id", ["D0123ABCD", "", "c0lower", "C0/../x", "C", None, "U0123ABCD", "C0123\n"]
)
def test_a_channel_is_a_channels_id_and_never_a_dm(channel_id: object) -> None:
    with pytest.raises(ValueError):
        channel(channel_id)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "thread_ts", ["", "1712345678", "1712345678.", ".123", "1.2.3", "17123a.1", "1.2\n", "../1.2"]
)
def test_a_thread_is_a_slack_ts(thread_ts: str) -> None:
    with pytest.raises(ValueError):
        person(USER).conversation_key(thread_ts)
    with pytest.raises(ValueError):
        person(USER).notes_prefix(thread_ts)


@pytest.mark.parametrize("undo_id", ["", "../x", UNDO_ID.upper(), UNDO_ID + "0", "g" * 32])
def test_an_undo_record_is_named_by_its_own_ids_only(undo_id: str) -> None:
    with pytest.raises(ValueError):
        person(USER).undo_key(undo_id)


def test_there_are_two_kinds_of_owner_with_homes() -> None:
    with pytest.raises(ValueError):
        Home("workspace", USER)  # type: ignore[arg-type]


def test_what_is_about_conversations_expires_and_memory_and_choices_stay() -> None:
    home = person(USER)
    assert expires_with_conversations(home.conversation_key(THREAD))
    assert expires_with_conversations(f"{home.notes_prefix(THREAD)}notes.md")
    assert expires_with_conversations(home.undo_key(UNDO_ID))
    assert expires_with_conversations(f"{channel(CHANNEL).archived_prefix}decisions.md")
    assert expires_with_conversations(home.profile_key)
    assert expires_with_conversations(home.search_key)
    assert expires_with_conversations(channel(CHANNEL).search_key)
    for kept in (
        preferences_key(USER),
        f"{home.memory_prefix}conversations/notes.md",
        f"{home.memory_prefix}profile.json",
        f"{home.memory_prefix}search.json",
        f"{home.prefix}settings.json",
        channel(CHANNEL).profile_key,
        f"{channel(CHANNEL).memory_prefix}decisions.md",
        workspace_channels_key(),
    ):
        assert not expires_with_conversations(kept), kept


# -- the memory tool's paths, in the owner's home ----------------------------------------------

SCOPE = MemoryScope(user_id=USER, thread_ts=THREAD)
CHANNEL_SCOPE = ChannelMemoryScope(CHANNEL)


def test_each_root_the_model_sees_lives_in_its_owners_home() -> None:
    assert storage_roots(SCOPE) == {
        "global/": "global/",
        f"users/{USER}/": f"people/{USER}/memory/",
        f"sessions/{SESSION}/": f"people/{USER}/conversations/{SESSION}/",
    }
    assert storage_roots(CHANNEL_SCOPE) == {
        "global/": "global/",
        f"channels/{CHANNEL}/": f"channels/{CHANNEL}/memory/",
    }


@pytest.mark.parametrize(
    ("scope", "model_key", "stored"),
    [
        (SCOPE, f"users/{USER}/preferences.json", f"people/{USER}/memory/preferences.json"),
        (SCOPE, f"users/{USER}/deep/er/notes.md", f"people/{USER}/memory/deep/er/notes.md"),
        (SCOPE, f"users/{USER}", f"people/{USER}/memory"),
        (SCOPE, f"sessions/{SESSION}/plan.md", f"people/{USER}/conversations/{SESSION}/plan.md"),
        (SCOPE, "global/context.md", "global/context.md"),
        (
            CHANNEL_SCOPE,
            f"channels/{CHANNEL}/decisions.md",
            f"channels/{CHANNEL}/memory/decisions.md",
        ),
        (CHANNEL_SCOPE, "global/context.md", "global/context.md"),
    ],
)
def test_a_model_path_maps_into_its_owners_home_and_back(
    scope: MemoryScope | ChannelMemoryScope, model_key: str, stored: str
) -> None:
    paths = ModelPathStore(_Nowhere(), scope)
    assert paths.to_storage(model_key) == stored
    if not scope.is_root(model_key):  # listings name objects, never a root itself
        assert paths.to_model(stored) == model_key


@pytest.mark.parametrize(
    ("scope", "model_key"),
    [
        (SCOPE, f"users/{OTHER_USER}/preferences.json"),
        (SCOPE, f"users/{USER}X/notes.md"),
        (SCOPE, f"sessions/{OTHER_THREAD.replace('.', '-')}/plan.md"),
        (SCOPE, f"sessions/{SESSION}.json"),  # the conversation's own object, by its name
        (SCOPE, f"channels/{CHANNEL}/decisions.md"),
        (SCOPE, f"people/{USER}/profile.json"),  # a key of the store, as a model path
        (SCOPE, "users"),
        (SCOPE, ""),
        (CHANNEL_SCOPE, f"channels/{OTHER_CHANNEL}/decisions.md"),
        (CHANNEL_SCOPE, f"users/{USER}/preferences.json"),
        (CHANNEL_SCOPE, f"sessions/{SESSION}/plan.md"),
    ],
)
def test_a_path_outside_the_scope_maps_nowhere(
    scope: MemoryScope | ChannelMemoryScope, model_key: str
) -> None:
    with pytest.raises(ValueError):
        ModelPathStore(_Nowhere(), scope).to_storage(model_key)


@pytest.mark.parametrize(
    "stored",
    [
        f"people/{USER}/profile.json",
        f"people/{USER}/conversations/{SESSION}.json",
        f"people/{USER}/search.json",
        f"people/{USER}/undo/{UNDO_ID}.json",
        f"people/{OTHER_USER}/memory/preferences.json",
        f"channels/{CHANNEL}/memory/decisions.md",
    ],
)
def test_orions_own_records_have_no_model_path(stored: str) -> None:
    with pytest.raises(ValueError):
        ModelPathStore(_Nowhere(), SCOPE).to_model(stored)


async def test_the_memory_tools_store_writes_into_the_home_and_lists_back(
    backend: Backend,
) -> None:
    home = person(USER)
    # Orion's own records of the person, beside their memory: never listed to the model.
    await backend.store.write(home.profile_key, profile(conversations=[(THREAD, "Plans")]))
    await backend.store.write(home.conversation_key(THREAD), conversation(USER, THREAD))
    await backend.store.write(f"{person(OTHER_USER).memory_prefix}notes.md", "not yours")
    paths = ModelPathStore(backend.store, SCOPE)

    await paths.write(f"users/{USER}/notes.md", "Likes short answers.")
    await paths.write(f"sessions/{SESSION}/plan.md", "Step one.")

    assert backend.raw_read(f"{home.memory_prefix}notes.md") == "Likes short answers."
    assert backend.raw_read(f"{home.notes_prefix(THREAD)}plan.md") == "Step one."
    assert [o.key for o in await paths.list(f"users/{USER}/")] == [f"users/{USER}/notes.md"]
    assert [o.key for o in await paths.list(f"sessions/{SESSION}/")] == [
        f"sessions/{SESSION}/plan.md"
    ]
    stored = await paths.read(f"users/{USER}/notes.md")
    assert stored is not None and stored.key == f"users/{USER}/notes.md"
    assert await paths.delete(f"sessions/{SESSION}/plan.md")
    assert backend.raw_read(f"{home.notes_prefix(THREAD)}plan.md") is None
    assert backend.raw_read(home.conversation_key(THREAD)) is not None


def test_a_persons_note_is_found_in_their_home_only() -> None:
    assert person_memory_key(USER, f"users/{USER}/notes/travel.md") == (
        f"people/{USER}/memory/notes/travel.md"
    )
    for other in (f"users/{OTHER_USER}/notes.md", f"users/{USER}/", "sessions/1-2/x.md", ""):
        with pytest.raises(ValueError):
            person_memory_key(USER, other)


_PIECES = st.sampled_from(
    [
        *("global", "users", "sessions", "channels", USER, OTHER_USER, f"{USER}X", SESSION),
        *(CHANNEL, f"{SESSION}.json", "profile.json", "memory", "conversations", "search.json"),
        *("undo", "x.md", "..", ".", "%2e", "\uff0e", "\\", ""),
    ]
)


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(_PIECES, min_size=1, max_size=6))
def test_no_model_path_reaches_orions_records_or_anyone_elses_home(pieces: list[str]) -> None:
    try:
        key = to_key("/memories/" + "/".join(pieces))
    except ValueError:
        return
    paths = ModelPathStore(_Nowhere(), SCOPE)
    try:
        stored = paths.to_storage(key)
    except ValueError:
        assert not SCOPE.can_read(key) or SCOPE.is_root(key)
        return
    home = person(USER)
    assert stored.startswith(("global/", home.memory_prefix, home.notes_prefix(THREAD))) or (
        f"{stored}/" in storage_roots(SCOPE).values()
    )
    assert stored not in (home.profile_key, home.search_key, home.conversation_key(THREAD))
    if not SCOPE.is_root(key):
        assert paths.to_model(stored) == key


class _Nowhere:
    """A store the mapping tests never reach (only keys are mapped)."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the store was asked to {name}")


# -- the erasure guard ---------------------------------------------------------------------

NOW = datetime.now(UTC)


def _entry(thread_ts: str) -> object:
    def change(current: Profile) -> Profile:
        return current.with_conversation(ConversationEntry(thread_ts, "Plans", NOW, DM))

    return change


async def _search_document(store: ObjectStore, home: Home, thread_ts: str, word: str) -> None:
    document = document_for(thread_ts, word, word, [], NOW, channel=DM)
    await record_search_document(store, home, document)


def _indexed(backend: Backend, home: Home) -> list[str]:
    return list(parse_search_index(backend.raw_read(home.search_key)).threads)


async def _erased_during_an_event(store: ObjectStore, home: Home) -> Guard:
    """An event that read the profile, then the person's Forget everything (the mark, then
    the home listed and deleted), then the event's writes: a conversation, their
    preferences and a note."""
    await store.write(home.profile_key, profile(conversations=[(OTHER_THREAD, "Earlier")]))
    await store.write(preferences_key(USER), '{"name": "Ines"}')
    event = await Guard.reading(store, home)
    await erase_home(store, home)
    await event.store.write(home.conversation_key(THREAD), conversation(USER, THREAD))
    await event.store.write(preferences_key(USER), '{"name": "Ines", "tone": "brief"}')
    await event.store.write(f"{home.memory_prefix}trip.md", "Lisbon in May.")
    return event


async def test_an_erasure_during_an_event_takes_back_exactly_the_events_writes(
    backend: Backend,
) -> None:
    store, home = backend.store, person(USER)
    event = await _erased_during_an_event(store, home)
    # Written by an event that began after the erasure: what the person said since.
    await store.write(f"{home.memory_prefix}since.md", "Said after the erasure.")

    with pytest.raises(Forgotten):
        await event.settle(_entry(THREAD))  # type: ignore[arg-type]

    assert sorted(backend.raw_names()) == [
        f"{home.memory_prefix}since.md",
        home.profile_key,
    ]
    erased = Profile.parse(backend.raw_read(home.profile_key))
    assert erased.erased_at is not None and erased.conversations == ()
    assert json.loads(backend.raw_read(home.profile_key) or "{}").keys() == {"version", "erased_at"}


async def test_what_is_written_again_since_the_events_write_is_not_taken_back(
    tmp_path: Path,
) -> None:
    # On the local directory, which holds deletes to their generation as GCS does (the
    # emulator ignores it: tests/storage/test_delete_preconditions.py).
    store, home = LocalDirectoryStore(tmp_path), person(USER)
    event = await _erased_during_an_event(store, home)
    note = f"{home.memory_prefix}trip.md"
    await store.write(note, "Porto in June.")  # an event that began after the erasure

    with pytest.raises(Forgotten):
        await event.settle(_entry(THREAD))  # type: ignore[arg-type]

    kept = await store.read(note)
    assert kept is not None and kept.content == "Porto in June."
    assert await store.read(home.conversation_key(THREAD)) is None
    assert await store.read(preferences_key(USER)) is None


async def test_each_write_is_taken_back_at_the_version_the_event_wrote(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store, home = GcsObjectStore(gcs_bucket), person(USER)
    event = await _erased_during_an_event(store, home)
    written = {
        key: (await store.read(key)).generation  # type: ignore[union-attr]
        for key in (home.conversation_key(THREAD), preferences_key(USER))
    }
    sent = len(gcs_proxy.requests)

    with pytest.raises(Forgotten):
        await event.settle(_entry(THREAD))  # type: ignore[arg-type]

    deletes = [unquote(r.path_qs) for r in gcs_proxy.requests[sent:] if r.method == "DELETE"]
    assert len(deletes) == 3
    for key, generation in written.items():
        [delete] = [d for d in deletes if f"/o/{key}?" in d]
        assert f"ifGenerationMatch={generation}" in delete


async def test_an_event_that_began_after_the_erasure_keeps_what_it_writes(
    backend: Backend,
) -> None:
    store, home = backend.store, person(USER)
    await store.write(preferences_key(USER), '{"name": "Ines"}')
    await erase_home(store, home)
    event = await Guard.reading(store, home)

    await event.store.write(home.conversation_key(THREAD), conversation(USER, THREAD))
    settled = await event.settle(_entry(THREAD))  # type: ignore[arg-type]

    assert settled.entry(THREAD) is not None and settled.erased_at is not None
    assert backend.raw_read(home.conversation_key(THREAD)) is not None
    assert Profile.parse(backend.raw_read(home.profile_key)).entry(THREAD) is not None


async def test_a_conversation_forgotten_during_its_turn_takes_back_only_its_own_writes(
    backend: Backend,
) -> None:
    store, home = backend.store, person(USER)
    await store.write(
        home.profile_key, profile(conversations=[(THREAD, "Plans"), (OTHER_THREAD, "Earlier")])
    )
    await store.write(home.conversation_key(THREAD), conversation(USER, THREAD))
    await store.write(home.conversation_key(OTHER_THREAD), conversation(USER, OTHER_THREAD))
    await _search_document(store, home, OTHER_THREAD, "budget")
    event = await Guard.reading(store, home)

    assert await forget_conversation(store, USER, THREAD)  # clicked while Orion answers
    plan = f"{home.notes_prefix(THREAD)}plan.md"
    await event.store.write(
        home.conversation_key(THREAD), conversation(USER, THREAD, messages=[("user", "hi")])
    )
    await event.store.write(plan, "Step one.")
    await event.store.write(preferences_key(USER), '{"tone": "brief"}')
    await _search_document(event.store, home, THREAD, "lisbon")

    with pytest.raises(Forgotten):
        await event.settle(_entry(THREAD), thread_ts=THREAD)  # type: ignore[arg-type]

    assert backend.raw_read(home.conversation_key(THREAD)) is None
    assert backend.raw_read(plan) is None
    assert backend.raw_read(home.conversation_key(OTHER_THREAD)) is not None
    assert backend.raw_read(preferences_key(USER)) == '{"tone": "brief"}'  # the person's own
    assert _indexed(backend, home) == [OTHER_THREAD]
    kept = Profile.parse(backend.raw_read(home.profile_key))
    assert [e.thread_ts for e in kept.conversations] == [OTHER_THREAD]
    assert THREAD in kept.forgotten and kept.erased_at is None


async def test_another_conversation_forgotten_meanwhile_changes_nothing_of_this_one(
    backend: Backend,
) -> None:
    store, home = backend.store, person(USER)
    await store.write(home.profile_key, profile(conversations=[(OTHER_THREAD, "Earlier")]))
    event = await Guard.reading(store, home)

    await forget_conversation(store, USER, OTHER_THREAD)
    await event.store.write(home.conversation_key(THREAD), conversation(USER, THREAD))
    settled = await event.settle(_entry(THREAD), thread_ts=THREAD)  # type: ignore[arg-type]

    assert [e.thread_ts for e in settled.conversations] == [THREAD]
    assert OTHER_THREAD in settled.forgotten
    assert backend.raw_read(home.conversation_key(THREAD)) is not None


async def test_a_settle_with_nothing_to_change_writes_the_profile_back_as_it_was(
    backend: Backend,
) -> None:
    store, home = backend.store, person(USER)
    await store.write(home.profile_key, profile(conversations=[(THREAD, "Plans")]))
    event = await Guard.reading(store, home)
    before = await store.read(home.profile_key)

    settled = await event.settle()

    after = await store.read(home.profile_key)
    assert before is not None and after is not None
    assert after.content == before.content and after.generation != before.generation
    assert settled.entry(THREAD) is not None


def _profile_requests(proxy: FaultyProxy, since: int) -> list[str]:
    quoted = f"people%2F{USER}%2Fprofile.json"
    return [
        r.method
        for r in proxy.requests[since:]
        if quoted in r.path_qs or "uploadType=multipart" in r.path_qs
    ]


async def test_a_settle_with_nothing_to_change_is_one_write_over_the_version_read(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    # No second read of the profile: written back over the version the event read, the
    # one request also proves no erasure came in between.
    home = person(USER)
    gcs_emulator.write(gcs_bucket, home.profile_key, profile(conversations=[(THREAD, "Plans")]))
    store = GcsObjectStore(gcs_bucket)
    event = await Guard.reading(store, home)
    sent = len(gcs_proxy.requests)

    await event.settle()

    assert _profile_requests(gcs_proxy, sent) == ["POST"]
    assert "ifGenerationMatch=" in gcs_proxy.requests[-1].path_qs
    assert len(gcs_proxy.requests) == sent + 1


async def test_a_settle_with_a_change_writes_once_over_the_version_the_event_read(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    home = person(USER)
    gcs_emulator.write(gcs_bucket, home.profile_key, profile())
    store = GcsObjectStore(gcs_bucket)
    event = await Guard.reading(store, home)
    sent = len(gcs_proxy.requests)

    await event.settle(_entry(THREAD))  # type: ignore[arg-type]

    assert _profile_requests(gcs_proxy, sent) == ["POST"]
    assert len(gcs_proxy.requests) == sent + 1
    written = gcs_emulator.read(gcs_bucket, home.profile_key)
    assert written is not None and Profile.parse(written.decode()).entry(THREAD) is not None


async def test_a_settle_after_another_writer_keeps_their_change_too(backend: Backend) -> None:
    store, home = backend.store, person(USER)
    await store.write(home.profile_key, profile())
    event = await Guard.reading(store, home)
    other = await Guard.reading(store, home)  # another of the person's threads, at once

    await other.settle(_entry(OTHER_THREAD))  # type: ignore[arg-type]
    settled = await event.settle(_entry(THREAD))  # type: ignore[arg-type]

    assert {e.thread_ts for e in settled.conversations} == {THREAD, OTHER_THREAD}
    stored = Profile.parse(backend.raw_read(home.profile_key))
    assert {e.thread_ts for e in stored.conversations} == {THREAD, OTHER_THREAD}


# -- the profile ---------------------------------------------------------------------------


def test_a_profile_reads_back_as_written() -> None:
    written = (
        Profile()
        .with_conversation(ConversationEntry(THREAD, "Plans", NOW, DM))
        .with_conversation(ConversationEntry(OTHER_THREAD, "Budget", NOW - timedelta(days=1)))
        .forgetting("1712345000.000001", NOW)
        .with_section("settings", {"memory_notes": False})
    )

    read = Profile.parse(written.render())

    assert [e.thread_ts for e in read.conversations] == [THREAD, OTHER_THREAD]
    assert read.entry(THREAD) == ConversationEntry(THREAD, "Plans", NOW.replace(microsecond=0), DM)
    assert read.section("settings") == {"memory_notes": False}
    assert set(read.forgotten) == {"1712345000.000001"}
    assert read.erased_at is None


def test_an_erasure_is_told_from_the_profile_read_before_it() -> None:
    # What an erasure leaves (only when it was): tests/learning/test_erasure.py.
    full = Profile().with_conversation(ConversationEntry(THREAD, "Plans", NOW, DM))
    full = full.with_section("welcome", {"thread": THREAD})

    erased = Profile.parse(Profile(erased_at=NOW).render())

    assert erased.erased_since(full) and not erased.erased_since(erased)
    assert not full.erased_since(Profile())


def test_a_conversation_forgotten_since_is_told_from_one_forgotten_before() -> None:
    before = Profile().forgetting(THREAD, NOW - timedelta(hours=1))
    again = before.forgetting(THREAD, NOW)
    assert not before.forgot_since(before, THREAD)
    assert again.forgot_since(before, THREAD)
    assert before.forgot_since(Profile(), THREAD)
    assert not again.forgot_since(Profile(), OTHER_THREAD)


def test_each_list_is_bounded_newest_first() -> None:
    grown = Profile()
    for n in range(MAX_CONVERSATIONS + 5):
        grown = grown.with_conversation(
            ConversationEntry(f"{1712000000 + n}.000001", f"#{n}", NOW + timedelta(seconds=n))
        )
    for n in range(MAX_FORGOTTEN + 5):
        grown = grown.forgetting(f"{1713000000 + n}.000001", NOW + timedelta(seconds=n))

    read = Profile.parse(grown.render())

    assert len(read.conversations) == MAX_CONVERSATIONS
    assert read.conversations[0].title == f"#{MAX_CONVERSATIONS + 4}"
    assert len(read.forgotten) == MAX_FORGOTTEN
    assert f"{1713000000 + MAX_FORGOTTEN + 4}.000001" in read.forgotten
    assert "1713000000.000001" not in read.forgotten


def test_entries_older_than_the_window_are_dropped_when_written_and_skipped_when_read() -> None:
    cutoff = NOW - timedelta(days=30)
    old = (
        Profile()
        .with_conversation(ConversationEntry(THREAD, "Old", NOW - timedelta(days=40)))
        .with_conversation(ConversationEntry(OTHER_THREAD, "New", NOW))
        .forgetting("1712345000.000001", NOW - timedelta(days=40))
    )
    assert [e.title for e in Profile.parse(old.render(), cutoff=cutoff).conversations] == ["New"]
    written = Profile.parse(old.render(cutoff=cutoff))
    assert [e.title for e in written.conversations] == ["New"] and written.forgotten == {}


@pytest.mark.parametrize(
    "content",
    [
        None,
        "",
        "not json",
        "[]",
        '"a string"',
        "null",
        "{" * 5000 + "}" * 5000,
        "[" * 100_000,
        '{"version": 99, "conversations": "all of them"}',
        '{"erased_at": 42, "forgotten": ["1712345678.123456"], "said_in": {"C0LAUNCH1": 1}}',
        '{"erased_at": "yesterday", "forgotten": {"../x": "2026-01-01T00:00:00+00:00"}}',
        "x" * 3_000_000,
    ],
)
def test_a_profile_that_cannot_be_read_is_empty(content: str | None) -> None:
    read = Profile.parse(content)
    assert read.erased_at is None and read.forgotten == {}
    assert read.conversations == ()


def test_what_in_a_profile_cannot_be_read_is_skipped_and_the_rest_kept() -> None:
    good = {"thread": THREAD, "title": "Plans", "updated": "2026-05-04T10:12:00Z"}
    content = json.dumps(
        {
            "erased_at": "2026-05-01T09:00:00+00:00",
            "forgotten": {OTHER_THREAD: "2026-05-02T09:00:00", "../1.2": "2026-05-02T09:00:00"},
            "conversations": [
                {"thread": "../../1.2", "title": "x", "updated": "2026-05-04T10:12:00Z"},
                {"thread": THREAD, "title": ["a list"], "updated": "2026-05-04T10:12:00Z"},
                {"thread": THREAD, "title": "Older", "updated": "2026-05-03T10:12:00Z"},
                {"thread": OTHER_THREAD, "title": "When?", "updated": "not a time"},
                "not an entry",
                good,
            ],
            "settings": {"memory_notes": False},
        }
    )

    read = Profile.parse(content)

    assert read.erased_at == datetime(2026, 5, 1, 9, tzinfo=UTC)
    assert list(read.forgotten) == [OTHER_THREAD]
    assert read.forgotten[OTHER_THREAD].tzinfo is not None
    assert [(e.thread_ts, e.title) for e in read.conversations] == [(THREAD, "Plans")]
    assert read.section("settings") == {"memory_notes": False}
    # Another module's section is kept as it is by every writer.
    assert Profile.parse(read.render()).section("settings") == {"memory_notes": False}


def test_the_channel_threads_a_person_spoke_in_are_keys_in_their_home_that_name_nothing_else() -> (
    None
):
    home = person(USER)
    noted = home.channel_thread_key(CHANNEL, THREAD)
    assert noted.startswith(home.prefix) and not noted.startswith(home.memory_prefix)
    assert not expires_with_conversations(noted), "kept until they are forgotten"
    for channel_id, thread_ts in ((DM, THREAD), (CHANNEL, "1.2/3"), ("../x", THREAD)):
        with pytest.raises(ValueError):
            home.channel_thread_key(channel_id, thread_ts)
    other = home.channel_threads_prefix
    keys = [
        noted,
        *(f"{other}{DM}/1712-1", f"{other}{CHANNEL}/1-2/3", f"{other}{CHANNEL}", f"{other}x/1-2"),
        person(OTHER_USER).channel_thread_key(CHANNEL, OTHER_THREAD),  # someone else's
        home.conversation_key(OTHER_THREAD),
    ]
    assert channel_threads(home, keys, None) == {(CHANNEL, THREAD)}


def test_the_threads_older_settings_list_are_found_also_when_they_cannot_be_read() -> None:
    home = person(USER)

    def listed(settings: str | None) -> set[tuple[str, str]]:
        return channel_threads(home, [], settings)

    older = json.dumps({"said_in": [[CHANNEL, THREAD], [DM, OTHER_THREAD], [1, 2]]})
    assert listed(older) == {(CHANNEL, THREAD)}, "a DM is no channel thread"
    assert listed(older[:-3]) == {(CHANNEL, THREAD)}, "cut short"
    assert listed(f'[["{CHANNEL}", "1.2"]') == {(CHANNEL, "1.2")}
    assert listed('{"memory_notes": false}') == listed(None) == set()
    both = channel_threads(home, [home.channel_thread_key(CHANNEL, OTHER_THREAD)], older)
    assert both == {(CHANNEL, THREAD), (CHANNEL, OTHER_THREAD)}


def test_a_forgotten_thread_that_is_not_a_thread_is_refused() -> None:
    with pytest.raises(ValueError):
        Profile().forgetting("../1.2", NOW)


async def test_an_erased_owners_guard_takes_back_nothing_of_another_owner(
    backend: Backend,
) -> None:
    # A channel turn also writes outside the channel's home (an author's pointer in their
    # own profile): the channel's erasure takes back the channel's writes, not theirs.
    store, home, theirs = backend.store, person(USER), person(OTHER_USER).profile_key
    event = await Guard.reading(store, home)
    await event.store.write(home.conversation_key(THREAD), conversation(USER, THREAD))
    await event.store.write(theirs, profile())
    await erase_home(store, home)

    with pytest.raises(Forgotten):
        await event.settle(thread_ts=THREAD)

    assert backend.raw_read(home.conversation_key(THREAD)) is None
    assert backend.raw_read(theirs) is not None


def test_a_search_index_nested_past_the_parsers_limit_reads_as_empty() -> None:
    index = parse_search_index("[" * 100_000 + "\n")
    assert not index.threads
