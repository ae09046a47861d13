"""The Assistant messaging experience (assistant_view): side-pane threads Slack opens
(docs/architecture.md, "How an event flows"); a thread's context is kept with its conversation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.conversation_record import ConversationOwner, owner_of_event, thread_context
from app.learning.conversations import begin_conversation, change_conversation
from app.learning.guard import Forgotten
from app.learning.opening import Opening, open_event
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.answering import Answerer, Incoming
from app.slack.conversation.dedupe import EventDeduplicator, is_retried_delivery
from app.slack.conversation.delivery import Delivery
from app.slack.conversation.greeting import Greeting, greeting_of
from app.slack.conversation.presence import AssistantStatus
from app.slack.conversation.turn_opening import TurnOpening, memory_store
from app.slack.conversation.unfurls import NO_UNFURLS
from app.slack.event_scope import handling
from app.slack.mrkdwn import text_of
from app.storage.breaker import StoreOffline

log = get_logger(__name__)

RESTORING_STATUS = "Restoring your preferences..."


def register(
    app: AsyncApp, provider: ServiceProvider, dedupe: EventDeduplicator, answerer: Answerer
) -> None:
    budget_s = provider.settings.memory_load_timeout_s
    assistant = AsyncAssistant()

    @assistant.thread_started
    async def on_thread_started(
        body: dict[str, Any],
        payload: dict[str, Any],
        request: AsyncBoltRequest,
        client: AsyncWebClient,
        context: AsyncBoltContext,
        say: AsyncSay,
        set_suggested_prompts: AsyncSetSuggestedPrompts,
    ) -> None:
        thread = payload["assistant_thread"]
        user, thread_ts = thread.get("user_id"), thread["thread_ts"]
        channel = thread.get("channel_id")
        async with handling(
            "slack.thread_started", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if dedupe.seen_here(body):
                return
            status = AssistantStatus(client, channel=channel or "", thread_ts=thread_ts)
            owner = owner_of_event(user, channel, context.team_id, context.enterprise_id)
            start = _Start(provider, dedupe, body, owner, thread_ts, thread)
            theirs = partial(answerer.dms.theirs, client, context.team_id, user, channel or "")
            delivery = Delivery(
                start.claim_is_taken,
                retried=is_retried_delivery(request),
                budget_s=budget_s,
                memory=partial(start.open, theirs),
            )
            if not await delivery.claim(lambda: status.progress(RESTORING_STATUS)):
                return  # another delivery of this event is greeting: leave it be
            opening = await delivery.memory
            greeting = greeting_of(opening, provider.settings.memory_session_retention_days)
            await _greet(say, set_suggested_prompts, greeting)
            await start.settle(opening)

    @assistant.user_message
    async def on_user_message(
        body: dict[str, Any],
        payload: dict[str, Any],
        request: AsyncBoltRequest,
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        channel, thread_ts, user = payload["channel"], payload["thread_ts"], payload.get("user")
        async with handling(
            "slack.user_message", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if dedupe.seen_here(body):
                return
            message = Incoming(
                body=body,
                context=context,
                channel=channel,
                thread_ts=thread_ts,
                ts=payload["ts"],
                user=user,
                text=text_of(payload),
                retried=is_retried_delivery(request),
            )
            await answerer.answer(
                message,
                client=client,
                presence=AssistantStatus(client, channel=channel, thread_ts=thread_ts),
            )

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
                log.warning("slack.thread_context_changed.failed", exc_info=exc)

    app.assistant(assistant)


async def _greet(
    say: AsyncSay, set_suggested_prompts: AsyncSetSuggestedPrompts, greeting: Greeting
) -> None:
    """The greeting, then its prompts (none without it). Never raises."""
    try:
        await say(greeting.text, **NO_UNFURLS)
        await set_suggested_prompts(prompts=greeting.prompts)
    except Exception as exc:
        log.error("slack.thread_started.failed", exc_info=exc)


class _Start:
    """One thread start's storage: the record created (the claim) beside the reads."""

    def __init__(
        self,
        provider: ServiceProvider,
        dedupe: EventDeduplicator,
        body: dict[str, Any],
        owner: ConversationOwner | None,
        thread_ts: str,
        thread: dict[str, Any],
    ) -> None:
        self._provider = provider
        self._dedupe = dedupe
        self._body = body
        self._owner = owner
        self._thread_ts = thread_ts
        self._began = datetime.now(UTC)
        self._context = thread_context(thread.get("context"))
        self._recorded: int | None = None  # the record's generation, once created

    async def claim_is_taken(self) -> bool:
        """Whether another delivery of this start has it: the record's create-only write
        is the claim (memory off: the event's own claim)."""
        store = await memory_store(self._provider)
        if store is None or self._owner is None:
            return await self._dedupe.is_duplicate(self._body)
        try:
            self._recorded = await begin_conversation(
                store, self._owner, self._thread_ts, started=self._began, context=self._context
            )
        except StoreOffline:
            log.debug("slack.conversation.record_skipped", reason="store unavailable")
            return False
        except Exception as exc:  # greeting beats waiting: at worst, twice
            log.warning("slack.conversation.record_failed", exc_info=exc)
            return False
        if self._recorded is None:
            log.info("slack.event.duplicate", source="record")
            return True
        return False

    async def open(self, theirs: Callable[[], Awaitable[bool | None]]) -> Opening | None:
        """The person's state; None when the DM is not theirs: a conversation of theirs kept
        there vouches for it, else Slack is asked (`theirs`, TurnOpening.in_dm)."""
        store = await memory_store(self._provider)
        if store is None or self._owner is None:
            return None
        opening = TurnOpening(
            self._owner,
            await open_event(
                store,
                self._owner,
                self._thread_ts,
                budget_s=self._provider.settings.memory_load_timeout_s,
                token_budget=self._provider.settings.memory_context_token_budget,
                conversation=False,  # Slack has just opened it: there is nothing to read yet
                since=self._began,  # an erasure after it takes the record back
            ),
        )
        if opening.vouched_in(self._owner.channel):
            return opening.opening
        return opening.in_dm(await theirs()).opening

    async def settle(self, opening: Opening | None) -> None:
        """As after every write of a person's data: if they asked to be forgotten since
        the thread started, its record goes again. Never raises."""
        if opening is None or self._recorded is None or opening.guard is None:
            return
        guard = opening.guard
        guard.noted(opening.owner.home.conversation_key(self._thread_ts), self._recorded)
        try:
            await guard.settle()
        except Forgotten:
            log.info("slack.conversation.erased_since_start")
        except StoreOffline:
            log.debug("slack.conversation.settle_skipped", reason="store unavailable")
        except Exception as exc:
            log.warning("slack.conversation.settle_failed", exc_info=exc)
