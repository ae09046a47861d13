"""The thumbs up/down buttons under each answer."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.observability import tracing
from app.observability.logging import get_logger
from app.slack.event_scope import handling
from app.slack.reply_stream import FEEDBACK_ACTION_ID

log = get_logger(__name__)

THANKS_GOOD = "Thanks for the feedback, glad that helped."
THANKS_BAD = "Thanks for the feedback. I'll try to do better; feel free to tell me what was off."


def register(app: AsyncApp) -> None:
    @app.action(FEEDBACK_ACTION_ID)
    async def on_feedback(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        message = body.get("message") or {}
        async with handling(
            "slack.feedback",
            body,
            user=(body.get("user") or {}).get("id"),
            channel=(body.get("channel") or {}).get("id"),
            thread_ts=message.get("thread_ts"),
        ):
            value = action.get("value")
            log.info("slack.feedback.received", value=value, message_ts=message.get("ts"))
            tracing.event("slack.feedback", metadata={"value": value})
            await _thank(client, body, message, value)


async def _thank(
    client: AsyncWebClient, body: dict[str, Any], message: dict[str, Any], value: str | None
) -> None:
    """Only the person who clicked sees it: the click registered, nothing else changes."""
    text = THANKS_GOOD if value == "good" else THANKS_BAD
    try:
        await client.chat_postEphemeral(
            channel=(body.get("channel") or {}).get("id"),
            user=(body.get("user") or {}).get("id"),
            thread_ts=message.get("thread_ts"),
            text=text,
        )
    except SlackApiError as exc:
        log.warning("slack.feedback.thanks_failed", error=exc.response.get("error"))
