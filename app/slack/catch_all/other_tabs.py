"""`app_home_opened` on a tab nobody shows anything for (the Messages tab in
assistant_view, the About tab): acknowledged and ignored.

Registered after every other `app_home_opened` listener. Without it Bolt answers 404,
and Slack retries the event.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from app.observability.logging import get_logger

log = get_logger(__name__)


def register(app: AsyncApp) -> None:
    @app.event("app_home_opened")
    async def ignore_other_tabs(event: dict[str, Any]) -> None:
        log.debug("slack.app_home_opened.ignored", tab=event.get("tab"))
