"""The assistant thread's status line ("is thinking..."): shown, never fatal."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.set_status.async_set_status import AsyncSetStatus

from app.observability.logging import get_logger

log = get_logger(__name__)


async def show_status(set_status: AsyncSetStatus, status: str, **options: Any) -> None:
    """Show `status`; a status Slack refuses costs the person nothing but the status."""
    try:
        await set_status(status, **options)
    except Exception as exc:
        log.warning("slack.status_failed", error=type(exc).__name__, exc_info=exc)
