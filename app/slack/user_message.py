"""A message in an assistant thread: answer it with Claude, streamed into the thread."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.get_thread_context.async_get_thread_context import (
    AsyncGetThreadContext,
)
from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_sdk.web.async_client import AsyncWebClient

from app.agent.errors import friendly_error
from app.agent.request import TurnRequest
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.background import run_in_background
from app.slack.dedupe import EventDeduplicator
from app.slack.event_scope import handling
from app.slack.reply_stream import SlackReplyStream, feedback_blocks
from app.slack.thread_history import read_thread
from app.slack.thread_memory import memory_context_from

log = get_logger(__name__)

THINKING_STATUS = "is thinking..."
# Slack rotates these while the status shows (at most 10).
LOADING_MESSAGES = [
    "Thinking it over...",
    "Checking what I remember...",
    "Putting an answer together...",
]


def register(
    assistant: AsyncAssistant, provider: ServiceProvider, dedupe: EventDeduplicator
) -> None:
    @assistant.user_message
    async def on_user_message(
        body: dict[str, Any],
        payload: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
        set_status: AsyncSetStatus,
        get_thread_context: AsyncGetThreadContext,
    ) -> None:
        channel, thread_ts, user = payload["channel"], payload["thread_ts"], payload.get("user")
        async with handling(
            "slack.user_message", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if dedupe.seen_here(body):
                return
            reply = SlackReplyStream(
                client, channel=channel, thread_ts=thread_ts, user_id=user, team_id=context.team_id
            )
            try:
                # The status first, before anything that waits on the store or a cold start.
                await set_status(THINKING_STATUS, loading_messages=LOADING_MESSAGES)
                if await dedupe.is_duplicate(body):
                    await set_status("")  # another delivery of this event is answering
                    return
                services = await provider.get()
                text = payload.get("text") or ""
                if user:
                    # Beside the answer, not before it: stated preferences are saved at once.
                    run_in_background(
                        services.agent.capture_preferences(user, text), name="memory.preferences"
                    )
                history = await read_thread(
                    client,
                    channel=channel,
                    thread_ts=thread_ts,
                    current_ts=payload["ts"],
                    current_text=text,
                )
                turn = TurnRequest(
                    user_id=user or "",
                    channel_id=channel,
                    thread_ts=thread_ts,
                    history=history,
                    memory_context=await _saved_memory(get_thread_context)
                    if services.memory_store is not None
                    else None,
                )
                result = await services.agent.answer(turn, reply)
                await reply.finish(blocks=feedback_blocks())
                # Only now, with the reply complete: the summary must never hold it up.
                run_in_background(
                    services.agent.after_turn(turn, result.text), name="memory.after_turn"
                )
            except Exception as exc:
                log.error("slack.user_message.failed", error=type(exc).__name__, exc_info=exc)
                await _apologise(reply, friendly_error(exc))


async def _saved_memory(get_thread_context: AsyncGetThreadContext) -> str | None:
    """The memory saved at thread start; None (so the agent reloads) if unreadable."""
    try:
        return memory_context_from(await get_thread_context())
    except Exception as exc:
        log.warning("slack.thread_context.unavailable", error=type(exc).__name__)
        return None


async def _apologise(reply: SlackReplyStream, apology: str) -> None:
    """Show the apology; if even that fails (Slack down), the log line is all we can do."""
    try:
        await reply.fail(apology)
    except Exception as exc:
        log.error("slack.apology_failed", error=type(exc).__name__)
