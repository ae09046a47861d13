"""Assistant thread context kept in Orion's own store (GCS or the local directory).

Bolt's default store keeps context in the metadata of the bot's first reply and calls
`conversations.replies` on every lookup and every `say()`. Orion's context also carries
the memory restored at thread start, which is too large for message metadata; keeping it
in the memory store makes it shared by every Cloud Run instance and survive restarts.
"""

from __future__ import annotations

import json
import re

from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.async_store import (
    AsyncAssistantThreadContextStore,
)

from app.memory.scopes import validate_thread_ts
from app.observability.logging import get_logger
from app.services import ServiceProvider

log = get_logger(__name__)

# Slack channel ids: `C…` (channels), `D…` (DMs, where assistant threads live), `G…`.
_CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,30}")
# Outside every MemoryScope root: only Orion itself reads and writes thread contexts.
THREADS_PREFIX = "threads/"


def thread_context_key(channel_id: str, thread_ts: str) -> str:
    """Where an assistant thread's saved context lives (not visible to the model)."""
    if not isinstance(channel_id, str) or not _CHANNEL_ID.fullmatch(channel_id):
        raise ValueError(f"not a Slack channel id: {channel_id!r}")
    return f"{THREADS_PREFIX}{channel_id}/{validate_thread_ts(thread_ts).replace('.', '-')}.json"


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
