"""The Agent messaging experience (agent_view): each top-level DM in the Messages tab starts a
conversation, answered in its thread with a session and Stop (docs/architecture.md)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.memory.homes import preferences_key
from app.memory.scopes import is_shared_channel_id
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.answering import Answerer, Incoming
from app.slack.conversation.dedupe import EventDeduplicator, is_retried_delivery
from app.slack.conversation.greeting import messages_tab_prompts
from app.slack.conversation.presence import AgentSession
from app.slack.conversation.unfurls import NO_UNFURLS
from app.slack.event_scope import handling
from app.slack.mrkdwn import text_of
from app.storage.breaker import StoreOffline

log = get_logger(__name__)

MESSAGES_TAB = "messages"
# What the person sees in the thread once their Stop has ended the answer.
STOPPED_CONFIRMATION = "Stopped. Ask again whenever you're ready."
# Message subtypes that are the person writing (file uploads carry their text too).
_PERSON_SUBTYPES = (None, "file_share")


async def _from_person_in_dm(event: dict[str, Any]) -> bool:
    return (
        event.get("channel_type") == "im"
        and event.get("subtype") in _PERSON_SUBTYPES
        and not event.get("bot_id")
        and bool(event.get("user"))
    )


def register(
    app: AsyncApp, provider: ServiceProvider, dedupe: EventDeduplicator, answerer: Answerer
) -> None:
    @app.event("app_home_opened")
    async def on_app_home_opened(
        body: dict[str, Any],
        event: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        if event.get("tab") != MESSAGES_TAB:
            return
        user, channel = event.get("user"), event.get("channel")
        async with handling("slack.messages_tab_opened", body, user=user, channel=channel):
            if not user or not channel:
                return
            today = datetime.now(UTC).strftime("%Y%m%d")
            # Their name and language only in the DM Slack says is theirs.
            theirs = await answerer.dms.theirs(client, context.team_id, user, channel)
            preferences = await _preferences(provider, user) if theirs else None
            # Hashed: no object may name a forgotten person. With their preferences: once a
            # day for what they are now.
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
                log.warning("slack.prompts_failed", exc_info=exc)

    @app.event("message", matchers=[_from_person_in_dm])
    async def on_agent_message(
        body: dict[str, Any],
        event: dict[str, Any],
        request: AsyncBoltRequest,
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        channel, user, ts = event["channel"], event.get("user"), event["ts"]
        thread_ts = event.get("thread_ts") or ts
        starts = thread_ts == ts  # a top-level DM (or a self-threaded root): a new conversation
        async with handling(
            "slack.agent_message", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if dedupe.seen_here(body):
                return
            text = text_of(event)
            session = AgentSession(
                client, channel=channel, thread_ts=thread_ts, title=text if starts else None
            )
            await answerer.answer(
                Incoming(
                    body=body,
                    context=context,
                    channel=channel,
                    thread_ts=thread_ts,
                    ts=ts,
                    user=user,
                    text=text,
                    retried=is_retried_delivery(request),
                ),
                client=client,
                presence=session,
            )

    @app.event("agent_session_stopped")
    async def on_agent_session_stopped(
        body: dict[str, Any],
        event: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        channel, thread_ts = event.get("channel"), event.get("thread_ts")
        async with handling(
            "slack.agent_session_stopped",
            body,
            user=event.get("user"),
            channel=channel,
            thread_ts=thread_ts,
        ):
            if not isinstance(channel, str) or not isinstance(thread_ts, str):
                return
            if await dedupe.is_duplicate(body):
                return
            user, asker = event.get("user"), answerer.turns.asker(channel, thread_ts)
            if asker is None:
                # Nothing runs here to vouch for the thread: only the person's own DM (the
                # only place Orion sets a session, so a Stop shows) is confirmed and idled.
                theirs = await answerer.dms.theirs(client, context.team_id, user, channel)
            else:  # a channel thread's work ends for the Stop Slack sent (its docs)
                theirs = is_shared_channel_id(channel) or asker == user
            if not theirs:
                log.warning("slack.agent_session_stopped.not_theirs", running_here=bool(asker))
                return
            stopped_here = answerer.turns.stop(channel, thread_ts)
            log.info("slack.agent_session_stopped.turn", running_here=stopped_here)
            try:
                await client.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=STOPPED_CONFIRMATION, **NO_UNFURLS
                )
            except Exception as exc:
                log.warning("slack.stop_confirmation_failed", exc_info=exc)
            if not stopped_here:  # a turn ended here sets it as it ends
                await AgentSession(client, channel=channel, thread_ts=thread_ts).idle()


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
        log.warning("slack.preferences_unavailable", exc_info=exc)
        return None
    return stored.content if stored is not None else None
