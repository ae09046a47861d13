"""Assistant thread context kept in Orion's own store (GCS or the local directory).

Bolt's default store keeps context in the metadata of the bot's first reply and calls
`conversations.replies` on every lookup and every `say()`. Orion's context also carries
the memory restored at thread start, which is too large for message metadata; keeping it
in the memory store makes it shared by every Cloud Run instance and survive restarts.
"""

from __future__ import annotations

import json

from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.async_store import (
    AsyncAssistantThreadContextStore,
)

from app.memory.scopes import thread_context_key
from app.observability.logging import get_logger
from app.services import ServiceProvider

log = get_logger(__name__)


class StoredThreadContextStore(AsyncAssistantThreadContextStore):
    def __init__(self, provider: ServiceProvider) -> None:
        self._provider = provider

    async def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        store = (await self._provider.storage()).store
        await store.write(thread_context_key(channel_id, thread_ts), json.dumps(context))

    async def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        store = (await self._provider.storage()).store
        stored = await store.read(thread_context_key(channel_id, thread_ts))
        if stored is None:
            return None
        try:
            context = json.loads(stored.content)
        except ValueError:
            log.warning("slack.thread_context.unreadable")
            return None
        # Bolt's context type requires the key; DMs opened from no channel have none.
        context.setdefault("channel_id", None)
        return AssistantThreadContext(context)
