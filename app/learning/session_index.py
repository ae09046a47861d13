"""Each person's list of their own summarised threads: `users/{user_id}/sessions.json`.

`recall` needs "this person's past sessions" without listing the whole `sessions/` prefix
(every thread of every person) and without trusting anything to say whose a session is.
The after-turn step keeps this index, newest first:

    [{"thread": "1712345678.123456", "title": "Q3 budget", "updated": "2026-05-04T10:12:00Z",
      "channel": "D0123ABCD"}]

(`channel`, the DM the thread is in, links the entry to its thread; older entries lack it.)

It lives in the person's own memory directory, so the memory tool can see (and damage)
it: reading is tolerant, and `recall` still checks each summary's owner.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, date, datetime

from app.memory.scopes import sessions_index_key, validate_thread_ts
from app.storage.store import ObjectStore, update

# Enough for months of daily use; recall reads at most a few dozen of them.
MAX_INDEXED_SESSIONS = 200
_TIME_LENGTH = len("2026-05-04T10:12:00Z")


def format_time(moment: datetime) -> str:
    """UTC, to the second: how summaries and the index write timestamps."""
    return moment.astimezone(UTC).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def parse_time(text: str) -> datetime | None:
    """A time as `format_time` writes it (`2026-05-04T10:12:00Z`), else None.

    `fromisoformat` (which reads the `Z` as UTC since Python 3.11) rather than
    `strptime`: an index holds up to 200 of them, and strptime took 15 µs each.
    """
    text = text.strip()
    if len(text) != _TIME_LENGTH or text[-1] != "Z" or text[10] != "T":
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


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


def parse_index(raw: str | None) -> list[SessionEntry]:
    """The entries, newest first; anything malformed is skipped, never raised."""
    if not raw:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(data, list):
        return []
    entries: dict[str, SessionEntry] = {}
    for item in data:
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
        if moment is None:
            continue
        channel = item.get("channel")
        entry = SessionEntry(thread, title, moment, channel if isinstance(channel, str) else None)
        if thread not in entries or entries[thread].updated < moment:
            entries[thread] = entry
    return sorted(entries.values(), key=lambda e: e.updated, reverse=True)


def with_session(raw: str | None, entry: SessionEntry) -> str:
    """The index with `entry` added or replaced, newest first, bounded."""
    others = [e for e in parse_index(raw) if e.thread_ts != entry.thread_ts]
    return _written(sorted([entry, *others], key=lambda e: e.updated, reverse=True))


def _written(entries: list[SessionEntry]) -> str:
    # One entry per line, readable in the memory tool. Not `indent=`: that switches json
    # to its pure-Python encoder, which took most of a millisecond for 30 entries.
    lines = (json.dumps(e.to_json(), ensure_ascii=False) for e in entries[:MAX_INDEXED_SESSIONS])
    return "[\n" + ",\n".join(lines) + "\n]"


async def record_session(store: ObjectStore, user_id: str, entry: SessionEntry) -> None:
    await update(store, sessions_index_key(user_id), lambda raw: with_session(raw, entry))


async def remove_session(store: ObjectStore, user_id: str, thread_ts: str) -> None:
    """The index without `thread_ts` (a conversation the person forgot)."""

    def without(raw: str | None) -> str | None:
        entries = parse_index(raw)
        kept = [e for e in entries if e.thread_ts != thread_ts]
        return raw if len(kept) == len(entries) else _written(kept)

    await update(store, sessions_index_key(user_id), without)


class IndexedToday:
    """The index entries this instance has written today: thread, title and day.

    Recall shows the day a session was last updated, so a busy thread's entry needs
    rewriting on its first turn of the day and when its title changes, not on every
    turn: two storage operations fewer for most turns. Only writes that landed are
    remembered, so a failed or abandoned one is retried on the next turn; another
    instance, or this one after forgetting (it is bounded), merely rewrites the entry.
    """

    def __init__(self, max_entries: int = 10_000) -> None:
        self._max_entries = max_entries
        self._written: OrderedDict[tuple[str, str], tuple[str, date]] = OrderedDict()

    def covers(self, user_id: str, entry: SessionEntry) -> bool:
        return self._written.get((user_id, entry.thread_ts)) == _title_and_day(entry)

    def remember(self, user_id: str, entry: SessionEntry) -> None:
        self._written[(user_id, entry.thread_ts)] = _title_and_day(entry)
        self._written.move_to_end((user_id, entry.thread_ts))
        while len(self._written) > self._max_entries:
            self._written.popitem(last=False)


def _title_and_day(entry: SessionEntry) -> tuple[str, date]:
    return entry.title, entry.updated.astimezone(UTC).date()


async def read_index(store: ObjectStore, user_id: str) -> list[SessionEntry]:
    stored = await store.read(sessions_index_key(user_id))
    return parse_index(stored.content if stored is not None else None)
