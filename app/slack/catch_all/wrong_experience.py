"""Events of the Slack experience Orion was not configured for: said once, clearly.

A Slack app is created with either the Assistant or the Agent messaging experience (its
manifest), and Orion is told which by `SLACK_EXPERIENCE`. If they disagree, the person's
threads go unanswered; instead of failing silently, the first event that gives it away
logs what to change. The event itself is acknowledged and dropped.
"""

from __future__ import annotations

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


def register(app: AsyncApp, configured: SlackExperience) -> None:
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
