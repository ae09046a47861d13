"""The thumbs up/down buttons under each answer."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck

from app.observability import tracing
from app.observability.logging import get_logger
from app.slack.event_scope import handling
from app.slack.reply_stream import FEEDBACK_ACTION_ID

log = get_logger(__name__)


def register(app: AsyncApp) -> None:
    @app.action(FEEDBACK_ACTION_ID)
    async def on_feedback(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any]) -> None:
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
