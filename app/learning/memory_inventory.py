"""Everything Orion keeps about one person, read from storage: what they can see on their
Home tab, what Claude reads out when asked "what do you remember about me?", and what
an export or an erasure covers.

Three kinds, each from where it lives: preferences (`users/{id}/preferences.json`, with
when and where each was learned), notes (every other file Claude saved in
`users/{id}/`), and conversations (the threads of the person's conversation index, among
Orion's own records, with their summaries) — and how many channel threads hold what they
wrote there (their markers `people/{id}/said/`: the threads are the channels', the
messages theirs, and Forget everything takes them out). The index says which threads are the
person's, and each thread's record (app/learning/conversations.py) can only take one
away: no file the memory tool can write decides what is shown.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime

from app.learning.conversations import read_conversation, whose
from app.learning.preferences import StoredPreference, parse_preferences
from app.learning.session_index import SessionEntry, read_index
from app.learning.summary_file import parse_summary
from app.memory.retention import cutoff_of
from app.memory.scopes import (
    said_markers_prefix,
    session_context_key,
    to_memory_path,
    user_preferences_key,
    user_prefix,
)
from app.storage.store import ObjectStore

PREVIEW_LINES = 3
PREVIEW_CHARS = 200
# Summaries read at once: the Home tab shows the newest; an export reads them all.
READ_CONCURRENCY = 8


@dataclass(frozen=True)
class Note:
    key: str
    path: str  # as Claude sees it: /memories/users/U…/notes.md
    size: int
    updated: datetime
    preview: str  # its first lines
    content: str | None = None  # the whole file, in a full inventory


@dataclass(frozen=True)
class Conversation:
    thread_ts: str
    channel: str | None
    title: str
    updated: datetime
    summary: str | None  # None when its summary is gone


@dataclass(frozen=True)
class MemoryInventory:
    user_id: str
    preferences: list[StoredPreference]
    notes: list[Note]
    conversations: list[Conversation]  # the newest, as many as were asked for
    conversations_total: int = 0  # how many the person's index lists in all
    channel_threads: int = 0  # channel threads whose transcripts hold what they wrote

    @property
    def empty(self) -> bool:
        return not (self.preferences or self.notes or self.conversations or self.channel_threads)

    def counts(self) -> dict[str, int]:
        """How many of each kind (what logs and spans say: never the content)."""
        return {
            "preferences": len(self.preferences),
            "notes": len(self.notes),
            "conversations": len(self.conversations),
            "conversations_total": self.conversations_total,
            "channel_threads": self.channel_threads,
        }


async def take_inventory(
    store: ObjectStore, user_id: str, *, full: bool = False, conversations: int | None = 20
) -> MemoryInventory:
    """What Orion keeps about `user_id`; `full` reads each note whole (for an export),
    `conversations` bounds how many of the newest threads are read (None: all)."""
    preferences, objects, index, said = await asyncio.gather(
        store.read(user_preferences_key(user_id)),
        store.list(user_prefix(user_id)),
        read_index(store, user_id),
        store.list(said_markers_prefix(user_id)),
    )
    note_keys = [obj for obj in objects if obj.key != user_preferences_key(user_id)]
    limit = asyncio.Semaphore(READ_CONCURRENCY)
    notes = await asyncio.gather(*(_note(store, obj.key, limit, full) for obj in note_keys))
    entries = index if conversations is None else index[:conversations]
    read = await asyncio.gather(*(_conversation(store, user_id, e, limit) for e in entries))
    threads = [thread for thread in read if thread is not None]
    return MemoryInventory(
        user_id=user_id,
        preferences=parse_preferences(
            preferences.content if preferences else None, cutoff=cutoff_of(store)
        ),
        notes=[note for note in notes if note is not None],
        conversations=threads,
        conversations_total=len(index) - (len(read) - len(threads)),
        channel_threads=len(said),
    )


# Where a preview stops short of the note: its last line, or the end of a cut line.
CUT = "…"


def preview(content: str) -> str:
    """The note's first lines, ending with CUT where there is more."""
    lines = [line for line in content.strip().splitlines() if line.strip()]
    text = "\n".join(lines[:PREVIEW_LINES])
    if len(text) > PREVIEW_CHARS:
        return text[: PREVIEW_CHARS - 1].rstrip() + CUT
    return text + f"\n{CUT}" if len(lines) > PREVIEW_LINES else text


async def _note(store: ObjectStore, key: str, limit: asyncio.Semaphore, full: bool) -> Note | None:
    async with limit:
        stored = await store.read(key)
    if stored is None:
        return None  # deleted since the listing
    return Note(
        key=key,
        path=to_memory_path(key),
        size=stored.size,
        updated=stored.updated,
        preview=preview(stored.content),
        content=stored.content if full else None,
    )


async def _conversation(
    store: ObjectStore, user_id: str, entry: SessionEntry, limit: asyncio.Semaphore
) -> Conversation | None:
    """The conversation as the index lists it; None when its record names someone else."""
    async with limit:
        stored, record = await asyncio.gather(
            store.read(session_context_key(entry.thread_ts)),
            read_conversation(store, entry.thread_ts),
        )
    if whose(record, user_id) is False:
        return None
    summary = parse_summary(stored.content) if stored is not None else None
    # The index entry is rewritten once a day (session_index.IndexedToday): its time may be
    # the day's first turn. The summary and the transcript say when it was last used.
    moments = [entry.updated]
    if summary is not None and summary.updated is not None:
        moments.append(summary.updated)
    if record is not None and record.messages:
        moments.append(record.messages[-1].at)
    return Conversation(
        thread_ts=entry.thread_ts,
        channel=entry.channel,
        title=entry.title,
        updated=max(moments),
        summary=summary.body if summary is not None else None,
    )
