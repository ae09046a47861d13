"""Events no other listener wants: acknowledged (without a listener Bolt answers 404, and
Slack retries the event three times) and dropped; an event of the experience Orion was
not configured for is reported once."""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncApp

from app.config import SlackExperience
from app.observability.logging import get_logger

log = get_logger(__name__)

# Events only the other experience sends.
ONLY_IN = {
    SlackExperience.ASSISTANT: ("assistant_thread_started", "assistant_thread_context_changed"),
    SlackExperience.AGENT: ("app_context_changed", "agent_session_stopped"),
}
_ANY_TYPE = re.compile(r".*")


def register_wrong_experience(app: AsyncApp, configured: SlackExperience) -> None:
    """The app's manifest and `SLACK_EXPERIENCE` disagree, so threads would go unanswered
    silently: the first event that gives it away logs what to change."""
    other = next(experience for experience in SlackExperience if experience is not configured)
    warned = False

    async def on_other_experience(event: dict[str, Any]) -> None:
        nonlocal warned
        if not warned:
            warned = True
            log.error(
                "slack.experience_mismatch",
                event_type=event.get("type"),
                configured=configured.value,
                hint=f"this Slack app uses the {other.value} experience: "
                f"set SLACK_EXPERIENCE={other.value}",
            )

    for event_type in ONLY_IN[other]:
        app.event(event_type)(on_other_experience)


def register_ignored(app: AsyncApp) -> None:
    """Last (Bolt runs the first listener that matches): messages outside assistant threads
    and events of any other type (docs/architecture.md, "Rooms inside app/slack")."""

    @app.event("message")
    async def ignore_other_messages(event: dict[str, Any]) -> None:
        log.debug(
            "slack.message.ignored", subtype=event.get("subtype"), channel=event.get("channel")
        )

    @app.event(_ANY_TYPE)
    async def ignore_other_events(event: dict[str, Any]) -> None:
        log.debug("slack.event.ignored", type=str(event.get("type"))[:64])
