"""`assistant_thread_context_changed`: the person switched channels while the thread is open."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.save_thread_context.async_save_thread_context import (
    AsyncSaveThreadContext,
)
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant

from app.observability.logging import get_logger
from app.slack.conversation.dedupe import EventDeduplicator
from app.slack.conversation.thread_context_store import StoredThreadContextStore
from app.slack.event_scope import handling

log = get_logger(__name__)


def register(
    assistant: AsyncAssistant, context_store: StoredThreadContextStore, dedupe: EventDeduplicator
) -> None:
    @assistant.thread_context_changed
    async def on_thread_context_changed(
        body: dict[str, Any],
        payload: dict[str, Any],
        save_thread_context: AsyncSaveThreadContext,
    ) -> None:
        thread = payload["assistant_thread"]
        async with handling(
            "slack.thread_context_changed",
            body,
            user=thread.get("user_id"),
            channel=thread.get("channel_id"),
            thread_ts=thread.get("thread_ts"),
        ):
            if await dedupe.is_duplicate(body):
                return
            try:
                # Keep what Orion stored with the thread and update only the fields
                # Slack sent.
                channel, thread_ts = thread["channel_id"], thread["thread_ts"]
                existing: dict[str, Any] = (
                    await context_store.find(channel_id=channel, thread_ts=thread_ts) or {}
                )
                await save_thread_context({**existing, **thread.get("context", {})})
            except Exception:
                log.exception("slack.thread_context_changed.failed")
