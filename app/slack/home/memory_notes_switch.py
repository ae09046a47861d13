"""The Home tab's switch for memory notes: whether answers that changed what Orion
remembers carry a note saying what (with an Undo).

The choice is the clicking person's own (`body.user.id`), kept among Orion's records
(app/learning/person_settings.py) where the memory tool cannot flip it; the button's
value says only which way. Unset, the operator's `MEMORY_NOTES` holds.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.person_settings import choose_memory_notes
from app.observability.logging import get_logger
from app.slack.event_scope import handling
from app.slack.home.home_tab import HomeTab, MemoryOff, clicking_user, owner_of
from app.slack.home.memory_view import ACTION_MEMORY_NOTES, MEMORY_OFF, NOTES_SHOW

log = get_logger(__name__)

SHOWN = "Done: answers that change what Orion remembers will say so, with an Undo."
HIDDEN = "Done: answers won't show memory notes any more."
FAILED = (
    "Orion couldn't change that just now: its memory isn't answering. "
    "Please try again in a few minutes."
)


def register(app: AsyncApp, home: HomeTab) -> None:
    @app.action(ACTION_MEMORY_NOTES)
    async def on_notes_switch(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user = clicking_user(body)
        async with handling(
            "slack.memory_notes_switch", body, user=user, channel=None, thread_ts=None
        ):
            if not user:
                return
            shown = action.get("value") == NOTES_SHOW
            try:
                async with home.store() as store:
                    await choose_memory_notes(store, user, shown=shown)
            except MemoryOff:
                notice = MEMORY_OFF
            except Exception as exc:
                log.warning("memory.notes_switch.failed", error=type(exc).__name__, exc_info=exc)
                notice = FAILED
            else:
                log.info("memory.notes_switch", shown=shown)
                notice = SHOWN if shown else HIDDEN
            await home.publish(client, owner_of(body), notice=notice)
