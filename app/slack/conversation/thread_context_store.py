"""Assistant thread context kept in Orion's own store (GCS or the local directory).

Bolt's default store keeps context in the metadata of the bot's first reply and calls
`conversations.replies` on every lookup and every `say()`; keeping it in the store makes
it shared by every Cloud Run instance and survive restarts, without a Slack call.

A context holds Slack's context only (the channel the person was in). It used to keep a
copy of the memory restored at the thread's start; a context saved again (a context
change) drops such a copy, and nothing reads one any more.
"""

from __future__ import annotations

import json
from typing import Any

from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.async_store import (
    AsyncAssistantThreadContextStore,
)

from app.memory.scopes import thread_context_key
from app.memory.tolerant_json import load_json_object
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.storage.breaker import StoreOffline

log = get_logger(__name__)

# Where contexts saved before used to keep the memory restored at the thread's start.
_MEMORY_COPY = "orion_memory_"


class StoredThreadContextStore(AsyncAssistantThreadContextStore):
    def __init__(self, provider: ServiceProvider) -> None:
        self._provider = provider

    async def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        store = self._provider.storage.store
        await store.write(thread_context_key(channel_id, thread_ts), json.dumps(_slacks(context)))

    async def keep(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        """`save`, for work nobody waits for: a failure is logged, never raised."""
        try:
            await self.save(channel_id=channel_id, thread_ts=thread_ts, context=context)
        except StoreOffline:
            log.debug("slack.thread_context.save_skipped", reason="store unavailable")
        except Exception as exc:
            log.warning("slack.thread_context.save_failed", error=type(exc).__name__, exc_info=exc)

    async def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        store = self._provider.storage.store
        stored = await store.read(thread_context_key(channel_id, thread_ts))
        if stored is None:
            return None
        context = _slacks(load_json_object(stored.content, what="thread_context"))
        if not context:
            return None
        # Bolt's context type requires the key; DMs opened from no channel have none.
        context.setdefault("channel_id", None)
        return AssistantThreadContext(context)


def _slacks(context: dict[str, Any]) -> dict[str, Any]:
    """Slack's fields of a context, without a memory copy an older version kept there."""
    return {key: value for key, value in context.items() if not key.startswith(_MEMORY_COPY)}
