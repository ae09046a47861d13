"""Events of any other type (one a Slack app is subscribed to without Orion listening, or
one Slack adds later): acknowledged and ignored.

Without a matching listener Bolt answers 404, and Slack retries the event three times.
Registered last: Bolt runs the first listener that matches.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncApp

from app.observability.logging import get_logger

log = get_logger(__name__)

_ANY_TYPE = re.compile(r".*")


def register(app: AsyncApp) -> None:
    @app.event(_ANY_TYPE)
    async def ignore_other_events(event: dict[str, Any]) -> None:
        log.debug("slack.event.ignored", type=str(event.get("type"))[:64])
