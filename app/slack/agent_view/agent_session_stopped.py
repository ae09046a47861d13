"""`agent_session_stopped` (agent_view): the person pressed Stop while Orion was working
(docs/operations.md, "Starting, stopping and restarts"). Slack stops the answer's stream
itself, and the process answering learns it from its next stream call
(app/slack/conversation/running_turns.py); a turn running here is ended at once.
Whichever instance gets the event confirms the stop in one line and sets the session back
to `active` (Slack does not); a redelivery does neither again."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.slack.conversation.dedupe import EventDeduplicator
from app.slack.conversation.presence import AgentSession
from app.slack.conversation.running_turns import RunningTurns
from app.slack.conversation.unfurls import NO_UNFURLS
from app.slack.event_scope import handling

log = get_logger(__name__)

# What the person sees in the thread once their Stop has ended the answer.
STOPPED_CONFIRMATION = "Stopped. Ask again whenever you're ready."


def register(app: AsyncApp, turns: RunningTurns, dedupe: EventDeduplicator) -> None:
    @app.event("agent_session_stopped")
    async def on_agent_session_stopped(
        body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient
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
            stopped_here = turns.stop(channel, thread_ts)
            log.info("slack.agent_session_stopped.turn", running_here=stopped_here)
            try:
                await client.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=STOPPED_CONFIRMATION, **NO_UNFURLS
                )
            except Exception as exc:
                log.warning(
                    "slack.stop_confirmation_failed", error=type(exc).__name__, exc_info=exc
                )
            if not stopped_here:  # a turn ended here sets it as it ends
                await AgentSession(client, channel=channel, thread_ts=thread_ts).idle()
