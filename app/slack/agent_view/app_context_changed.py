"""`app_context_changed` (agent_view): what the person is looking at in Slack changed.

The successor of `assistant_thread_context_changed`, but per person rather than per
thread: kept (app/slack/agent_view/viewing.py) for the conversations they start.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from app.observability.logging import get_logger
from app.slack.agent_view.viewing import Viewing

log = get_logger(__name__)


def register(app: AsyncApp, viewing: Viewing) -> None:
    @app.event("app_context_changed")
    async def on_app_context_changed(event: dict[str, Any]) -> None:
        context = event.get("context") or {}
        viewing.saw(event.get("user"), context)
        log.debug("slack.app_context_changed", entities=len(context.get("entities") or []))
