"""Forgetting: one thing a person points at, or everything Orion keeps about them.

Everything about a person is found without listing the bucket: their directory
(`users/{id}/`: preferences and notes), Orion's records about them (`people/{id}/`: their
conversation index, search index, welcome, and a marker per conversation record), the
records of their conversations (`conversations/{thread}.json`: who opened each, and its
transcript), the summaries and notes of their threads (`sessions/{thread}/`, for the
threads their records name and the threads of their DM), and the saved contexts of the
threads in their DM with Orion (`threads/{dm}/`; those saved before contexts stopped
keeping a copy of the memory restored there hold one), and what they wrote in channel
threads Orion was mentioned in (their messages in those transcripts, found by the markers
`people/{id}/said/{thread}`: everyone else's messages, the channel's summaries and the
channel's memory of what was decided stay — they are the channel's, not theirs). Which
threads are theirs comes
only from Orion's records, never from a file the memory tool can write: a thread whose
record names someone else is left alone, whatever else points at it. Only a person's own
click, or an operator's command, erases everything: no tool offers it to the model.

Forgetting one thing reaches every copy Orion keeps of it: a preference or a note goes
with the undo records that hold its old content, and with the welcome back (a model wrote
it from what Orion knew then: it is prepared again at the next turn's end); a
conversation with its summary and notes, its transcript, its saved context, its undo
records, its entries in the person's indexes, and the welcome when it names it.

A turn finishing while its person erases must not write their data back. So an erasure
first leaves a tombstone — `erasures/{hash of the id}`, which holds no id — and only then
deletes; every writer of the person's data (a turn's summary, index, welcome and memory
tool — also a turn that failed or was stopped —, a saved thread context, a captured
preference) checks, after its writes, whether its person was erased since it began
(`erased_since`), and if so erases again. Either the erasure's deletions saw the write,
or the writer's check sees the tombstone.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.learning.conversation_record import TranscriptMessage
from app.learning.conversations import (
    forget_said,
    forget_transcript,
    read_conversation,
    whose,
)
from app.learning.preferences import without_preference
from app.learning.search_index import remove_search_documents
from app.learning.session_index import read_index, remove_session
from app.learning.welcome import forget_welcome
from app.memory.key_prefixes import ERASURES_PREFIX
from app.memory.scopes import (
    conversation_record_key,
    is_undo_id,
    person_records_prefix,
    person_settings_key,
    session_prefix,
    thread_context_key,
    thread_contexts_prefix,
    thread_of_context_key,
    thread_of_marker_key,
    thread_of_said_marker_key,
    undo_marker_key,
    undo_markers_prefix,
    undo_record_key,
    user_preferences_key,
    user_prefix,
    validate_thread_ts,
)
from app.memory.tolerant_json import load_json_object
from app.storage.store import ObjectInfo, ObjectStore, StoredObject, update

DELETE_CONCURRENCY = 16
# Kinds most people have none of: reported only when there were some.
_COUNTED_WHEN_FOUND = ("undo_records", "settings", "conversations", "channel_messages")


@dataclass
class ErasureReport:
    """What an erasure removed, by kind (never what it said), and the DM channels whose
    saved thread contexts it looked through (given, and named by the person's index)."""

    deleted: Counter[str] = field(default_factory=Counter)
    channels: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


def tombstone_key(user_id: str) -> str:
    digest = hashlib.sha256(f"orion-erasure:{user_id}".encode()).hexdigest()[:32]
    return f"{ERASURES_PREFIX}{digest}"


async def forget_everything(
    store: ObjectStore,
    user_id: str,
    *,
    dm_channels: tuple[str, ...] = (),
    now: datetime | None = None,
) -> ErasureReport:
    """Delete every object holding the person's content; `dm_channels`: their DM(s) with
    Orion, whose thread contexts go too (the index adds the channels it knows)."""
    await write_tombstone(store, tombstone_key(user_id), now or datetime.now(UTC))
    return await _erase(store, user_id, dm_channels)


async def write_tombstone(store: ObjectStore, key: str, moment: datetime) -> None:
    """When an erasure began (a person's, a channel's), written before it deletes."""
    # To the microsecond: a turn that began just after the erasure is not taken for one
    # that was running when it came.
    await store.write(key, json.dumps({"erased_at": moment.isoformat()}))


async def erasure_time(store: ObjectStore, user_id: str) -> datetime | None:
    """When the person last asked to be forgotten, if ever."""
    return await tombstone_time(store, tombstone_key(user_id))


async def tombstone_time(store: ObjectStore, key: str) -> datetime | None:
    """When the erasure whose tombstone is `key` began, if there was one."""
    stored = await store.read(key)
    if stored is None:
        return None
    erased_at = load_json_object(stored.content, what="erasure_tombstone").get("erased_at")
    if not isinstance(erased_at, str):
        return None
    try:
        moment = datetime.fromisoformat(erased_at)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def erased_after(erased_at: datetime | None, since: datetime) -> bool:
    return erased_at is not None and erased_at >= since


async def erased_since(store: ObjectStore, user_id: str, since: datetime) -> bool:
    """Whether the person asked to be forgotten at or after `since`."""
    return erased_after(await erasure_time(store, user_id), since)


async def forget_again_if_erased(
    store: ObjectStore, user_id: str, since: datetime, *, dm_channels: tuple[str, ...] = ()
) -> bool:
    """After a turn's writes: if its person was erased meanwhile, erase what it wrote."""
    if not await erased_since(store, user_id, since):
        return False
    await _erase(store, user_id, dm_channels)
    return True


async def said_since_erasure(
    store: ObjectStore, messages: Sequence[TranscriptMessage]
) -> list[TranscriptMessage]:
    """The messages of a channel's thread (read from Slack) that may be kept: none that
    their author wrote before they last asked to be forgotten. One tombstone read per
    author, at once. Raises what storage raises."""
    authors = sorted({m.user for m in messages if m.user is not None})
    times = dict(
        zip(authors, await asyncio.gather(*(erasure_time(store, a) for a in authors)), strict=True)
    )
    return [
        m
        for m in messages
        if m.user is None or (erased := times.get(m.user)) is None or m.at > erased
    ]


async def forget_preference(store: ObjectStore, user_id: str, key: str) -> bool:
    """One preference of the person's (with where it was learned), the undo records that
    hold the file as it was (with it), and the welcome; True when there was one."""
    forgotten = False

    def transform(current: str | None) -> str | None:
        nonlocal forgotten
        kept = without_preference(current, key)
        forgotten = kept != current
        return kept

    preferences = user_preferences_key(user_id)
    # First: an Undo clicked in between would bring it back.
    await _drop_undo_records_holding(store, user_id, lambda changed: changed == preferences)
    await update(store, preferences, transform)
    if forgotten:
        await forget_welcome(store, user_id)
    return forgotten


async def forget_note(store: ObjectStore, user_id: str, key: str) -> bool:
    """One file of the person's directory, the undo records that would bring it back, and
    the welcome; anything else (another person's) is refused."""
    if not key.startswith(user_prefix(user_id)) or "/../" in f"/{key}/":
        raise ValueError("not one of this person's notes")
    await _drop_undo_records_holding(store, user_id, lambda changed: changed == key)
    forgotten = await store.delete(key)
    if forgotten:
        await forget_welcome(store, user_id)
    return forgotten


async def forget_conversation(store: ObjectStore, user_id: str, thread_ts: str) -> int:
    """One thread of the person's: its summary and notes, its transcript, its saved context
    (in the channel Orion recorded), the person's undo records naming its files, its index
    entries and the welcome back to it; how many objects changed or went, 0 when it is
    not theirs.

    Whose it is comes from Orion's records alone — the thread's record, else (a thread
    from before records were kept) the person's conversation index: nothing in the
    summary (which the memory tool can edit) is asked.
    """
    validate_thread_ts(thread_ts)
    index, record = await asyncio.gather(
        read_index(store, user_id, expired_too=True), read_conversation(store, thread_ts)
    )
    entry = next((e for e in index if e.thread_ts == thread_ts), None)
    owned = whose(record, user_id)
    if owned is False or (owned is None and entry is None):
        return 0
    # By directory, not by what is there now: a file an answer deleted is absent, and an
    # Undo of that answer would create it again.
    session = session_prefix(thread_ts)
    await _drop_undo_records_holding(store, user_id, lambda changed: changed.startswith(session))
    keys = [obj.key for obj in await store.list(session)]
    channel = record.owner.channel if record is not None else entry.channel if entry else None
    if channel:
        # Orion recorded it from Slack's event; a malformed one names no context of Orion's.
        with contextlib.suppress(ValueError):
            keys.append(thread_context_key(channel, thread_ts))
    deleted = await _delete_all(store, keys)
    # The transcript is emptied, not deleted: the thread stays theirs, and what Slack
    # still shows of it is never read back in.
    emptied = owned and await forget_transcript(store, user_id, thread_ts)
    await forget_welcome(store, user_id, thread_ts=thread_ts)
    # The index entries last: they make the thread this person's (one from before records
    # were kept), so a forgetting that storage cuts short can be clicked again and finish.
    await remove_search_documents(store, user_id, {thread_ts})
    await remove_session(store, user_id, thread_ts)
    return max(1, deleted + int(bool(emptied)))


async def _erase(store: ObjectStore, user_id: str, dm_channels: tuple[str, ...]) -> ErasureReport:
    index = await read_index(store, user_id, expired_too=True)  # before the records go
    channels = {*dm_channels, *(e.channel for e in index if e.channel)}
    prefixes, searched = [], []
    for channel in sorted(channels):
        try:
            prefixes.append(thread_contexts_prefix(channel))
        except ValueError:
            continue  # not a channel id (an edited index): nothing of Orion's is there
        searched.append(channel)
    contexts = await asyncio.gather(*(store.list(prefix) for prefix in prefixes))
    context_keys = [obj.key for listing in contexts for obj in listing]
    own, records = await asyncio.gather(
        store.list(user_prefix(user_id)), store.list(person_records_prefix(user_id))
    )
    threads = (
        {e.thread_ts for e in index}
        | {ts for key in context_keys if (ts := thread_of_context_key(key)) is not None}
        | {ts for obj in records if (ts := thread_of_marker_key(user_id, obj.key)) is not None}
    )
    # Whose each thread is, by its record: another person's thread (a forged event may
    # have left a context or an index entry pointing at it) keeps all it has.
    owners = await _owners(store, user_id, sorted(threads))
    theirs = sorted(ts for ts, owned in owners.items() if owned is not False)
    sessions = await asyncio.gather(*(store.list(session_prefix(ts)) for ts in theirs))
    # Their undo records (each the old content of files that changed), found by the
    # markers among their records; and their settings.
    undo_records = [undo_record_key(undo_id) for undo_id in _undo_ids(records, user_id)]

    report = ErasureReport(channels=tuple(searched))
    said_in = {ts for obj in records if (ts := thread_of_said_marker_key(user_id, obj.key))}
    if said_in:
        report.deleted["channel_messages"] = await _forget_said_in(store, user_id, said_in)
    for kind, keys in (
        ("person", [obj.key for obj in own]),
        ("sessions", [obj.key for listing in sessions for obj in listing]),
        ("conversations", [conversation_record_key(ts) for ts in theirs if owners[ts]]),
        ("thread_contexts", context_keys),
        ("undo_records", undo_records),
        ("settings", [person_settings_key(user_id)]),
        # Last: the index is what finds the rest, should this erasure be cut short.
        ("records", [obj.key for obj in records]),
    ):
        deleted = await _delete_all(store, keys)
        if deleted or kind not in _COUNTED_WHEN_FOUND:
            report.deleted[kind] = deleted
    return report


async def _forget_said_in(store: ObjectStore, user_id: str, threads: set[str]) -> int:
    """What the person wrote in channel conversations, out of their transcripts (before
    the markers that find them go, with the rest of their records); in how many."""
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def forget(thread_ts: str) -> bool:
        async with limit:
            return await forget_said(store, user_id, thread_ts)

    return sum(await asyncio.gather(*(forget(ts) for ts in sorted(threads))))


async def _owners(store: ObjectStore, user_id: str, threads: list[str]) -> dict[str, bool | None]:
    """For each thread, whether its record makes it the person's (None: it has none)."""
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def owner(thread_ts: str) -> bool | None:
        async with limit:
            return whose(await read_conversation(store, thread_ts), user_id)

    return dict(zip(threads, await asyncio.gather(*map(owner, threads)), strict=True))


async def _drop_undo_records_holding(
    store: ObjectStore, user_id: str, forgotten: Callable[[str], bool]
) -> int:
    """Drop the person's undo records that name a file `forgotten` says goes; how many.

    Forgetting one thing must not be undone by an older answer's Undo: its record holds the
    file's old content, and the undo check would take a file the answer deleted, and that
    is still absent, for "unchanged since" and create it again. Dropped, the record's Undo
    says it can't be undone any more, and the old content is not kept for the retention
    window. Dropped before the files go, so that no Undo can bring one back in between.
    """
    ids = _undo_ids(await store.list(undo_markers_prefix(user_id)), user_id)
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def drop_if_holding(undo_id: str) -> bool:
        async with limit:
            stored = await store.read(undo_record_key(undo_id))
            if stored is None or not any(forgotten(key) for key in _changed_keys(stored)):
                return False
            # The record, then its marker: the marker is what finds a record left behind.
            await store.delete(undo_record_key(undo_id))
            await store.delete(undo_marker_key(user_id, undo_id))
            return True

    return sum(await asyncio.gather(*(drop_if_holding(undo_id) for undo_id in ids)))


def _undo_ids(listing: list[ObjectInfo], user_id: str) -> list[str]:
    """The ids of the person's undo records, from their markers in `listing`."""
    markers = undo_markers_prefix(user_id)
    return [
        undo_id
        for obj in listing
        if obj.key.startswith(markers) and is_undo_id(undo_id := obj.key[len(markers) :])
    ]


def _changed_keys(stored: StoredObject) -> list[str]:
    """The files an undo record would rewrite (its format: app/learning/undo.py, which
    imports this module, so only the keys are read here)."""
    changes = load_json_object(stored.content, what="undo_record").get("changes")
    if not isinstance(changes, list):
        return []
    return [c["key"] for c in changes if isinstance(c, dict) and isinstance(c.get("key"), str)]


async def _delete_all(store: ObjectStore, keys: list[str]) -> int:
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def delete(key: str) -> bool:
        async with limit:
            return await store.delete(key)

    return sum(await asyncio.gather(*(delete(key) for key in keys)))
