"""Assistant thread context kept in Orion's own store (GCS or the local directory).

Bolt's default store keeps context in the metadata of the bot's first reply and calls
`conversations.replies` on every lookup and every `say()`. Orion's context also carries
the memory restored at thread start, which is too large for message metadata; keeping it
in the memory store makes it shared by every Cloud Run instance and survive restarts.

A context that holds a person's memory is checked against their erasure after it is
written: memory read before the person asked to be forgotten is deleted again, whichever
path saved it (a thread start, a context change, another instance).
"""

from __future__ import annotations

import json

from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.async_store import (
    AsyncAssistantThreadContextStore,
)

from app.learning.erasure import erased_since
from app.memory.scopes import thread_context_key
from app.memory.tolerant_json import load_json_object
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.thread_memory import memory_read

log = get_logger(__name__)


class StoredThreadContextStore(AsyncAssistantThreadContextStore):
    def __init__(self, provider: ServiceProvider) -> None:
        self._provider = provider

    async def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        store = self._provider.storage.store
        key = thread_context_key(channel_id, thread_ts)
        await store.write(key, json.dumps(context))
        read = memory_read(context)
        if read is not None and await erased_since(store, *read):
            await store.delete(key)
            log.info("slack.thread_context.erased_since_read")

    async def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        store = self._provider.storage.store
        stored = await store.read(thread_context_key(channel_id, thread_ts))
        if stored is None:
            return None
        context = load_json_object(stored.content, what="thread_context")
        if not context:
            return None
        # Bolt's context type requires the key; DMs opened from no channel have none.
        context.setdefault("channel_id", None)
        return AssistantThreadContext(context)
