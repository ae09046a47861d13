"""`app_home_opened` on the Home tab: show the person what Orion keeps about them.

Published afresh on every opening (`views.publish`), so the tab is never older than the
storage it reads. The event's `channel` is the person's DM with Orion: the view keeps it,
so that "Forget everything" also reaches the conversations there. The Messages tab
(agent_view) has its own listener (messages_tab_opened): this one is registered first and
matches the Home tab only.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from app.slack.event_scope import handling
from app.slack.home.home_tab import HomeTab
from app.slack.home.memory_view import HomeOwner

HOME_TAB = "home"


async def _on_home_tab(event: dict[str, Any]) -> bool:
    return event.get("tab") == HOME_TAB


def register(app: AsyncApp, home: HomeTab) -> None:
    @app.event("app_home_opened", matchers=[_on_home_tab])
    async def on_home_opened(
        body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient
    ) -> None:
        user, channel = event.get("user"), event.get("channel")
        async with handling("slack.home_opened", body, user=user, channel=channel, thread_ts=None):
            if not user:
                return
            await home.publish(client, HomeOwner(user, channel))
