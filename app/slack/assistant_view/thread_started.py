"""`assistant_thread_started`: restore what Orion remembers, then greet the person.

Order matters for what the person sees: the status appears at once; the conversation's
record is created (with Slack's context of the thread: its create-only write is also the
claim a retried delivery loses) at the same time as the person's profile and preferences
are read, under one storage budget (2 s by default), so the greeting waits for one
storage round trip, not several; the greeting reflects what was found; then the suggested
prompts are set, and the thread start settles with the person's profile
(app/learning/guard.py), once nobody else waits for a greeting or an answer
(app/runtime/waiting.py): if they asked to be forgotten meanwhile, the record goes again.
Four storage requests in all. Nothing here waits for the Claude client.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import (
    AsyncSetSuggestedPrompts,
)
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.conversation_record import ConversationOwner, owner_of_event, thread_context
from app.learning.conversations import begin_conversation
from app.learning.guard import Forgotten
from app.learning.opening import Opening, open_event
from app.learning.welcome import welcome_of
from app.memory.loader import Scope
from app.observability.logging import get_logger
from app.runtime.waiting import waiting
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
from app.slack.conversation.turn_opening import memory_store
from app.slack.conversation.unfurls import NO_UNFURLS
from app.slack.event_scope import handling
from app.storage.breaker import StoreOffline
from app.storage.deadline import time_left

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
    ) -> None:
        thread = payload["assistant_thread"]
        user, thread_ts = thread.get("user_id"), thread["thread_ts"]
        channel = thread.get("channel_id")
        async with handling(
            "slack.thread_started", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if dedupe.seen_here(body):
                return
            with waiting.person():  # until the greeting and its prompts show
                status = AssistantStatus(client, channel=channel or "", thread_ts=thread_ts)
                owner = owner_of_event(user, channel, context.team_id, context.enterprise_id)
                start = _Start(provider, dedupe, body, owner, thread_ts, thread)
                delivery = Delivery(
                    start.claim_is_taken,
                    retried=is_retried_delivery(request),
                    budget_s=budget_s,
                    memory=start.open,
                )
                if not await delivery.claim(lambda: status.progress(RESTORING_STATUS)):
                    return  # another delivery of this event is greeting: leave it be
                opening = await delivery.memory
                greeting = _greeting(opening, provider.settings.memory_session_retention_days)
                await _greet(say, set_suggested_prompts, greeting)
            await waiting.until_nobody()
            await start.settle(opening)


async def _greet(
    say: AsyncSay, set_suggested_prompts: AsyncSetSuggestedPrompts, greeting: Greeting
) -> None:
    """The greeting, then its prompts (none without it). Never raises."""
    try:
        await say(greeting.text, **NO_UNFURLS)
        await set_suggested_prompts(prompts=greeting.prompts)
    except Exception as exc:
        log.error("slack.thread_started.failed", error=type(exc).__name__, exc_info=exc)


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
            log.warning("slack.conversation.record_failed", error=type(exc).__name__, exc_info=exc)
            return False
        if self._recorded is None:
            log.info("slack.event.duplicate", source="record")
            return True
        return False

    async def open(self) -> Opening | None:
        store = await memory_store(self._provider)
        if store is None or self._owner is None:
            return None
        left = time_left()
        return await open_event(
            store,
            self._owner,
            self._thread_ts,
            budget_s=self._provider.settings.memory_load_timeout_s if left is None else left,
            token_budget=self._provider.settings.memory_context_token_budget,
            conversation=False,  # Slack has just opened it: there is nothing to read yet
            since=self._began,  # an erasure after it takes the record back
        )

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
            log.warning("slack.conversation.settle_failed", error=type(exc).__name__, exc_info=exc)


def _greeting(opening: Opening | None, retention_days: int) -> Greeting:
    if opening is None:
        return Greeting(GENERIC_GREETING, SUGGESTED_PROMPTS)
    welcome = welcome_of(opening.profile)
    if welcome is not None and not welcome.fresh(datetime.now(UTC), retention_days):
        welcome = None
    return thread_greeting(opening.loaded.content(Scope.USER), welcome)
