"""A person's choices about how Orion behaves with them: `people/{user}/settings.json`.

Among Orion's own records in their home (app/memory/homes.py), out of the memory tool's
reach: Claude cannot flip them, and they are not memories to recall. Their own object,
kept until the person is forgotten, while their profile goes with the retention window;
read only where a choice is needed (a memory note, the Home tab). For now one choice:
whether answers carry a note of what they changed in memory (`memory_notes`); unset, the
operator's default (`MEMORY_NOTES`) holds.
"""

from __future__ import annotations

import json

from app.learning.guard import Forgotten, Guard
from app.memory.homes import person
from app.memory.tolerant_json import load_json_object
from app.storage.store import ObjectStore, update

MEMORY_NOTES = "memory_notes"


async def memory_notes_choice(store: ObjectStore, user_id: str) -> bool | None:
    """Whether the person chose to see the memory note under answers (None: no choice)."""
    stored = await store.read(person(user_id).settings_key)
    chosen = load_json_object(stored.content if stored else None, what="settings").get(MEMORY_NOTES)
    return chosen if isinstance(chosen, bool) else None


async def choose_memory_notes(store: ObjectStore, user_id: str, *, shown: bool) -> None:
    """Keep the person's choice (through their erasure guard: a choice made while they
    are forgotten is not kept)."""
    guard = await Guard.reading(store, person(user_id))

    def chosen(current: str | None) -> str:
        return json.dumps({**load_json_object(current, what="settings"), MEMORY_NOTES: shown})

    await update(guard.store, person(user_id).settings_key, chosen)
    try:
        await guard.settle()
    except Forgotten:
        return
