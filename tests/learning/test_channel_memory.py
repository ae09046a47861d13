"""A channel's conversations and memory, below Slack: whose a channel thread is, its
members' messages and their erasure, the admins' modes, the change log, forgetting,
erasing the channel (also while a turn writes), archiving, and the public list."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from app.learning.channel_memory import (
    MAX_CHANGES,
    ChannelChoices,
    ModeChoice,
    after_channel_turn,
    archive_channel,
    changes_of,
    channel_file_key,
    choose_mode,
    erase_channel,
    forget_channel_file,
    read_choices,
    record_change,
)
from app.learning.channel_mode import ChannelMode
from app.learning.channel_recall import (
    MAX_PUBLIC_CHANNELS,
    note_channel_visibility,
    public_channels,
    read_public_channels,
)
from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.conversations import (
    Standing,
    TurnTranscript,
    forget_said,
    read_conversation,
)
from app.learning.erasure import forget_everything, said_since_erasure
from app.learning.guard import Forgotten, Guard
from app.learning.profile import Profile
from app.memory.homes import channel, person
from app.memory.scopes import ChannelMemoryScope, validate_channel
from app.storage.store import ObjectStore
from tests.backends import OTHER_USER, THREAD, USER, Backend
from tests.layout import open_conversation, said_in_of

CHANNEL, OTHER_CHANNEL, DM = "C0LAUNCH1", "C0OTHER01", "D0123ABCD"
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
IN_CHANNEL = ConversationOwner(USER, CHANNEL, team="T0123ABCD", kind="channel")
ROOM = channel(CHANNEL)
MEMORY = ROOM.memory_prefix


async def _channel_turn(store: ObjectStore, *messages: object) -> TurnTranscript:
    """A channel turn's transcript, written, with the thread noted in each author's home."""
    opened = await open_conversation(store, IN_CHANNEL, THREAD)
    transcript = TurnTranscript(store, IN_CHANNEL, THREAD, opened)
    transcript.add(*messages)  # type: ignore[arg-type]
    await transcript.write()
    await after_channel_turn(
        store, CHANNEL, THREAD, public=True, authors=transcript.authors, since=NOW
    )
    return transcript


def _changes(backend: Backend) -> list:  # type: ignore[type-arg]
    return changes_of(Profile.parse(backend.raw_read(ROOM.profile_key)))


# --- whose a channel thread is ----------------------------------------------------------


def test_a_channel_thread_is_continued_by_the_channel_and_never_by_a_dm() -> None:
    anyone_there = ConversationOwner(OTHER_USER, CHANNEL, kind="channel")
    assert anyone_there.may_continue(IN_CHANNEL), "any member of the channel"
    assert not ConversationOwner(USER, OTHER_CHANNEL, kind="channel").may_continue(IN_CHANNEL)
    # The same person and the same id, as a DM's conversation: never the channel's.
    assert not ConversationOwner(USER, CHANNEL).may_continue(IN_CHANNEL)
    assert not IN_CHANNEL.may_continue(ConversationOwner(USER, CHANNEL))
    with pytest.raises(ValueError):
        ConversationOwner(USER, DM, kind="channel")  # a DM is never a channel


def test_records_from_before_channels_are_a_persons_and_a_forged_kind_is_nobodys() -> None:
    record = ConversationRecord(THREAD, ConversationOwner(USER, DM), NOW).render()
    old = json.loads(record)
    del old["owner"]["kind"]
    parsed = ConversationRecord.parse(json.dumps(old))
    assert parsed is not None and parsed.owner.kind == "person"
    for kind in ("channel", "admin", None, 3):
        forged = json.loads(record)
        forged["owner"]["kind"] = kind
        assert ConversationRecord.parse(json.dumps(forged)) is None, kind  # D… is no channel


async def test_a_channel_threads_record_lives_in_the_channel_and_each_author_knows_it(
    store: ObjectStore, backend: Backend
) -> None:
    assert (await open_conversation(store, IN_CHANNEL, THREAD)).standing is Standing.NEW
    transcript = await _channel_turn(
        store,
        said("user", "we launch Tuesday", at=NOW, user=USER),
        said("user", "agreed", at=NOW, user=OTHER_USER),
        said("assistant", "Noted.", at=NOW),
    )
    assert transcript.authors == {USER, OTHER_USER}
    assert backend.raw_read(ROOM.conversation_key(THREAD)) is not None
    for author in (USER, OTHER_USER):
        assert said_in_of(backend.raw_names(), author) == {(CHANNEL, THREAD)}
        # Nothing among the person's own conversations: the thread is not theirs.
        assert backend.raw_read(person(author).conversation_key(THREAD)) is None


async def test_forgetting_a_member_takes_only_their_messages_out(store: ObjectStore) -> None:
    await _channel_turn(
        store,
        said("user", "mine", at=NOW, user=USER),
        said("user", "theirs", at=NOW, user=OTHER_USER),
        said("assistant", "both noted", at=NOW),
    )
    assert await forget_said(store, USER, ROOM, THREAD)
    record = await read_conversation(store, ROOM, THREAD)
    assert record is not None
    assert [(m.user, m.text) for m in record.messages] == [
        (OTHER_USER, "theirs"),
        (None, "both noted"),
    ]
    assert not await forget_said(store, USER, ROOM, THREAD), "nothing of theirs is left"


async def test_forget_everything_reaches_what_they_said_in_channels_and_nothing_else(
    store: ObjectStore, backend: Backend
) -> None:
    await _channel_turn(
        store,
        said("user", "mine", at=NOW, user=USER),
        said("user", "theirs", at=NOW, user=OTHER_USER),
    )
    await store.write(f"{MEMORY}decisions.md", "Tuesday")

    report = await forget_everything(store, USER)

    assert report.deleted["channel_threads"] == 1
    record = await read_conversation(store, ROOM, THREAD)
    assert record is not None and record.authors == {OTHER_USER}
    assert record.owner.kind == "channel", "the thread stays the channel's"
    assert backend.raw_read(f"{MEMORY}decisions.md") == "Tuesday"
    assert said_in_of(backend.raw_names(), USER) == set()
    assert said_in_of(backend.raw_names(), OTHER_USER) != set()


async def test_a_member_forgotten_while_the_turn_ran_has_their_words_taken_out_again(
    store: ObjectStore, backend: Backend
) -> None:
    opened = await open_conversation(store, IN_CHANNEL, THREAD)
    transcript = TurnTranscript(store, IN_CHANNEL, THREAD, opened)
    transcript.add(said("user", "mine", at=NOW, user=USER))
    transcript.add(said("user", "theirs", at=NOW, user=OTHER_USER))
    began = datetime.now(UTC)
    await forget_everything(store, USER)  # while Orion answers
    await transcript.write()

    await after_channel_turn(
        store, CHANNEL, THREAD, public=True, authors=transcript.authors, since=began
    )

    record = await read_conversation(store, ROOM, THREAD)
    assert record is not None and record.authors == {OTHER_USER}
    assert said_in_of(backend.raw_names(), USER) == set()


async def test_messages_read_back_from_slack_are_kept_only_after_their_authors_erasure(
    store: ObjectStore,
) -> None:
    await forget_everything(store, USER, now=NOW)
    before, after = NOW - timedelta(minutes=5), NOW + timedelta(minutes=5)
    messages = [
        said("user", "said before", at=before, user=USER),
        said("user", "said since", at=after, user=USER),
        said("user", "another's", at=before, user=OTHER_USER),
        said("assistant", "Orion", at=before),
    ]
    kept = await said_since_erasure(store, messages)
    assert [m.text for m in kept] == ["said since", "another's", "Orion"]


# --- what admins choose -------------------------------------------------------------------


def test_the_channels_choice_wins_within_the_deployments() -> None:
    workspace = ModeChoice(ChannelMode.OFF, USER, NOW)
    channel = ModeChoice(ChannelMode.MEMORY, USER, NOW)
    assert ChannelChoices(workspace, channel).mode(ChannelMode.MEMORY) is ChannelMode.MEMORY
    assert ChannelChoices(workspace, None).mode(ChannelMode.MEMORY) is ChannelMode.OFF
    assert ChannelChoices(None, channel).mode(ChannelMode.ANSWERS) is ChannelMode.ANSWERS
    assert ChannelChoices(None, None).mode(ChannelMode.ANSWERS) is ChannelMode.ANSWERS


@pytest.mark.parametrize(
    "item",
    [
        "{",
        [],
        None,
        {"mode": "everything", "by": USER, "at": "2026-11-23T10:00:00Z"},
        {"mode": "memory", "by": "root", "at": "2026-11-23T10:00:00Z"},
        {"mode": "memory", "by": USER},
        {"mode": ["memory"], "by": USER, "at": "2026-11-23T10:00:00Z"},
        "x" * 100_000,
    ],
)
def test_a_choice_orion_did_not_write_is_no_choice(item: object) -> None:
    assert ModeChoice.parse(item) is None


async def test_an_admins_choice_is_read_back(store: ObjectStore) -> None:
    await choose_mode(store, ChannelMode.ANSWERS, channel_id=None, by=USER)
    await choose_mode(store, ChannelMode.OFF, channel_id=CHANNEL, by=OTHER_USER)
    choices = await read_choices(store, CHANNEL)
    assert choices.mode(ChannelMode.MEMORY) is ChannelMode.OFF
    assert (await read_choices(store, OTHER_CHANNEL)).mode(
        ChannelMode.MEMORY
    ) is ChannelMode.ANSWERS


# --- the channel's memory, forgotten and erased -------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../users/U0123ABCD/notes.md",
        f"../{OTHER_CHANNEL}/x.md",
        "a/../../x",
        "%2e%2e/x",
        ".hidden",
        "",
        "x" * 600,
        None,
        ["notes.md"],
        "a\u202eb",
    ],
)
def test_a_name_outside_the_channels_directory_is_no_file_of_it(name: object) -> None:
    assert channel_file_key(CHANNEL, name) is None


def test_a_name_inside_it_is() -> None:
    key = channel_file_key(CHANNEL, "team/owners.md")
    assert key == f"channels/{CHANNEL}/memory/team/owners.md"
    assert ChannelMemoryScope(CHANNEL).can_write(f"channels/{CHANNEL}/team/owners.md")
    with pytest.raises(ValueError):
        validate_channel(DM)


async def test_the_change_log_is_bounded_newest_first(store: ObjectStore, backend: Backend) -> None:
    for n in range(MAX_CHANGES + 5):
        await record_change(store, CHANNEL, action="write", what=f"/memories/x{n}", by=USER)
    changes = _changes(backend)
    assert len(changes) == MAX_CHANGES
    assert changes[0].what == f"/memories/x{MAX_CHANGES + 4}"


async def test_a_forgotten_file_is_attributed(store: ObjectStore, backend: Backend) -> None:
    await store.write(f"{MEMORY}decisions.md", "Tuesday")
    assert await forget_channel_file(store, CHANNEL, "decisions.md", by=OTHER_USER)
    [change] = _changes(backend)
    assert (change.by, change.action) == (OTHER_USER, "forget")
    assert backend.raw_read(f"{MEMORY}decisions.md") is None


async def test_erasing_a_channel_takes_its_home_and_leaves_other_conversations(
    store: ObjectStore, backend: Backend
) -> None:
    await _channel_turn(store, said("user", "ours", at=NOW, user=USER))
    # A DM conversation with the same thread ts: another owner's, in another home.
    dm_owner = ConversationOwner(OTHER_USER, DM)
    dm = TurnTranscript(store, dm_owner, THREAD, await open_conversation(store, dm_owner, THREAD))
    dm.add(said("user", "a DM", at=NOW))
    await dm.write()
    await store.write(f"{MEMORY}decisions.md", "Tuesday")

    await erase_channel(store, CHANNEL, why="test")

    names = backend.raw_names()
    assert [n for n in names if n.startswith(ROOM.prefix)] == [ROOM.profile_key]
    assert Profile.parse(backend.raw_read(ROOM.profile_key)).erased_at is not None
    assert person(OTHER_USER).conversation_key(THREAD) in names
    assert CHANNEL not in dict(await read_public_channels(store))


async def test_a_turn_writing_while_its_channel_is_erased_takes_its_writes_back(
    store: ObjectStore, backend: Backend
) -> None:
    turn = await Guard.reading(store, ROOM)
    await erase_channel(store, CHANNEL, why="Orion left the channel")
    # The turn, still running, writes after the erasure's deletions...
    await turn.store.write(f"{MEMORY}late.md", "written late")
    # ...and its settle finds the erasure and takes them back.
    with pytest.raises(Forgotten):
        await turn.settle()
    assert backend.raw_read(f"{MEMORY}late.md") is None
    # A turn that began after the erasure (Orion added again) keeps what it writes.
    later = await Guard.reading(store, ROOM)
    await later.store.write(f"{MEMORY}new.md", "after")
    await later.settle()
    assert backend.raw_read(f"{MEMORY}new.md") == "after"


async def test_a_channel_orion_is_added_to_again_takes_its_admins_choices_and_changes(
    store: ObjectStore, backend: Backend
) -> None:
    await choose_mode(store, ChannelMode.MEMORY, channel_id=CHANNEL, by=USER)
    await erase_channel(store, CHANNEL, why="Orion left the channel")

    await choose_mode(store, ChannelMode.ANSWERS, channel_id=CHANNEL, by=OTHER_USER)
    await store.write(f"{MEMORY}decisions.md", "Tuesday")
    await forget_channel_file(store, CHANNEL, "decisions.md", by=OTHER_USER)

    choices = await read_choices(store, CHANNEL)
    assert choices.mode(ChannelMode.MEMORY) is ChannelMode.ANSWERS
    assert [(c.by, c.action) for c in _changes(backend)] == [(OTHER_USER, "forget")]
    assert Profile.parse(backend.raw_read(ROOM.profile_key)).erased_at is not None


async def test_archiving_sets_the_memory_aside_and_unarchiving_brings_it_back(
    store: ObjectStore, backend: Backend
) -> None:
    await store.write(f"{MEMORY}decisions.md", "Tuesday")
    assert await archive_channel(store, CHANNEL) == 1
    assert backend.raw_read(f"{MEMORY}decisions.md") is None
    assert backend.raw_read(f"{ROOM.archived_prefix}decisions.md") == "Tuesday"
    assert await archive_channel(store, CHANNEL, back=True) == 1
    assert backend.raw_read(f"{MEMORY}decisions.md") == "Tuesday"


# --- the public list ----------------------------------------------------------------------


async def test_a_channel_made_private_leaves_the_public_list(store: ObjectStore) -> None:
    await note_channel_visibility(store, CHANNEL, public=True)
    await note_channel_visibility(store, OTHER_CHANNEL, public=True)
    await note_channel_visibility(store, CHANNEL, public=False)
    assert [c for c, _ in await read_public_channels(store)] == [OTHER_CHANNEL]


def test_a_hostile_public_list_is_read_as_far_as_it_is_sound() -> None:
    data = {
        "public": [
            [CHANNEL, 5],
            [DM, 9],  # a DM is never public
            ["../x", 1],
            [OTHER_CHANNEL, True],
            [CHANNEL, 7],  # twice: the first stays
            *([[f"C{n:08d}", n] for n in range(MAX_PUBLIC_CHANNELS * 2)]),
        ]
    }
    parsed = public_channels(data)
    assert DM not in dict(parsed) and OTHER_CHANNEL not in dict(parsed)
    assert dict(parsed)[CHANNEL] == 5
    assert len(parsed) <= MAX_PUBLIC_CHANNELS
    assert public_channels({"public": "everything"}) == []


async def test_a_public_list_orion_cannot_read_is_empty(store: ObjectStore) -> None:
    from app.memory.homes import workspace_channels_key

    await store.write(workspace_channels_key(), "{" * 50_000)
    assert await read_public_channels(store) == []


async def test_concurrent_changes_all_land(store: ObjectStore, backend: Backend) -> None:
    await asyncio.gather(
        *(
            record_change(store, CHANNEL, action="write", what=f"/memories/{n}", by=USER)
            for n in range(5)
        )
    )
    assert len(_changes(backend)) == 5
