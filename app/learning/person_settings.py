"""A person's choices (`settings.json`) and the channel threads holding their words (one empty
object each): Orion's own records, out of Claude's reach (docs/architecture.md, "Memory layout")."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable

from app.learning.guard import Forgotten, Guard
from app.memory.homes import Home, person, thread_of_name
from app.memory.scopes import is_shared_channel_id, is_thread_ts
from app.memory.tolerant_json import load_json_object, object_to_update
from app.storage.store import CREATE_ONLY, ObjectStore, PreconditionFailed, update

MEMORY_NOTES = "memory_notes"


async def memory_notes_choice(store: ObjectStore, user_id: str) -> bool | None:
    """Whether the person chose to see the memory note under answers (None: no choice)."""
    stored = await store.read(person(user_id).settings_key)
    return notes_choice(stored.content if stored else None)


def notes_choice(settings: str | None) -> bool | None:
    """The choice `settings` (the object's text) holds."""
    chosen = load_json_object(settings, what="settings").get(MEMORY_NOTES)
    return chosen if isinstance(chosen, bool) else None


async def note_channel_thread(
    store: ObjectStore, home: Home, channel_id: str, thread_ts: str
) -> None:
    """The thread among those holding the person's words: one request, created or there."""
    with contextlib.suppress(PreconditionFailed):  # noted by an earlier turn
        await store.write(
            home.channel_thread_key(channel_id, thread_ts), "", if_generation=CREATE_ONLY
        )


def channel_threads(home: Home, keys: Iterable[str], settings: str | None) -> set[tuple[str, str]]:
    """The channel threads (channel, thread) holding the person's words: noted in their home
    (`keys`), or listed in `settings` as written before the notes were objects, readable or not."""
    prefix = home.channel_threads_prefix
    named = [key.removeprefix(prefix).partition("/") for key in keys if key.startswith(prefix)]
    noted = [(channel_id, thread_of_name(name)) for channel_id, _, name in named]
    listed = _LISTED_PAIR.findall(settings or "")  # `"said_in": [["C…", "1712….…"], …]`
    return {
        (channel_id, thread_ts)
        for channel_id, thread_ts in [*noted, *listed]
        if is_shared_channel_id(channel_id) and is_thread_ts(thread_ts)
    }


_LISTED_PAIR = re.compile(r'\[\s*"([^"]{1,40})"\s*,\s*"([^"]{1,40})"\s*\]')


async def choose_memory_notes(store: ObjectStore, user_id: str, *, shown: bool) -> None:
    """Keep the person's choice (through their erasure guard: a choice made while they
    are forgotten is not kept)."""
    guard = await Guard.reading(store, person(user_id))

    def chosen(current: str | None) -> str:
        return json.dumps({**object_to_update(current, what="settings"), MEMORY_NOTES: shown})

    await update(guard.store, person(user_id).settings_key, chosen)
    try:
        await guard.settle()
    except Forgotten:
        return
