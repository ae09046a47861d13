"""Forgetting: one thing a person points at, or everything Orion keeps about them.

Everything about a person is found without listing the bucket: their directory
(`users/{id}/`: preferences and notes), Orion's records about them (`people/{id}/`: their
conversation index, search index and welcome), the summaries and notes of
their threads (`sessions/{thread}/`, for the threads their index names and the threads of
their DM), and the saved contexts of the threads in their DM with Orion
(`threads/{dm}/`, which hold a copy of the memory restored there). Which threads are
theirs comes only from Orion's records, never from a file the memory tool can write. Only
a person's own click, or an operator's command, erases everything: no tool offers it to
the model.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.learning.search_index import remove_search_documents
from app.learning.session_index import read_index, remove_session
from app.memory.key_prefixes import ERASURES_PREFIX
from app.memory.scopes import (
    is_undo_id,
    person_records_prefix,
    person_settings_key,
    session_prefix,
    thread_context_key,
    thread_contexts_prefix,
    thread_of_context_key,
    undo_marker_key,
    undo_markers_prefix,
    undo_record_key,
    user_prefix,
    validate_thread_ts,
)
from app.memory.tolerant_json import load_json_object
from app.storage.store import ObjectInfo, ObjectStore, StoredObject

DELETE_CONCURRENCY = 16
# Kinds most people have none of: reported only when there were some.
_COUNTED_WHEN_FOUND = ("undo_records", "settings")


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
    moment = now or datetime.now(UTC)
    # To the microsecond: a turn that began just after the erasure is not taken for one
    # that was running when it came.
    await store.write(tombstone_key(user_id), json.dumps({"erased_at": moment.isoformat()}))
    return await _erase(store, user_id, dm_channels)


async def erasure_time(store: ObjectStore, user_id: str) -> datetime | None:
    """When the person last asked to be forgotten (to the second), if ever."""
    stored = await store.read(tombstone_key(user_id))
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


async def forget_note(store: ObjectStore, user_id: str, key: str) -> bool:
    """One file of the person's directory, and the undo records that would bring it back;
    anything else (another person's) is refused."""
    if not key.startswith(user_prefix(user_id)) or "/../" in f"/{key}/":
        raise ValueError("not one of this person's notes")
    await _drop_undo_records_holding(store, user_id, lambda changed: changed == key)
    return await store.delete(key)


async def forget_conversation(store: ObjectStore, user_id: str, thread_ts: str) -> int:
    """One thread of the person's: its summary and notes, its saved context (in the channel
    their index records), the person's undo records naming its files, and its index entry;
    how many objects changed or went, 0 when it is not theirs.

    Whose it is comes from the person's conversation index alone, which only Orion writes:
    nothing in the summary (which the memory tool can edit) is asked.
    """
    validate_thread_ts(thread_ts)
    index = await read_index(store, user_id, expired_too=True)
    entry = next((e for e in index if e.thread_ts == thread_ts), None)
    if entry is None:
        return 0
    # By directory, not by what is there now: a file an answer deleted is absent, and an
    # Undo of that answer would create it again.
    session = session_prefix(thread_ts)
    await _drop_undo_records_holding(store, user_id, lambda changed: changed.startswith(session))
    keys = [obj.key for obj in await store.list(session)]
    if entry.channel:
        # Orion recorded it from Slack's event; a malformed one names no context of Orion's.
        with contextlib.suppress(ValueError):
            keys.append(thread_context_key(entry.channel, thread_ts))
    deleted = await _delete_all(store, keys)
    # The index entry last: it is what makes the thread this person's, so a forgetting
    # that storage cuts short can be clicked again and finish.
    await remove_search_documents(store, user_id, {thread_ts})
    await remove_session(store, user_id, thread_ts)
    return max(1, deleted)


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
    threads = {e.thread_ts for e in index} | {
        ts for key in context_keys if (ts := thread_of_context_key(key)) is not None
    }
    sessions = await asyncio.gather(*(store.list(session_prefix(ts)) for ts in sorted(threads)))
    own, records = await asyncio.gather(
        store.list(user_prefix(user_id)), store.list(person_records_prefix(user_id))
    )
    # Their undo records (each the old content of files that changed), found by the
    # markers among their records; and their settings.
    undo_records = [undo_record_key(undo_id) for undo_id in _undo_ids(records, user_id)]

    report = ErasureReport(channels=tuple(searched))
    for kind, keys in (
        ("person", [obj.key for obj in own]),
        ("sessions", [obj.key for listing in sessions for obj in listing]),
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
