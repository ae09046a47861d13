"""`agent_session_stopped` (agent_view): the person pressed Stop while Orion was working.

The turn running in that conversation on this instance (in this worker process or
another, app/slack/conversation/running_turns.py) is cancelled at once: what was
already streamed stays in the thread, its stream ended (Slack usually ends it itself), one
short line confirms the stop (app/slack/conversation/answering.py), nothing is learned
from the cancelled turn, and the session goes back to `active` as the turn ends. Slack
does not change the session's status on a Stop, so when no turn runs here (it ran on
another instance, or had just finished) the session is set `active` from here; nothing is
confirmed then, as this instance stopped nothing.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.slack.conversation.presence import AgentSession
from app.slack.conversation.running_turns import RunningTurns, Stopped
from app.slack.event_scope import handling

log = get_logger(__name__)


def register(app: AsyncApp, turns: RunningTurns) -> None:
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
            if not channel or not thread_ts:
                return
            stopped = await turns.stop(channel, thread_ts)
            log.info(
                "slack.agent_session_stopped.turn",
                running_here=stopped is Stopped.HERE,
                stopped=stopped.value,
            )
            if stopped is Stopped.NOTHING:
                await AgentSession(client, channel=channel, thread_ts=thread_ts).idle()
