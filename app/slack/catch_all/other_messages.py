"""Messages outside assistant threads (top-level DMs, edits): acknowledged and ignored.

Without a matching listener Bolt answers 404, and Slack retries the event.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from app.observability.logging import get_logger

log = get_logger(__name__)


def register(app: AsyncApp) -> None:
    @app.event("message")
    async def ignore_other_messages(event: dict[str, Any]) -> None:
        log.debug(
            "slack.message.ignored", subtype=event.get("subtype"), channel=event.get("channel")
        )
