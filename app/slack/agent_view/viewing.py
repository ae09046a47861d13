"""What each person is looking at in Slack (agent_view's app context), as Slack last said.

Slack sends it as `app_context_changed` (per person, not per conversation) and inline on
each DM as `app_context`: entities such as channel ids, most relevant first. Orion keeps
the latest per person on this instance and saves it with a conversation's context when
the conversation starts, as it saves an assistant thread's context (the channel the
person was in). Bounded: the oldest people are forgotten first.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

PEOPLE_KEPT = 10_000
ENTITIES_KEPT = 5
VIEWING_KEY = "viewing"


class Viewing:
    def __init__(self) -> None:
        self._latest: OrderedDict[str, list[str]] = OrderedDict()

    def saw(self, user: str | None, app_context: dict[str, Any]) -> None:
        if not user:
            return
        entities = app_context.get("entities") or []
        values = [str(e["value"]) for e in entities if isinstance(e, dict) and "value" in e]
        self._latest[user] = values[:ENTITIES_KEPT]
        self._latest.move_to_end(user)
        while len(self._latest) > PEOPLE_KEPT:
            self._latest.popitem(last=False)

    def of(self, user: str | None) -> dict[str, str]:
        """For the conversation's saved context: what the person was viewing, if known."""
        values = self._latest.get(user or "")
        return {VIEWING_KEY: ",".join(values)} if values else {}
