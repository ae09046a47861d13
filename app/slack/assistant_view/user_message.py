"""A message in an assistant thread (assistant_view): answer it with Claude, streamed into
the thread (app/slack/conversation/answering.py)."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.slack.conversation.answering import Answerer, Incoming, workspace_url
from app.slack.conversation.dedupe import EventDeduplicator, is_retried_delivery
from app.slack.conversation.presence import AssistantStatus
from app.slack.event_scope import handling
from app.slack.mrkdwn import text_of

log = get_logger(__name__)


def register(assistant: AsyncAssistant, answerer: Answerer, dedupe: EventDeduplicator) -> None:
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
                channel=channel,
                thread_ts=thread_ts,
                ts=payload["ts"],
                user=user,
                text=text_of(payload),
                team_id=context.team_id,
                retried=is_retried_delivery(request),
                workspace_url=workspace_url(context),
                enterprise_id=context.enterprise_id,
            )
            await answerer.answer(
                message,
                client=client,
                presence=AssistantStatus(client, channel=channel, thread_ts=thread_ts),
            )
