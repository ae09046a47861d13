""" "Forget everything Orion knows about me" on the Home tab (after Slack's confirm dialog):
erase all of the clicking person's memory, then show them the now empty tab.

Only this click (or an operator's command) erases everything: no tool offers it to the
model. It acts on the person who clicked: everything of theirs is in their home
(app/learning/erasure.py). The log says how many objects of each kind went, never what
they said.
"""

from __future__ import annotations

import time
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.erasure import forget_everything
from app.observability import tracing
from app.observability.logging import get_logger
from app.slack.event_scope import handling
from app.slack.home.home_tab import HomeTab, MemoryOff, clicking_user, owner_of
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING, MEMORY_OFF

log = get_logger(__name__)

# Erasing is not on a conversation's path, and must finish: hundreds of deletions.
ERASE_BUDGET_S = 60.0

DONE = "Done: Orion has forgotten everything it knew about you."
FAILED = (
    "Orion couldn't finish forgetting everything: its memory isn't answering. Some of it "
    "may still be there; please try again in a few minutes."
)


def register(app: AsyncApp, home: HomeTab) -> None:
    @app.action(ACTION_FORGET_EVERYTHING)
    async def on_forget_everything(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user = clicking_user(body)
        async with handling(
            "slack.memory_forget_everything", body, user=user, channel=None, thread_ts=None
        ):
            if not user:
                return
            started = time.perf_counter()
            with tracing.observe(
                "memory.forget", input={"kind": "everything", "via": "home"}
            ) as span:
                try:
                    async with home.store(ERASE_BUDGET_S) as store:
                        report = await forget_everything(store, user)
                except MemoryOff:
                    notice = MEMORY_OFF
                except Exception as exc:
                    log.warning(
                        "memory.forget.failed",
                        kind="everything",
                        error=type(exc).__name__,
                        exc_info=exc,
                    )
                    notice = FAILED
                else:
                    notice = DONE
                    # The report's own count of objects, when it has one, says more.
                    counts = {"objects": report.total, **report.deleted}
                    span.update(output=counts)
                    log.info(
                        "memory.forget",
                        via="home",
                        kind="everything",
                        **counts,
                        duration_ms=round((time.perf_counter() - started) * 1000, 1),
                    )
            await home.publish(client, owner_of(body), notice=notice)
            await tracing.forget_person_traces(user)  # after the tab: it may take seconds
