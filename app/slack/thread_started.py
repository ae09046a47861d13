"""`assistant_thread_started`: restore what Orion remembers, then greet the person.

Order matters for what the person sees: the status appears at once, memories load in
parallel within the budget, the restored context is saved with the thread (so every
later message can use it without reloading), and the greeting reflects what was found.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.context.save_thread_context.async_save_thread_context import (
    AsyncSaveThreadContext,
)
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from app.memory.loader import Scope
from app.memory.restore import restore_memory
from app.observability.logging import get_logger
from app.services import ServiceProvider, Services
from app.slack.dedupe import EventDeduplicator
from app.slack.event_scope import handling
from app.slack.greeting import GENERIC_GREETING, SUGGESTED_PROMPTS, greeting_for
from app.slack.thread_memory import thread_context_with_memory

log = get_logger(__name__)

RESTORING_STATUS = "Restoring your preferences..."


def register(
    assistant: AsyncAssistant, provider: ServiceProvider, dedupe: EventDeduplicator
) -> None:
    @assistant.thread_started
    async def on_thread_started(
        body: dict[str, Any],
        payload: dict[str, Any],
        say: AsyncSay,
        set_status: AsyncSetStatus,
        set_suggested_prompts: AsyncSetSuggestedPrompts,
        save_thread_context: AsyncSaveThreadContext,
    ) -> None:
        thread = payload["assistant_thread"]
        user, thread_ts = thread.get("user_id"), thread["thread_ts"]
        async with handling(
            "slack.thread_started",
            body,
            user=user,
            channel=thread.get("channel_id"),
            thread_ts=thread_ts,
        ):
            if dedupe.seen_here(body):
                return
            # The status first, before anything that waits on the store or a cold start.
            await _show(set_status, RESTORING_STATUS)
            if await dedupe.is_duplicate(body):
                await _show(set_status, "")  # another delivery of this event is greeting
                return
            greeting = GENERIC_GREETING
            try:
                services = await provider.get()
                greeting = await _restore(services, thread, user, thread_ts, save_thread_context)
            except Exception as exc:
                # Memory is a nicety: a failure here must not cost the person a greeting.
                log.warning("slack.thread_started.memory_failed", error=type(exc).__name__)
            try:
                await say(greeting)
                await set_suggested_prompts(prompts=SUGGESTED_PROMPTS)
            except Exception as exc:
                log.error("slack.thread_started.failed", error=type(exc).__name__, exc_info=exc)


async def _show(set_status: AsyncSetStatus, status: str) -> None:
    try:
        await set_status(status)
    except Exception as exc:
        log.warning("slack.status_failed", error=type(exc).__name__)


async def _restore(
    services: Services,
    thread: dict[str, Any],
    user: str | None,
    thread_ts: str,
    save_thread_context: AsyncSaveThreadContext,
) -> str:
    store = services.memory_store
    if store is None or not user:
        return GENERIC_GREETING
    settings = services.settings
    restored = await restore_memory(
        store,
        user_id=user,
        thread_ts=thread_ts,
        budget_s=settings.memory_load_timeout_s,
        token_budget=settings.memory_context_token_budget,
    )
    await save_thread_context(thread_context_with_memory(thread.get("context") or {}, restored))
    return greeting_for(restored.loaded.contents.get(Scope.USER))
