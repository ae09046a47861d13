"""A Forget button on the Home tab: remove one preference, note or conversation, then
show the tab again without it.

The button's value names the item only; it is always looked for among the memory of the
person who clicked (`body.user.id`). A note is a file name under their own directory; a
conversation must be one of their own (their session index), and its summary is deleted
only if it is theirs. So a crafted payload can at most make a person forget their own
things.
"""

from __future__ import annotations

import re
import time
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.erasure import forget_item
from app.memory.scopes import to_memory_path
from app.observability import tracing
from app.observability.logging import get_logger
from app.slack.event_scope import handling
from app.slack.home.home_tab import HomeTab, MemoryOff, clicking_user, owner_of
from app.slack.home.memory_view import (
    ACTION_FORGET_CONVERSATION,
    ACTION_FORGET_NOTE,
    ACTION_FORGET_PREFERENCE,
    MEMORY_OFF,
)
from app.storage.store import ObjectStore

log = get_logger(__name__)

KINDS = {
    ACTION_FORGET_PREFERENCE: "preference",
    ACTION_FORGET_NOTE: "note",
    ACTION_FORGET_CONVERSATION: "conversation",
}
ACTIONS = re.compile("|".join(re.escape(action_id) for action_id in KINDS))

FORGOTTEN = {
    "preference": "Done: Orion has forgotten that preference.",
    "note": "Done: Orion has deleted that note.",
    "conversation": "Done: Orion has forgotten that conversation.",
}
ALREADY_GONE = "That was already gone: Orion doesn't keep it any more."
FAILED = (
    "Orion couldn't forget that just now: its memory isn't answering. "
    "Please try again in a few minutes."
)


def register(app: AsyncApp, home: HomeTab) -> None:
    @app.action(ACTIONS)
    async def on_forget_item(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user = clicking_user(body)
        async with handling("slack.memory_forget", body, user=user, channel=None, thread_ts=None):
            if not user:
                return
            kind = KINDS[action["action_id"]]
            started = time.perf_counter()
            with tracing.observe("memory.forget", input={"kind": kind, "via": "home"}) as span:
                try:
                    async with home.store() as store:
                        deleted = await _forget(store, user, kind, str(action.get("value") or ""))
                except MemoryOff:
                    notice, deleted = MEMORY_OFF, 0
                except Exception as exc:
                    log.warning(
                        "memory.forget.failed", kind=kind, error=type(exc).__name__, exc_info=exc
                    )
                    notice, deleted = FAILED, 0
                else:
                    notice = FORGOTTEN[kind] if deleted else ALREADY_GONE
                span.update(output={"objects": deleted})
            log.info(
                "memory.forget",
                via="home",
                kind=kind,
                objects=deleted,
                duration_ms=round((time.perf_counter() - started) * 1000, 1),
            )
            await home.publish(client, owner_of(body), notice=notice)


async def _forget(store: ObjectStore, user: str, kind: str, value: str) -> int:
    """Forget the person's own item named `value` (a note: a file name under their own
    directory, checked as the memory tool checks paths); how many objects changed or went."""
    item = to_memory_path(f"users/{user}/{value}") if kind == "note" else value
    try:
        return await forget_item(store, user, kind, item)
    except ValueError:
        return 0  # not a note or a thread id of theirs
