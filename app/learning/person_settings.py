"""A person's choices about how Orion behaves with them: `people/{user}/settings.json`, among
Orion's own records (Claude cannot flip them), kept until the person is forgotten:
whether answers carry a memory note (`memory_notes`; unset, `MEMORY_NOTES` holds), and
the channel threads holding their words (`said_in`, newest first) — here rather than in
the profile, which expires, so that Forget everything still reaches them
(docs/architecture.md, "Memory layout: one home per owner")."""

from __future__ import annotations

import json
from typing import Any

from app.learning.guard import Forgotten, Guard
from app.memory.homes import person
from app.memory.scopes import is_shared_channel_id, is_thread_ts
from app.memory.tolerant_json import load_json_object, object_to_update
from app.storage.store import ObjectStore, update

MEMORY_NOTES = "memory_notes"
SAID_IN = "said_in"
MAX_SAID_IN = 1_000


async def read_settings(store: ObjectStore, user_id: str) -> dict[str, Any]:
    stored = await store.read(person(user_id).settings_key)
    return load_json_object(stored.content if stored else None, what="settings")


async def memory_notes_choice(store: ObjectStore, user_id: str) -> bool | None:
    """Whether the person chose to see the memory note under answers (None: no choice)."""
    return notes_choice(await read_settings(store, user_id))


def notes_choice(settings: dict[str, Any]) -> bool | None:
    chosen = settings.get(MEMORY_NOTES)
    return chosen if isinstance(chosen, bool) else None


def said_in(settings: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The channel threads (channel, thread) holding the person's words, newest first."""
    pairs = settings.get(SAID_IN)
    return tuple(
        (pair[0], pair[1])
        for pair in (pairs if isinstance(pairs, list) else [])[:MAX_SAID_IN]
        if isinstance(pair, list)
        and len(pair) == 2
        and is_shared_channel_id(pair[0])
        and is_thread_ts(pair[1])
    )


def with_said_in(current: str | None, channel_id: str, thread_ts: str) -> str | None:
    """The settings object with the thread among those holding the person's words (as it
    was, when it is already). Raises `Unreadable` for one that cannot be read: written
    over, Forget everything would no longer find the threads it lists."""
    settings = object_to_update(current, what="settings")  # raises Unreadable
    listed = said_in(settings)
    if (channel_id, thread_ts) in listed:
        return current
    pairs = [(channel_id, thread_ts), *listed][:MAX_SAID_IN]
    return json.dumps({**settings, SAID_IN: [list(pair) for pair in pairs]})


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
