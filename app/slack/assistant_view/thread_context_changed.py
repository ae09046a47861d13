"""`assistant_thread_context_changed`: the person switched channels while the thread is
open. Slack's context is kept with the conversation (its record, in the person's home),
updated with the fields Slack sent; a conversation Orion has no record of is left so."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from app.learning.conversation_record import owner_of_event, thread_context
from app.learning.conversations import change_conversation
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.dedupe import EventDeduplicator
from app.slack.conversation.turn_opening import memory_store
from app.slack.event_scope import handling

log = get_logger(__name__)


def register(
    assistant: AsyncAssistant, provider: ServiceProvider, dedupe: EventDeduplicator
) -> None:
    @assistant.thread_context_changed
    async def on_thread_context_changed(
        body: dict[str, Any], payload: dict[str, Any], context: AsyncBoltContext
    ) -> None:
        thread = payload["assistant_thread"]
        user, channel = thread.get("user_id"), thread.get("channel_id")
        async with handling(
            "slack.thread_context_changed",
            body,
            user=user,
            channel=channel,
            thread_ts=thread.get("thread_ts"),
        ):
            if await dedupe.is_duplicate(body):
                return
            owner = owner_of_event(user, channel, context.team_id, context.enterprise_id)
            changed = thread_context(thread.get("context"))
            store = await memory_store(provider)
            if owner is None or changed is None or store is None:
                return
            try:
                await change_conversation(
                    store,
                    owner.home,
                    thread["thread_ts"],
                    lambda record: record.with_context({**(record.context or {}), **changed}),
                )
            except Exception as exc:
                log.warning(
                    "slack.thread_context_changed.failed", error=type(exc).__name__, exc_info=exc
                )
