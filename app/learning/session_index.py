"""Each person's list of their own conversations: `people/{user_id}/conversations.json`.

`recall`, the Home tab and forgetting need "this person's past threads" without listing
the whole `sessions/` prefix (every thread of every person), and they must be able to
trust the answer: a thread this index lists is the person's, because only Orion writes
it. It lives among Orion's own records, outside every path the memory tool can reach, and
the after-turn step keeps it, newest first:

    [{"thread": "1712345678.123456", "title": "Q3 budget", "updated": "2026-05-04T10:12:00Z",
      "channel": "D0123ABCD"}]

(`channel`, the DM the thread is in, links the entry to its thread and its saved context.)
Every conversation within the retention window is listed: entries older than the window
are skipped when read and dropped when the index is written.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, date, datetime

from app.learning.timestamps import format_time, parse_time
from app.memory.retention import cutoff_of
from app.memory.scopes import conversations_index_key, validate_thread_ts
from app.memory.tolerant_json import load_json_list
from app.storage.store import ObjectStore, update

# The retention window bounds the index; this bounds it against a flood of threads (333
# new conversations a day for 30 days), far beyond what a person holds.
MAX_INDEXED_SESSIONS = 10_000


@dataclass(frozen=True)
class SessionEntry:
    thread_ts: str
    title: str
    updated: datetime
    channel: str | None = None

    def to_json(self) -> dict[str, str]:
        item = {"thread": self.thread_ts, "title": self.title, "updated": format_time(self.updated)}
        if self.channel:
            item["channel"] = self.channel
        return item


def parse_index(raw: str | None, *, cutoff: datetime | None = None) -> list[SessionEntry]:
    """The entries, newest first, none older than `cutoff`; anything malformed is skipped
    (and logged), never raised."""
    entries: dict[str, SessionEntry] = {}
    for item in load_json_list(raw, what="conversations_index"):
        if not isinstance(item, dict):
            continue
        thread, title, updated = item.get("thread"), item.get("title"), item.get("updated")
        if not (isinstance(thread, str) and isinstance(title, str) and isinstance(updated, str)):
            continue
        moment = parse_time(updated)
        try:
            validate_thread_ts(thread)
        except ValueError:
            continue
        if moment is None or (cutoff is not None and moment < cutoff):
            continue
        channel = item.get("channel")
        entry = SessionEntry(thread, title, moment, channel if isinstance(channel, str) else None)
        if thread not in entries or entries[thread].updated < moment:
            entries[thread] = entry
    return sorted(entries.values(), key=lambda e: e.updated, reverse=True)


def with_session(raw: str | None, entry: SessionEntry, *, cutoff: datetime | None = None) -> str:
    """The index with `entry` added or replaced, newest first, without expired entries."""
    others = [e for e in parse_index(raw, cutoff=cutoff) if e.thread_ts != entry.thread_ts]
    return _written(sorted([entry, *others], key=lambda e: e.updated, reverse=True))


def _written(entries: list[SessionEntry]) -> str:
    # One entry per line, readable in the memory tool. Not `indent=`: that switches json
    # to its pure-Python encoder, which took most of a millisecond for 30 entries.
    lines = (json.dumps(e.to_json(), ensure_ascii=False) for e in entries[:MAX_INDEXED_SESSIONS])
    return "[\n" + ",\n".join(lines) + "\n]"


async def record_session(store: ObjectStore, user_id: str, entry: SessionEntry) -> None:
    cutoff = cutoff_of(store)
    await update(
        store, conversations_index_key(user_id), lambda raw: with_session(raw, entry, cutoff=cutoff)
    )


async def remove_session(store: ObjectStore, user_id: str, thread_ts: str) -> None:
    """The index without `thread_ts` (a conversation the person forgot)."""

    def without(raw: str | None) -> str | None:
        entries = parse_index(raw)
        kept = [e for e in entries if e.thread_ts != thread_ts]
        return raw if len(kept) == len(entries) else _written(kept)

    await update(store, conversations_index_key(user_id), without)


class IndexedToday:
    """The index entries this instance has written today: thread, title and day.

    Recall shows the day a session was last updated, so a busy thread's entry needs
    rewriting on its first turn of the day and when its title changes, not on every
    turn: two storage operations fewer for most turns. Only writes that landed are
    remembered, so a failed or abandoned one is retried on the next turn; another
    instance, or this one after forgetting (it is bounded), merely rewrites the entry.
    An erasure (on any instance) after a write deletes the entry: a person erased since
    then is not covered, so their next turn writes it again.
    """

    def __init__(self, max_entries: int = 10_000) -> None:
        self._max_entries = max_entries
        self._written: OrderedDict[tuple[str, str], tuple[str, date, datetime]] = OrderedDict()

    def covers(
        self, user_id: str, entry: SessionEntry, *, erased_at: datetime | None = None
    ) -> bool:
        written = self._written.get((user_id, entry.thread_ts))
        if written is None or written[:2] != _title_and_day(entry):
            return False
        return erased_at is None or erased_at < written[2]

    def remember(self, user_id: str, entry: SessionEntry) -> None:
        written_at = datetime.now(UTC)
        self._written[(user_id, entry.thread_ts)] = (*_title_and_day(entry), written_at)
        self._written.move_to_end((user_id, entry.thread_ts))
        while len(self._written) > self._max_entries:
            self._written.popitem(last=False)


def _title_and_day(entry: SessionEntry) -> tuple[str, date]:
    return entry.title, entry.updated.astimezone(UTC).date()


async def read_index(
    store: ObjectStore, user_id: str, *, expired_too: bool = False
) -> list[SessionEntry]:
    """The person's conversations within the store's retention window (`expired_too`:
    every entry still stored, for an erasure)."""
    stored = await store.read(conversations_index_key(user_id))
    cutoff = None if expired_too else cutoff_of(store)
    return parse_index(stored.content if stored is not None else None, cutoff=cutoff)
