"""How a conversation shows that Orion is working, the one thing the experiences do differently
(docs/agent-display.md). A status Slack refuses never fails a turn."""

from __future__ import annotations

from typing import Protocol

from slack_sdk.web.async_client import AsyncWebClient

from app.learning.plain_text import one_line
from app.observability.logging import get_logger

log = get_logger(__name__)

THINKING_STATUS = "is thinking..."
# Slack rotates these while the status shows (at most 10).
LOADING_MESSAGES = [
    "Thinking it over...",
    "Checking what I remember...",
    "Putting an answer together...",
]
SESSION_TITLE_CHARS = 200


class Presence(Protocol):
    async def working(self) -> None:
        """The person's message has arrived and Orion is on it."""
        ...

    async def progress(self, status: str) -> None:
        """What Orion is doing between pieces of the answer ("is checking its memory...")."""
        ...

    async def idle(self) -> None:
        """The turn is over (answered, apologised for, or stopped)."""
        ...


class AssistantStatus:
    """assistant_view's status line of one assistant thread: while a message is answered,
    and while a thread start restores its memory."""

    def __init__(self, client: AsyncWebClient, *, channel: str, thread_ts: str) -> None:
        self._client, self._channel, self._thread_ts = client, channel, thread_ts

    async def working(self) -> None:
        await self._set(THINKING_STATUS, loading_messages=LOADING_MESSAGES)

    async def progress(self, status: str) -> None:
        await self._set(status)

    async def idle(self) -> None:
        """Nothing to do: Slack clears the status line when Orion replies."""

    async def _set(self, status: str, *, loading_messages: list[str] | None = None) -> None:
        try:
            # The SDK leaves out a None argument: a plain status sends no loading messages.
            await self._client.assistant_threads_setStatus(
                channel_id=self._channel,
                thread_ts=self._thread_ts,
                status=status,
                loading_messages=loading_messages,
            )
        except Exception as exc:
            log.warning("slack.status_failed", exc_info=exc)


class AgentSession:
    """agent_view's session of one conversation (a DM thread). `title`: name the session
    (the conversation's first question) once `working()` has created it."""

    def __init__(
        self, client: AsyncWebClient, *, channel: str, thread_ts: str, title: str | None = None
    ) -> None:
        self._client, self._channel, self._thread_ts = client, channel, thread_ts
        self._title = one_line(title or "", SESSION_TITLE_CHARS)

    async def working(self) -> None:
        await self._set("processing")
        if self._title:
            title, self._title = self._title, ""
            await self._rename(title)

    async def progress(self, status: str) -> None:
        """Nothing to add: `processing` already shows, and takes no text."""

    async def idle(self) -> None:
        await self._set("active")

    async def _rename(self, title: str) -> None:
        try:
            await self._client.agents_sessions_rename(
                channel_id=self._channel, thread_ts=self._thread_ts, title=title
            )
        except Exception as exc:
            log.warning("slack.session_rename_failed", exc_info=exc)

    async def _set(self, status: str) -> None:
        try:
            await self._client.agents_sessions_setStatus(
                channel_id=self._channel, thread_ts=self._thread_ts, status=status
            )
        except Exception as exc:
            log.warning("slack.session_status_failed", exc_info=exc)


class InChannel:
    """A channel thread's presence: nothing beside the answer's own stream (see above)."""

    async def working(self) -> None:
        """Nothing to set: the answer's stream shows the work."""

    async def progress(self, status: str) -> None:
        """No status line in a channel."""

    async def idle(self) -> None:
        """Nothing was set."""
