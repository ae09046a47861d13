"""A person's choices about how Orion behaves with them: `settings/{user_id}.json`.

Among Orion's own records (app/memory/key_prefixes.py), not in the person's memory
directory: Claude's memory tool cannot flip them, and they are not memories to recall.
Kept until the person is forgotten. For now one choice: whether answers carry a note of
what they changed in memory (`memory_notes`); unset, the operator's default
(`MEMORY_NOTES`) holds.
"""

from __future__ import annotations

import json

from app.memory.scopes import person_settings_key
from app.memory.tolerant_json import load_json_object
from app.storage.store import ObjectStore, update

MEMORY_NOTES = "memory_notes"


async def memory_notes_shown(store: ObjectStore, user_id: str, *, default: bool) -> bool:
    """Whether `user_id` sees the memory note under answers."""
    stored = await store.read(person_settings_key(user_id))
    chosen = load_json_object(stored.content if stored else None, what="person_settings").get(
        MEMORY_NOTES
    )
    return chosen if isinstance(chosen, bool) else default


async def choose_memory_notes(store: ObjectStore, user_id: str, *, shown: bool) -> None:
    def transform(current: str | None) -> str:
        data = load_json_object(current, what="person_settings")
        data[MEMORY_NOTES] = shown
        return json.dumps(data)

    await update(store, person_settings_key(user_id), transform)
