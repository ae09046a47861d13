"""How Orion greets a person back: prepared at turn end, read at thread start.

The greeting must never cost the thread start a model call or a storage round trip of its
own. So the end of each turn, whose summary step already asks a small model about the
conversation, has it also write a sentence welcoming the person back to the topic and a
short suggestion to continue, in the language the person writes in. Both are kept among
Orion's records about the person (`people/{id}/welcome.json`, out of the memory tool's
reach, expiring with the conversations), and the thread start reads them in the same
parallel load as the preferences. A welcome older than the session retention window is
not mentioned: a stale "last time" is worse than none.

A model wrote it from the conversation and what Orion knew then (a name, a preference),
so forgetting anything drops it (app/learning/erasure.py): the next greeting is made from
what is left, until the next turn's end prepares a welcome again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.memory.scopes import validate_thread_ts, welcome_key
from app.memory.tolerant_json import load_json_object
from app.storage.store import ObjectStore, update


@dataclass(frozen=True)
class Welcome:
    thread_ts: str
    topic: str  # the conversation's title
    updated: datetime
    greeting: str | None = None  # written by the model, in the person's language
    next_step: str | None = None  # likewise: a suggestion to continue, for a prompt

    def to_json(self) -> str:
        return json.dumps(
            {
                "thread": self.thread_ts,
                "topic": self.topic,
                "updated": self.updated.isoformat(),
                "greeting": self.greeting,
                "next_step": self.next_step,
            },
            ensure_ascii=False,
        )

    def fresh(self, now: datetime, retention_days: int) -> bool:
        return now - self.updated <= timedelta(days=retention_days)


def parse_welcome(content: str | None) -> Welcome | None:
    """The stored welcome; None when there is none or it cannot be read."""
    data = load_json_object(content, what="welcome")
    thread, topic, updated = data.get("thread"), data.get("topic"), data.get("updated")
    if not (isinstance(thread, str) and isinstance(topic, str) and isinstance(updated, str)):
        return None
    try:
        moment = datetime.fromisoformat(updated)
        validate_thread_ts(thread)
    except ValueError:
        return None
    return Welcome(
        thread_ts=thread,
        topic=topic,
        updated=moment if moment.tzinfo else moment.replace(tzinfo=UTC),
        greeting=_text(data.get("greeting")),
        next_step=_text(data.get("next_step")),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


async def save_welcome(store: ObjectStore, user_id: str, welcome: Welcome) -> None:
    """The latest conversation wins: a plain overwrite."""
    await store.write(welcome_key(user_id), welcome.to_json())


async def forget_welcome(store: ObjectStore, user_id: str, *, thread_ts: str | None = None) -> None:
    """Drop the welcome (`thread_ts`: only one back to that conversation)."""
    if thread_ts is None:
        await store.delete(welcome_key(user_id))
        return

    def unless_about(current: str | None) -> str | None:
        welcome = parse_welcome(current)
        return None if welcome is not None and welcome.thread_ts == thread_ts else current

    await update(store, welcome_key(user_id), unless_about)
