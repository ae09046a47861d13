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
    archive_channel,
    channel_file_key,
    choose_mode,
    erase_again_if_erased,
    erase_channel,
    forget_channel_file,
    parse_changes,
    read_choices,
    record_change,
    unarchive_channel,
)
from app.learning.channel_mode import ChannelMode
from app.learning.channel_recall import (
    MAX_PUBLIC_CHANNELS,
    note_channel_visibility,
    parse_public_channels,
)
from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.conversations import (
    Standing,
    TurnTranscript,
    forget_said,
    open_conversation,
    read_conversation,
)
from app.learning.erasure import forget_everything, said_since_erasure
from app.memory.scopes import (
    ChannelMemoryScope,
    archived_channel_prefix,
    channel_changes_key,
    channel_conversation_marker_key,
    channel_prefix,
    conversation_record_key,
    public_channels_key,
    said_marker_key,
    validate_channel,
)
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend

CHANNEL, OTHER_CHANNEL, DM = "C0LAUNCH1", "C0OTHER01", "D0123ABCD"
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
IN_CHANNEL = ConversationOwner(USER, CHANNEL, team="T0123ABCD", kind="channel")


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


async def test_a_channel_threads_record_is_found_from_the_channel_and_its_authors(
    store: ObjectStore, backend: Backend
) -> None:
    opened = await open_conversation(store, IN_CHANNEL, THREAD, starts=True)
    assert opened.standing is Standing.NEW
    transcript = TurnTranscript(store, IN_CHANNEL, THREAD, opened)
    transcript.add(
        said("user", "we launch Tuesday", at=NOW, user=USER),
        said("user", "agreed", at=NOW, user=OTHER_USER),
        said("assistant", "Noted.", at=NOW),
    )
    await transcript.written()
    assert transcript.authors == {USER, OTHER_USER}
    assert backend.raw_read(channel_conversation_marker_key(CHANNEL, THREAD)) == ""
    assert backend.raw_read(said_marker_key(USER, THREAD)) == ""
    assert backend.raw_read(said_marker_key(OTHER_USER, THREAD)) == ""
    # No marker among the person's own conversations: the thread is not theirs.
    assert not [n for n in backend.raw_names() if n.startswith(f"people/{USER}/threads/")]


async def test_forgetting_a_member_takes_only_their_messages_out(store: ObjectStore) -> None:
    transcript = TurnTranscript(
        store, IN_CHANNEL, THREAD, await open_conversation(store, IN_CHANNEL, THREAD)
    )
    transcript.add(
        said("user", "mine", at=NOW, user=USER),
        said("user", "theirs", at=NOW, user=OTHER_USER),
        said("assistant", "both noted", at=NOW),
    )
    await transcript.written()
    assert await forget_said(store, USER, THREAD)
    record = await read_conversation(store, THREAD)
    assert record is not None
    assert [(m.user, m.text) for m in record.messages] == [
        (OTHER_USER, "theirs"),
        (None, "both noted"),
    ]
    assert not await forget_said(store, USER, THREAD), "nothing of theirs is left"


async def test_forget_everything_reaches_what_they_said_in_channels_and_nothing_else(
    store: ObjectStore, backend: Backend
) -> None:
    transcript = TurnTranscript(
        store, IN_CHANNEL, THREAD, await open_conversation(store, IN_CHANNEL, THREAD)
    )
    transcript.add(said("user", "mine", at=NOW, user=USER))
    transcript.add(said("user", "theirs", at=NOW, user=OTHER_USER))
    await transcript.written()
    await store.write(f"{channel_prefix(CHANNEL)}decisions.md", "Tuesday")

    report = await forget_everything(store, USER)

    assert report.deleted["channel_messages"] == 1
    record = await read_conversation(store, THREAD)
    assert record is not None and record.authors == {OTHER_USER}
    assert record.owner.kind == "channel", "the thread stays the channel's"
    assert backend.raw_read(f"{channel_prefix(CHANNEL)}decisions.md") == "Tuesday"
    assert backend.raw_read(said_marker_key(USER, THREAD)) is None


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
    "raw",
    [
        "{",
        "[]",
        json.dumps({"mode": "everything", "by": USER, "at": "2026-11-23T10:00:00Z"}),
        json.dumps({"mode": "memory", "by": "root", "at": "2026-11-23T10:00:00Z"}),
        json.dumps({"mode": "memory", "by": USER}),
        "x" * 100_000,
    ],
)
def test_a_choice_orion_did_not_write_is_no_choice(raw: str) -> None:
    assert ModeChoice.parse(raw) is None


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
    assert key == f"channels/{CHANNEL}/team/owners.md"
    assert ChannelMemoryScope(CHANNEL).can_write(key)
    with pytest.raises(ValueError):
        validate_channel(DM)


async def test_the_change_log_is_bounded_newest_first(store: ObjectStore) -> None:
    for n in range(MAX_CHANGES + 5):
        await record_change(store, CHANNEL, action="write", what=f"/memories/x{n}", by=USER)
    stored = await store.read(channel_changes_key(CHANNEL))
    changes = parse_changes(stored.content if stored else None)
    assert len(changes) == MAX_CHANGES
    assert changes[0].what == f"/memories/x{MAX_CHANGES + 4}"


