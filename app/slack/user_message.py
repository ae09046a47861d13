"""A message in an assistant thread: answer it with Claude, streamed into the thread."""

from __future__ import annotations

import asyncio
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.get_thread_context.async_get_thread_context import (
    AsyncGetThreadContext,
)
from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.agent.errors import friendly_error
from app.agent.request import TurnRequest
from app.memory.breaker import StoreOffline
from app.memory.deadline import current_deadline, seconds_until, storage_deadline
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.background import run_in_background
from app.slack.dedupe import EventDeduplicator, is_retried_delivery
from app.slack.event_scope import handling
from app.slack.reply_stream import SlackReplyStream, feedback_blocks
from app.slack.status import show_status
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
    settings = provider.settings

    @assistant.user_message
    async def on_user_message(
        body: dict[str, Any],
        payload: dict[str, Any],
        request: AsyncBoltRequest,
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
            retried = is_retried_delivery(request)
            reply = SlackReplyStream(
                client, channel=channel, thread_ts=thread_ts, user_id=user, team_id=context.team_id
            )
            text = payload.get("text") or ""
            # Everything Claude's first request needs goes out at once: the claim and the
            # memory saved with the thread (under one storage budget), the thread's history
            # from Slack, and the Claude client (still loading on a fresh instance).
            with storage_deadline(settings.memory_load_timeout_s):
                deadline = current_deadline()
                saved = asyncio.ensure_future(
                    _saved_memory(get_thread_context) if settings.memory_enabled else _none()
                )
                claiming = asyncio.ensure_future(dedupe.is_duplicate(body))
            history = asyncio.ensure_future(
                read_thread(
                    client,
                    channel=channel,
                    thread_ts=thread_ts,
                    current_ts=payload["ts"],
                    current_text=text,
                )
            )
            services = asyncio.ensure_future(provider.get())
            try:
                if not retried:
                    # At once, beside the work above: nothing else has this delivery.
                    await show_status(
                        set_status, THINKING_STATUS, loading_messages=LOADING_MESSAGES
                    )
                if await claiming:
                    return  # another delivery of this event is answering: leave it be
                if retried:
                    await show_status(
                        set_status, THINKING_STATUS, loading_messages=LOADING_MESSAGES
                    )
                memory_context = await _within(saved, deadline)
                agent = (await services).agent
                if user:
                    # Beside the answer, not before it: stated preferences are saved at once.
                    run_in_background(
                        agent.capture_preferences(user, text), name="memory.preferences"
                    )
                turn = TurnRequest(
                    user_id=user or "",
                    channel_id=channel,
                    thread_ts=thread_ts,
                    history=await history,
                    memory_context=memory_context,
                    memory_deadline=deadline,
                )
                result = await agent.answer(turn, reply)
                await reply.finish(blocks=feedback_blocks())
                # Only now, with the reply complete: the summary must never hold it up.
                run_in_background(agent.after_turn(turn, result.text), name="memory.after_turn")
            except Exception as exc:
                log.error("slack.user_message.failed", error=type(exc).__name__, exc_info=exc)
                await _apologise(reply, friendly_error(exc))
            finally:
                await _discard(saved, history, services)


async def _discard(*tasks: asyncio.Future[Any]) -> None:
    """Stop what this turn started and no longer needs (a duplicate delivery, a failure
    before it was awaited), and collect its outcome so nothing is left unobserved."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _none() -> None:
    return None


async def _within(saved: asyncio.Future[str | None], deadline: float | None) -> str | None:
    """The saved memory if it arrives before the storage deadline; else None (and the
    agent reloads with whatever budget is left, or goes without)."""
    try:
        return await asyncio.wait_for(asyncio.shield(saved), seconds_until(deadline))
    except TimeoutError:
        return None


async def _saved_memory(get_thread_context: AsyncGetThreadContext) -> str | None:
    """The memory saved at thread start; None (so the agent reloads) if unreadable."""
    try:
        return memory_context_from(await get_thread_context())
    except StoreOffline:
        return None
    except Exception as exc:
        log.warning("slack.thread_context.unavailable", error=type(exc).__name__, exc_info=exc)
        return None


async def _apologise(reply: SlackReplyStream, apology: str) -> None:
    """Show the apology; if even that fails (Slack down), the log line is all we can do."""
    try:
        await reply.fail(apology)
    except Exception as exc:
        log.error("slack.apology_failed", error=type(exc).__name__, exc_info=exc)
