"""Orion mentioned in a channel (`app_mention`), answered in the mention's thread as the channel's
conversation (docs/channels.md; app/slack/conversation/channel_turns.py decides whether and with
what). Bots' mentions are not answered: two apps mentioning each other would never stop."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.memory.scopes import is_shared_channel_id, is_thread_ts
from app.observability.logging import get_logger
from app.slack.conversation.answering import Answerer, Incoming
from app.slack.conversation.dedupe import EventDeduplicator, is_retried_delivery
from app.slack.conversation.presence import InChannel
from app.slack.event_scope import handling
from app.slack.mrkdwn import text_of

log = get_logger(__name__)

# Message subtypes that are a person writing (a file with a comment, a reply also sent to
# the channel).
_PERSON_SUBTYPES = (None, "file_share", "thread_broadcast")


def register(app: AsyncApp, answerer: Answerer, dedupe: EventDeduplicator) -> None:
    @app.event("app_mention")
    async def on_app_mention(
        body: dict[str, Any],
        event: dict[str, Any],
        request: AsyncBoltRequest,
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        channel, user, ts = event.get("channel"), event.get("user"), event.get("ts")
        thread_ts = event.get("thread_ts") or ts
        async with handling(
            "slack.app_mention", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if event.get("bot_id") or event.get("subtype") not in _PERSON_SUBTYPES:
                log.info("slack.app_mention.ignored", reason="not a person writing")
                return
            if not (
                isinstance(user, str)
                and is_shared_channel_id(channel)
                and is_thread_ts(ts)
                and is_thread_ts(thread_ts)
            ):
                log.info("slack.app_mention.ignored", reason="malformed")
                return
            if dedupe.seen_here(body):
                return
            await answerer.answer(
                Incoming(
                    body=body,
                    context=context,
                    channel=str(channel),
                    thread_ts=str(thread_ts),
                    ts=str(ts),
                    user=user,
                    text=text_of(event),
                    retried=is_retried_delivery(request),
                    in_channel=True,
                    shared_externally=body.get("is_ext_shared_channel") is True,
                ),
                client=client,
                presence=InChannel(),
            )