async def test_a_forgotten_file_is_attributed(store: ObjectStore) -> None:
    await store.write(f"{channel_prefix(CHANNEL)}decisions.md", "Tuesday")
    assert await forget_channel_file(store, CHANNEL, "decisions.md", by=OTHER_USER)
    stored = await store.read(channel_changes_key(CHANNEL))
    [change] = parse_changes(stored.content if stored else None)
    assert (change.by, change.action) == (OTHER_USER, "forget")


async def test_erasing_a_channel_takes_its_records_and_leaves_other_conversations(
    store: ObjectStore, backend: Backend
) -> None:
    ours = TurnTranscript(
        store, IN_CHANNEL, THREAD, await open_conversation(store, IN_CHANNEL, THREAD)
    )
    ours.add(said("user", "ours", at=NOW, user=USER))
    await ours.written()
    # A DM conversation, and a marker forged under the channel's records naming it.
    dm_owner = ConversationOwner(OTHER_USER, DM)
    dm = TurnTranscript(
        store, dm_owner, OTHER_THREAD, await open_conversation(store, dm_owner, OTHER_THREAD)
    )
    dm.add(said("user", "a DM", at=NOW))
    await dm.written()
    await store.write(channel_conversation_marker_key(CHANNEL, OTHER_THREAD), "")
    await store.write(f"{channel_prefix(CHANNEL)}decisions.md", "Tuesday")

    await erase_channel(store, CHANNEL, why="test")

    names = backend.raw_names()
    assert conversation_record_key(THREAD) not in names
    assert conversation_record_key(OTHER_THREAD) in names, "the record says it is a DM's"
    assert not [
        n for n in names if n.startswith((f"channels/{CHANNEL}/", f"channel-records/{CHANNEL}/"))
    ]


async def test_a_turn_writing_while_its_channel_is_erased_takes_its_writes_back(
    store: ObjectStore, backend: Backend
) -> None:
    began = datetime.now(UTC)
    await erase_channel(store, CHANNEL, why="Orion left the channel")
    # The turn, still running, writes after the erasure's deletions...
    await store.write(f"{channel_prefix(CHANNEL)}late.md", "written late")
    # ...and checks the tombstone after its writes.
    assert await erase_again_if_erased(store, CHANNEL, began)
    assert backend.raw_read(f"{channel_prefix(CHANNEL)}late.md") is None
    # A turn that began after the erasure (Orion added again) keeps what it writes.
    later = datetime.now(UTC) + timedelta(seconds=1)
    await store.write(f"{channel_prefix(CHANNEL)}new.md", "after")
    assert not await erase_again_if_erased(store, CHANNEL, later)


async def test_archiving_sets_the_memory_aside_and_unarchiving_brings_it_back(
    store: ObjectStore, backend: Backend
) -> None:
    await store.write(f"{channel_prefix(CHANNEL)}decisions.md", "Tuesday")
    assert await archive_channel(store, CHANNEL) == 1
    assert backend.raw_read(f"{channel_prefix(CHANNEL)}decisions.md") is None
    assert backend.raw_read(f"{archived_channel_prefix(CHANNEL)}decisions.md") == "Tuesday"
    assert await unarchive_channel(store, CHANNEL) == 1
    assert backend.raw_read(f"{channel_prefix(CHANNEL)}decisions.md") == "Tuesday"


# --- the public list ----------------------------------------------------------------------


async def test_a_channel_made_private_leaves_the_public_list(store: ObjectStore) -> None:
    await note_channel_visibility(store, CHANNEL, public=True)
    await note_channel_visibility(store, OTHER_CHANNEL, public=True)
    await note_channel_visibility(store, CHANNEL, public=False)
    stored = await store.read(public_channels_key())
    assert [c for c, _ in parse_public_channels(stored.content if stored else None)] == [
        OTHER_CHANNEL
    ]


def test_a_hostile_public_list_is_read_as_far_as_it_is_sound() -> None:
    raw = json.dumps(
        {
            "channels": [
                [CHANNEL, 5],
                [DM, 9],  # a DM is never public
                ["../x", 1],
                [OTHER_CHANNEL, True],
                [CHANNEL, 7],  # twice: the first stays
                *([[f"C{n:08d}", n] for n in range(MAX_PUBLIC_CHANNELS * 2)]),
            ]
        }
    )
    parsed = parse_public_channels(raw)
    assert DM not in dict(parsed) and OTHER_CHANNEL not in dict(parsed)
    assert dict(parsed)[CHANNEL] == 5
    assert len(parsed) <= MAX_PUBLIC_CHANNELS
    assert parse_public_channels("{" * 50_000) == []


async def test_concurrent_changes_all_land(store: ObjectStore) -> None:
    await asyncio.gather(
        *(
            record_change(store, CHANNEL, action="write", what=f"/memories/{n}", by=USER)
            for n in range(5)
        )
    )
    stored = await store.read(channel_changes_key(CHANNEL))
    assert len(parse_changes(stored.content if stored else None)) == 5
