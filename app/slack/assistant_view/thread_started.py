"""`assistant_thread_started`: restore what Orion remembers, then greet the person.

Order matters for what the person sees: the status appears at once; the retry-dedupe
claim and the memory reads go out together, under one storage budget (2 s by default),
so the greeting waits for one storage round trip, not several; the greeting reflects
what was found; and only then are the suggested prompts set, the conversation recorded as
the person's (app/learning/conversations.py: a thread recorded for someone else is left
as it is) and Slack's context saved with the thread. Nothing here waits for the Claude
client.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.save_thread_context.async_save_thread_context import (
    AsyncSaveThreadContext,
)
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.conversation_record import ConversationOwner, owner_of_event
from app.learning.conversations import begin_conversation
from app.learning.erasure import forget_again_if_erased
from app.learning.welcome import parse_welcome
from app.memory.loader import Scope
from app.memory.restore import RestoredMemory
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.dedupe import EventDeduplicator, is_retried_delivery
from app.slack.conversation.delivery import Delivery
from app.slack.conversation.greeting import (
    GENERIC_GREETING,
    SUGGESTED_PROMPTS,
    Greeting,
    thread_greeting,
)
from app.slack.conversation.presence import AssistantStatus
from app.slack.conversation.thread_memory import restore_for
from app.slack.conversation.unfurls import NO_UNFURLS
from app.slack.event_scope import handling
from app.storage.breaker import StoreOffline
from app.storage.store import ObjectStore

log = get_logger(__name__)

RESTORING_STATUS = "Restoring your preferences..."


def register(
    assistant: AsyncAssistant, provider: ServiceProvider, dedupe: EventDeduplicator
) -> None:
    budget_s = provider.settings.memory_load_timeout_s

    @assistant.thread_started
    async def on_thread_started(
        body: dict[str, Any],
        payload: dict[str, Any],
        request: AsyncBoltRequest,
        client: AsyncWebClient,
        context: AsyncBoltContext,
        say: AsyncSay,
        set_suggested_prompts: AsyncSetSuggestedPrompts,
        save_thread_context: AsyncSaveThreadContext,
    ) -> None:
        began = datetime.now(UTC)
        thread = payload["assistant_thread"]
        user, thread_ts = thread.get("user_id"), thread["thread_ts"]
        channel = thread.get("channel_id")
        async with handling(
            "slack.thread_started", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if dedupe.seen_here(body):
                return
            status = AssistantStatus(client, channel=channel or "", thread_ts=thread_ts)
            delivery = Delivery(
                dedupe,
                body,
                retried=is_retried_delivery(request),
                budget_s=budget_s,
                # Slack opens the thread for this event: no summary of it exists yet.
                memory=lambda: restore_for(
                    provider, user, thread_ts, new_thread=True, welcome=True
                ),
            )
            if not await delivery.claim(lambda: status.progress(RESTORING_STATUS)):
                return  # another delivery of this event is greeting: leave it be
            restored = await delivery.memory
            greeting = _greeting(restored, provider.settings.memory_session_retention_days)
            try:
                await say(greeting.text, **NO_UNFURLS)
            except Exception as exc:
                log.error("slack.thread_started.failed", error=type(exc).__name__, exc_info=exc)
                return
            # Recorded as the person's at once (their first message is answered from it),
            # beside what follows.
            owner = owner_of_event(user, channel, context.team_id, context.enterprise_id)
            recording = asyncio.ensure_future(_begin(provider, owner, thread_ts, began))
            try:
                await set_suggested_prompts(prompts=greeting.prompts)
            except Exception as exc:
                log.error("slack.thread_started.failed", error=type(exc).__name__, exc_info=exc)
            await _keep(provider, owner, began, await recording, save_thread_context, thread)


async def _begin(
    provider: ServiceProvider, owner: ConversationOwner | None, thread_ts: str, began: datetime
) -> ObjectStore | None:
    """Record the conversation as `owner`'s (unless it is someone else's); the store it
    is recorded in, None when it is not (memory off, storage failing, someone else's).
    Never raises: nobody waits for this, and the first message records it otherwise."""
    if owner is None:
        return None
    try:
        store = provider.storage.memory_store
        if store is None:
            return None  # memory is off: nothing is kept
        if await begin_conversation(store, owner, thread_ts, started=began):
            return store
        log.warning("slack.conversation.not_owner")
    except StoreOffline:
        log.debug("slack.conversation.record_skipped", reason="store unavailable")
    except Exception as exc:
        log.warning("slack.conversation.record_failed", error=type(exc).__name__, exc_info=exc)
    return None


async def _keep(
    provider: ServiceProvider,
    owner: ConversationOwner | None,
    began: datetime,
    store: ObjectStore | None,
    save_thread_context: AsyncSaveThreadContext,
    thread: dict[str, Any],
) -> None:
    """Slack's context saved with the person's thread; then, as after every write of a
    person's data, what the thread start wrote goes again if they asked to be forgotten
    since it began."""
    if owner is None or store is None:
        return
    try:
        await save_thread_context(thread.get("context") or {})
        if await forget_again_if_erased(store, owner.user, began, dm_channels=(owner.channel,)):
            log.info("slack.conversation.erased_since_start")
    except StoreOffline:
        log.debug("slack.thread_context.save_skipped", reason="store unavailable")
    except Exception as exc:
        log.warning("slack.thread_context.save_failed", error=type(exc).__name__, exc_info=exc)


def _greeting(restored: RestoredMemory | None, retention_days: int) -> Greeting:
    if restored is None:
        return Greeting(GENERIC_GREETING, SUGGESTED_PROMPTS)
    contents = restored.loaded.contents
    welcome = parse_welcome(contents.get(Scope.WELCOME))
    if welcome is not None and not welcome.fresh(datetime.now(UTC), retention_days):
        welcome = None
    return thread_greeting(contents.get(Scope.USER), welcome)
