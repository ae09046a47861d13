"""A person's message in Orion's DM (agent_view): start or continue a conversation.

In the Agent messaging experience there is no `assistant_thread_started`: a conversation
starts as the person's own top-level DM, and Orion answers in that message's thread (the
conversation's key is `thread_ts or ts`). That first message records the conversation as
the person's, and like every message restores their memories within the same budget as a
thread start (beside the retry-dedupe claim), folded into the answer: the person asked a
question, and an answer that already knows their preferences greets them better than a
welcome posted before it. Its session is named after that question.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.slack.conversation.answering import Answerer, Incoming, workspace_url
from app.slack.conversation.dedupe import EventDeduplicator, is_retried_delivery
from app.slack.conversation.presence import AgentSession
from app.slack.event_scope import handling
from app.slack.mrkdwn import text_of

log = get_logger(__name__)

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
    app: AsyncApp,
    answerer: Answerer,
    dedupe: EventDeduplicator,
) -> None:
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
                    channel=channel,
                    thread_ts=thread_ts,
                    ts=ts,
                    user=user,
                    text=text,
                    team_id=context.team_id,
                    retried=is_retried_delivery(request),
                    workspace_url=workspace_url(context),
                    enterprise_id=context.enterprise_id,
                    starts=starts,
                ),
                client=client,
                presence=session,
            )
