"""Everything Orion keeps about one person, read from their home: what their Home tab shows, what
Claude reads out, what an export covers (docs/memory-controls.md). Only Orion's own records (the
profile, the settings) decide what is shown, never a file the memory tool can write."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime

from app.learning.conversation_record import ConversationRecord
from app.learning.person_settings import channel_threads, notes_choice
from app.learning.preferences import StoredPreference, parse_preferences
from app.learning.profile import ConversationEntry, Profile
from app.learning.summary_file import UNTITLED
from app.learning.welcome import freshest_summary
from app.memory.homes import Home, person, preferences_key, thread_of_name
from app.memory.retention import cutoff_of
from app.memory.scopes import to_memory_path
from app.observability.logging import get_logger
from app.storage.store import ObjectInfo, ObjectStore, ObjectTooLarge, StoredObject, at_most

log = get_logger(__name__)

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
    conversations_total: int = 0  # how many the person's profile lists in all
    channel_threads: int = 0  # channel threads whose transcripts hold what they wrote
    memory_notes: bool | None = None  # their choice of memory notes (None: none made)

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
    """What Orion keeps about `user_id`, all from their home; `full` reads each note whole (for an
    export), `conversations` bounds how many of the newest conversations are read (None: all)."""
    home = person(user_id)
    preferences, objects, stored, settings, noted = await asyncio.gather(
        _read(store, preferences_key(user_id)),
        store.list(home.memory_prefix),
        _read(store, home.profile_key),
        _read(store, home.settings_key),
        store.list(home.channel_threads_prefix),
    )
    profile = Profile.parse(_content(stored), cutoff=cutoff_of(store))
    settings_content = _content(settings)
    # Preferences too large to read are listed as a note is: the file Claude sees.
    large = (
        {preferences_key(user_id): preferences} if isinstance(preferences, ObjectTooLarge) else {}
    )
    note_keys = [o for o in objects if o.key != preferences_key(user_id) or large]
    notes = await at_most(
        READ_CONCURRENCY, note_keys, lambda o: _note(store, user_id, o, full, large.get(o.key))
    )
    listed = profile.conversations
    # All of them: also those the profile does not list, read once, here.
    unlisted = await _unlisted(store, home, profile) if conversations is None else {}
    listed = (*listed, *(entry for entry, _ in unlisted.values()))
    entries = listed if conversations is None else listed[:conversations]
    read = await at_most(
        READ_CONCURRENCY,
        entries,
        lambda e: _conversation(store, home, profile, e, unlisted.get(e.thread_ts, (e, None))[1]),
    )
    threads = [thread for thread in read if thread is not None]
    return MemoryInventory(
        user_id=user_id,
        preferences=parse_preferences(_content(preferences), cutoff=cutoff_of(store)),
        notes=[note for note in notes if note is not None],
        conversations=threads,
        conversations_total=len(listed) - (len(read) - len(threads)),
        channel_threads=len(channel_threads(home, (o.key for o in noted), settings_content)),
        memory_notes=notes_choice(settings_content),
    )


# Where a preview stops short of the note: its last line, or the end of a cut line.
CUT = "…"
TOO_LARGE = "(too large to show)"


def preview(content: str) -> str:
    """The note's first lines, ending with CUT where there is more."""
    lines = [line for line in content.strip().splitlines() if line.strip()]
    text = "\n".join(lines[:PREVIEW_LINES])
    if len(text) > PREVIEW_CHARS:
        return text[: PREVIEW_CHARS - 1].rstrip() + CUT
    return text + f"\n{CUT}" if len(lines) > PREVIEW_LINES else text


async def _read(store: ObjectStore, key: str) -> StoredObject | ObjectTooLarge | None:
    """The object; for one too large to read (none Orion writes is), the error, logged:
    it is shown as there, never read, and the rest of the home still shows."""
    try:
        return await store.read(key)
    except ObjectTooLarge as exc:
        log.warning("memory.inventory.too_large", key=key, exc_info=exc)
        return exc


def _content(stored: StoredObject | ObjectTooLarge | None) -> str | None:
    return stored.content if isinstance(stored, StoredObject) else None


async def _note(
    store: ObjectStore,
    user_id: str,
    listed: ObjectInfo,
    full: bool,
    stored: StoredObject | ObjectTooLarge | None = None,
) -> Note | None:
    """The note `listed` (`stored`: as already read)."""
    key = listed.key
    # As Claude sees it: `/memories/users/{user}/notes.md`.
    path = to_memory_path(f"users/{user_id}/" + key.removeprefix(person(user_id).memory_prefix))
    stored = stored or await _read(store, key)
    if isinstance(stored, ObjectTooLarge):
        return Note(key, path, listed.size, listed.updated, TOO_LARGE)
    if stored is None:
        return None  # deleted since the listing
    return Note(
        key=key,
        path=path,
        size=stored.size,
        updated=stored.updated,
        preview=preview(stored.content),
        content=stored.content if full else None,
    )


async def _unlisted(
    store: ObjectStore, home: Home, profile: Profile
) -> dict[str, tuple[ConversationEntry, ConversationRecord | ObjectTooLarge]]:
    """The conversations in `home` its profile does not list (an unreadable profile lists
    none; a full one, at its cap, not the oldest): as Forget everything finds them, each
    as it would be listed, and its record as read."""
    found: dict[str, ObjectInfo] = {}
    for listed in await store.list(home.conversations_prefix):
        name = listed.key.removeprefix(home.conversations_prefix)
        if name.endswith(".json") and "/" not in name:
            thread = thread_of_name(name.removesuffix(".json"))
            if thread and profile.entry(thread) is None:
                found[thread] = listed

    async def read(
        thread: str,
    ) -> tuple[ConversationEntry, ConversationRecord | ObjectTooLarge] | None:
        record = await _record(store, home, thread)
        if isinstance(record, ObjectTooLarge):  # its title unknown: as of its last write
            return ConversationEntry(thread, UNTITLED, found[thread].updated, None), record
        return (record.listed_as(), record) if record is not None else None

    read_ = await at_most(READ_CONCURRENCY, list(found), read)
    return {entry.thread_ts: (entry, record) for entry, record in filter(None, read_)}


async def _record(
    store: ObjectStore, home: Home, thread_ts: str
) -> ConversationRecord | ObjectTooLarge | None:
    stored = await _read(store, home.conversation_key(thread_ts))
    if isinstance(stored, StoredObject):
        return ConversationRecord.parse(stored.content)
    return stored


async def _conversation(
    store: ObjectStore,
    home: Home,
    profile: Profile,
    entry: ConversationEntry,
    record: ConversationRecord | ObjectTooLarge | None = None,
) -> Conversation | None:
    """The conversation as the profile lists it, with its freshest summary (`record`: as
    already read); None when it is gone (expired since)."""
    record = record or await _record(store, home, entry.thread_ts)
    if record is None:
        return None
    if isinstance(record, ObjectTooLarge):
        return Conversation(entry.thread_ts, entry.channel, entry.title, entry.updated, TOO_LARGE)
    summary = freshest_summary(profile, entry.thread_ts, record.summary, cutoff=cutoff_of(store))
    return Conversation(
        thread_ts=entry.thread_ts,
        channel=entry.channel,
        title=entry.title,
        updated=entry.updated,
        summary=summary.body if summary is not None else None,
    )
