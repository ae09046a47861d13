"""`app_home_opened` on the Messages tab (agent_view): offer prompts, post nothing.

In the Agent messaging experience this replaces `assistant_thread_started`, but opening the
DM is not a question: Orion posts nothing there. It sets the suggested prompts at the top
of the Messages tab (`assistant.threads.setSuggestedPrompts` without a thread: with one,
agent_view ignores them), by name and with the person's own preferences when Orion knows
them, at most once per person per day (people open the tab far more often than that) —
and again as soon as those preferences changed (a name forgotten leaves the tab's title
the next time it opens).
The Home tab is home/controls.py.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from app.memory.homes import preferences_key
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.dedupe import EventDeduplicator
from app.slack.conversation.greeting import messages_tab_prompts
from app.slack.event_scope import handling
from app.storage.breaker import StoreOffline

log = get_logger(__name__)

MESSAGES_TAB = "messages"


def register(app: AsyncApp, provider: ServiceProvider, dedupe: EventDeduplicator) -> None:
    @app.event("app_home_opened")
    async def on_app_home_opened(
        body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient
    ) -> None:
        if event.get("tab") != MESSAGES_TAB:
            return
        user, channel = event.get("user"), event.get("channel")
        async with handling(
            "slack.messages_tab_opened", body, user=user, channel=channel, thread_ts=None
        ):
            if not user or not channel:
                return
            today = datetime.now(UTC).strftime("%Y%m%d")
            preferences = await _preferences(provider, user)
            # Hashed: a claim is Orion's record, and must not name the person (forgetting
            # them must leave no object that does). With their preferences: once a day for
            # what they are now.
            shown = f"prompts:{user}:{preferences or ''}"
            person = hashlib.sha256(shown.encode()).hexdigest()[:24]
            if not await dedupe.first_time(f"Prompts{person}{today}"):
                return
            title, prompts = messages_tab_prompts(preferences)
            try:
                await client.assistant_threads_setSuggestedPrompts(
                    channel_id=channel, title=title, prompts=prompts
                )
            except Exception as exc:
                log.warning("slack.prompts_failed", error=type(exc).__name__, exc_info=exc)


async def _preferences(provider: ServiceProvider, user: str) -> str | None:
    """The person's stored preferences, within the storage budget; None when there are
    none, memory is off, or the store does not answer in time."""
    try:
        async with provider.storage_within(provider.settings.memory_load_timeout_s) as storage:
            store = storage.memory_store
            stored = await store.read(preferences_key(user)) if store else None
    except StoreOffline:
        return None
    except Exception as exc:
        log.warning("slack.preferences_unavailable", error=type(exc).__name__, exc_info=exc)
        return None
    return stored.content if stored is not None else None
