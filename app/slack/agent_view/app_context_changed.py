"""`app_context_changed` (agent_view): what the person is looking at in Slack changed.

The successor of `assistant_thread_context_changed`, per person rather than per thread.
Orion answers from what the person writes, not from what they are looking at, so the
event is only acknowledged (without a listener, Bolt answers 404 and Slack retries).
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from app.observability.logging import get_logger

log = get_logger(__name__)


def register(app: AsyncApp) -> None:
    @app.event("app_context_changed")
    async def on_app_context_changed(event: dict[str, Any]) -> None:
        entities = (event.get("context") or {}).get("entities") or []
        log.debug("slack.app_context_changed", entities=len(entities))
