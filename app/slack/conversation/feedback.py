"""The thumbs up/down buttons under each answer: a Langfuse score on the answer's trace."""

from __future__ import annotations

import hashlib
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.observability import tracing
from app.observability.logging import get_logger
from app.slack.conversation.reply_stream import ANSWER_METADATA_TYPE, FEEDBACK_ACTION_ID
from app.slack.event_scope import handling
from app.slack.web_client import dm_of

log = get_logger(__name__)

FEEDBACK_SCORE = "user_feedback"
THANKS_GOOD = "Thanks for the feedback, glad that helped."
THANKS_BAD = "Thanks for the feedback. I'll try to do better; feel free to tell me what was off."


def register(app: AsyncApp) -> None:
    @app.action(FEEDBACK_ACTION_ID)
    async def on_feedback(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        message = body.get("message") or {}
        user = (body.get("user") or {}).get("id")
        channel = (body.get("channel") or {}).get("id")
        async with handling(
            "slack.feedback", body, user=user, channel=channel, thread_ts=message.get("thread_ts")
        ):
            value = action.get("value")
            # A DM is one person's: a click there counts only from them.
            if str(channel).startswith("D") and await dm_of(client, user) != channel:
                log.warning("slack.feedback.not_theirs")
                return
            answer_trace = await _answer_trace(client, channel, message)
            log.info(
                "slack.feedback.received",
                value=value,
                message_ts=message.get("ts"),
                answer_trace=answer_trace,
            )
            if answer_trace and user and channel and message.get("ts"):
                # One score per person and answer: a second click (or a Slack retry)
                # replaces it, so changing one's mind updates it.
                tracing.score(
                    FEEDBACK_SCORE,
                    1.0 if value == "good" else 0.0,
                    trace_id=answer_trace,
                    score_id=hashlib.sha256(
                        f"{user}:{channel}:{message['ts']}".encode()
                    ).hexdigest()[:32],
                    comment=value,
                )
            await _thank(client, channel, user, message, value)


async def _answer_trace(
    client: AsyncWebClient, channel: str | None, message: dict[str, Any]
) -> str | None:
    """The trace of the answer that was rated, carried in its message metadata, read from
    Slack in the click's channel: a payload's own copy may be replayed from another."""
    metadata = None
    if channel and message.get("ts"):
        try:
            found = await client.conversations_replies(
                channel=channel,
                ts=message.get("thread_ts") or message["ts"],
                oldest=message["ts"],
                latest=message["ts"],
                inclusive=True,
                include_all_metadata=True,
                limit=2,
            )
        except SlackApiError as exc:
            log.warning(
                "slack.feedback.answer_unreadable", error=exc.response.get("error"), exc_info=exc
            )
            return None
        replies: list[dict[str, Any]] = found.get("messages") or []
        shown = [m for m in replies if m.get("ts") == message["ts"]]
        metadata = shown[0].get("metadata") if shown else None
    if not metadata or metadata.get("event_type") != ANSWER_METADATA_TYPE:
        return None
    trace_id = (metadata.get("event_payload") or {}).get("trace_id")
    return trace_id if isinstance(trace_id, str) else None


async def _thank(
    client: AsyncWebClient,
    channel: str | None,
    user: str | None,
    message: dict[str, Any],
    value: str | None,
) -> None:
    """Only the person who clicked sees it: the click registered, nothing else changes."""
    if not channel or not user:
        return  # an ephemeral goes to one person in one channel: no one to thank
    text = THANKS_GOOD if value == "good" else THANKS_BAD
    try:
        await client.chat_postEphemeral(
            channel=channel, user=user, thread_ts=message.get("thread_ts"), text=text
        )
    except SlackApiError as exc:
        log.warning("slack.feedback.thanks_failed", error=exc.response.get("error"), exc_info=exc)
