"""`agent_session_title_changed` (agent_view): a conversation was renamed (by the person,
or by Orion's own rename). Orion keeps no titles of its own: acknowledged and noted."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from app.observability.logging import get_logger

log = get_logger(__name__)


def register(app: AsyncApp) -> None:
    @app.event("agent_session_title_changed")
    async def on_session_title_changed(event: dict[str, Any]) -> None:
        log.debug("slack.session_title_changed", thread_ts=event.get("thread_ts"))
