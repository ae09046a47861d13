"""Forgetting: one thing a person points at, or everything Orion keeps about them.

Everything about a person is found without listing the bucket: their directory
(`users/{id}/`: preferences, notes, session index, welcome), the summaries and notes of
their threads (`sessions/{thread}/`, for the threads their index names and the threads of
their DM), and the saved contexts of the threads in their DM with Orion
(`threads/{dm}/`, which hold a copy of the memory restored there). Only a person's own
click, or an operator's command, erases everything: no tool offers it to the model.

A turn finishing while its person erases must not write their data back. So an erasure
first leaves a tombstone — `erasures/{hash of the id}`, which holds no id — and only then
deletes; a turn that wrote something checks, after its writes, whether its person was
erased since it began (`erased_since`), and if so erases again. Either the erasure's
deletions saw the turn's write, or the turn's check sees the tombstone.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.learning.session_index import format_time, parse_time, read_index, remove_session
from app.learning.summary_file import parse_summary
from app.memory.scopes import (
    session_context_key,
    session_prefix,
    thread_context_key,
    thread_contexts_prefix,
    thread_of_context_key,
    user_prefix,
    validate_thread_ts,
)
from app.storage.store import ObjectStore

ERASURES_PREFIX = "erasures/"
DELETE_CONCURRENCY = 16


@dataclass
class ErasureReport:
    """What an erasure removed, by kind (never what it said)."""

    deleted: Counter[str] = field(default_factory=Counter)

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
    await store.write(tombstone_key(user_id), json.dumps({"erased_at": format_time(moment)}))
    return await _erase(store, user_id, dm_channels)


async def erased_since(store: ObjectStore, user_id: str, since: datetime) -> bool:
    """Whether the person asked to be forgotten at or after `since`."""
    stored = await store.read(tombstone_key(user_id))
    if stored is None:
        return False
    try:
        erased_at = parse_time(json.loads(stored.content).get("erased_at", ""))
    except (ValueError, AttributeError):
        return False
    # The tombstone is written to the second: a turn that began in the same second counts.
    return erased_at is not None and erased_at >= since.replace(microsecond=0)


async def forget_again_if_erased(
    store: ObjectStore, user_id: str, since: datetime, *, dm_channels: tuple[str, ...] = ()
) -> bool:
    """After a turn's writes: if its person was erased meanwhile, erase what it wrote."""
    if not await erased_since(store, user_id, since):
        return False
    await _erase(store, user_id, dm_channels)
    return True


async def forget_note(store: ObjectStore, user_id: str, key: str) -> bool:
    """One file of the person's directory; anything else (another person's) is refused."""
    if not key.startswith(user_prefix(user_id)) or "/../" in f"/{key}/":
        raise ValueError("not one of this person's notes")
    return await store.delete(key)


async def forget_conversation(store: ObjectStore, user_id: str, thread_ts: str) -> int:
    """One thread of the person's: its summary and notes, its saved context (in the channel
    their index records) and its index entry; how many objects changed or went, 0 when it
    is not theirs.

    The index is where the memory tool can write, so it alone proves nothing: a thread whose
    summary names somebody else only leaves this person's index, and its summary stays
    with its owner.
    """
    validate_thread_ts(thread_ts)
    index, stored = await asyncio.gather(
        read_index(store, user_id), store.read(session_context_key(thread_ts))
    )
    entry = next((e for e in index if e.thread_ts == thread_ts), None)
    owner = parse_summary(stored.content).user_id if stored is not None else None
    if entry is None and owner != user_id:
        return 0
    if owner not in (None, user_id):
        await remove_session(store, user_id, thread_ts)
        return 1
    keys = [obj.key for obj in await store.list(session_prefix(thread_ts))]
    if entry is not None and entry.channel:
        # Not a channel id (an edited index): no context of Orion's is there.
        with contextlib.suppress(ValueError):
            keys.append(thread_context_key(entry.channel, thread_ts))
    deleted = await _delete_all(store, keys)
    await remove_session(store, user_id, thread_ts)
    return max(1, deleted)


async def _erase(store: ObjectStore, user_id: str, dm_channels: tuple[str, ...]) -> ErasureReport:
    index = await read_index(store, user_id)  # before the person's directory goes
    channels = {*dm_channels, *(e.channel for e in index if e.channel)}
    prefixes = []
    for channel in sorted(channels):
        try:
            prefixes.append(thread_contexts_prefix(channel))
        except ValueError:
            continue  # not a channel id (an edited index): nothing of Orion's is there
    contexts = await asyncio.gather(*(store.list(prefix) for prefix in prefixes))
    context_keys = [obj.key for listing in contexts for obj in listing]
    threads = {e.thread_ts for e in index} | {
        ts for key in context_keys if (ts := thread_of_context_key(key)) is not None
    }
    sessions = await asyncio.gather(*(store.list(session_prefix(ts)) for ts in sorted(threads)))
    own = await store.list(user_prefix(user_id))

    report = ErasureReport()
    for kind, keys in (
        ("person", [obj.key for obj in own]),
        ("sessions", [obj.key for listing in sessions for obj in listing]),
        ("thread_contexts", context_keys),
    ):
        report.deleted[kind] = await _delete_all(store, keys)
    return report


async def _delete_all(store: ObjectStore, keys: list[str]) -> int:
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def delete(key: str) -> bool:
        async with limit:
            return await store.delete(key)

    return sum(await asyncio.gather(*(delete(key) for key in keys)))
