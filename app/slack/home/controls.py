"""The Home tab's listeners: the tab opened and its memory controls (docs/memory-controls.md,
"Buttons"). Each acts on whoever opened or clicked, never on anyone a button's value names:
a crafted payload can at most make a person forget their own things."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.erasure import forget_everything, forget_item
from app.learning.memory_document import render_memory
from app.learning.memory_inventory import MemoryInventory, take_inventory
from app.learning.person_settings import choose_memory_notes
from app.memory.scopes import to_memory_path
from app.observability import tracing
from app.observability.logging import get_logger, since
from app.slack.event_scope import handling
from app.slack.home.home_tab import HomeTab, MemoryOff, clicking_user
from app.slack.home.memory_view import (
    ACTION_DOWNLOAD,
    ACTION_FORGET_CONVERSATION,
    ACTION_FORGET_EVERYTHING,
    ACTION_FORGET_NOTE,
    ACTION_FORGET_PREFERENCE,
    ACTION_MEMORY_NOTES,
    MEMORY_OFF,
    NOTES_SHOW,
)
from app.slack.web_client import dm_of
from app.storage.store import ObjectStore

log = get_logger(__name__)

# The Messages tab (agent_view) has its own `app_home_opened` listener; this one is
# registered first and matches the Home tab only.
HOME_TAB = "home"

FORGET_KINDS = {
    ACTION_FORGET_PREFERENCE: "preference",
    ACTION_FORGET_NOTE: "note",
    ACTION_FORGET_CONVERSATION: "conversation",
}
FORGET_ACTIONS = re.compile("|".join(re.escape(action_id) for action_id in FORGET_KINDS))
FORGOTTEN = {
    "preference": "Done: Orion has forgotten that preference.",
    "note": "Done: Orion has deleted that note.",
    "conversation": "Done: Orion has forgotten that conversation.",
}
ALREADY_GONE = "That was already gone: Orion doesn't keep it any more."
FORGET_FAILED = (
    "Orion couldn't forget that just now: its memory isn't answering. "
    "Please try again in a few minutes."
)

# Erasing is not on a conversation's path, and must finish: hundreds of deletions.
ERASE_BUDGET_S = 60.0
FORGOT_EVERYTHING = "Done: Orion has forgotten everything it knew about you."
FORGET_EVERYTHING_FAILED = (
    "Orion couldn't finish forgetting everything: its memory isn't answering. Some of it "
    "may still be there; please try again in a few minutes."
)

# An export reads every note and summary in full: more than the tab's budget.
EXPORT_BUDGET_S = 30.0
FILE_TITLE = "What Orion remembers about you"
COMMENT = "Here is everything Orion remembers about you, as of {when}."
SENT = "Sent: your memory is in your messages with Orion, as a Markdown file."
NO_DM = "Orion couldn't open your messages with it to send the file. Please try again."
EXPORT_FAILED = (
    "Orion couldn't gather your memory just now: its memory isn't answering. "
    "Please try again in a few minutes."
)

NOTES_SHOWN = "Done: answers that change what Orion remembers will say so, with an Undo."
NOTES_HIDDEN = "Done: answers won't show memory notes any more."
NOTES_FAILED = (
    "Orion couldn't change that just now: its memory isn't answering. "
    "Please try again in a few minutes."
)


async def _on_home_tab(event: dict[str, Any]) -> bool:
    return event.get("tab") == HOME_TAB


def register_home_opened(app: AsyncApp, home: HomeTab) -> None:
    """Published afresh on every opening (`views.publish`), so the tab is never older than
    the storage it reads."""

    @app.event("app_home_opened", matchers=[_on_home_tab])
    async def on_home_opened(
        body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient
    ) -> None:
        user, channel = event.get("user"), event.get("channel")
        async with handling("slack.home_opened", body, user=user, channel=channel):
            if not user:
                return
            await home.publish(client, user)


def register_controls(app: AsyncApp, home: HomeTab) -> None:
    @app.action(FORGET_ACTIONS)
    async def on_forget_item(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user = clicking_user(body)
        async with handling("slack.memory_forget", body, user=user):
            if not user:
                return
            kind = FORGET_KINDS[action["action_id"]]
            started = time.perf_counter()
            with tracing.observe("memory.forget", input={"kind": kind, "via": "home"}) as span:
                try:
                    async with home.store() as store:
                        deleted = await _forget(store, user, kind, str(action.get("value") or ""))
                except MemoryOff:
                    notice, deleted = MEMORY_OFF, 0
                except Exception as exc:
                    log.warning("memory.forget.failed", kind=kind, exc_info=exc)
                    notice, deleted = FORGET_FAILED, 0
                else:
                    notice = FORGOTTEN[kind] if deleted else ALREADY_GONE
                span.update(output={"objects": deleted})
            log.info("memory.forget", via="home", kind=kind, objects=deleted, **since(started))
            await home.publish(client, user, notice=notice)

    @app.action(ACTION_FORGET_EVERYTHING)
    async def on_forget_everything(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user = clicking_user(body)
        async with handling("slack.memory_forget_everything", body, user=user):
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
                    log.warning("memory.forget.failed", kind="everything", exc_info=exc)
                    notice = FORGET_EVERYTHING_FAILED
                else:
                    notice = FORGOT_EVERYTHING
                    # The report's own count of objects, when it has one, says more.
                    counts = {"objects": report.total, **report.deleted}
                    span.update(output=counts)
                    log.info(
                        "memory.forget", via="home", kind="everything", **counts, **since(started)
                    )
            await home.publish(client, user, notice=notice)
            await tracing.forget_person_traces(user)  # after the tab: it may take seconds

    @app.action(ACTION_DOWNLOAD)
    async def on_download(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        """One Markdown file with everything Orion keeps about the person, in full (the
        document the operator's export prints), sent only to their own DM."""
        await ack()
        user = clicking_user(body)
        async with handling("slack.memory_download", body, user=user):
            if not user:
                return
            dm = await dm_of(client, user)  # as Slack says (conversations.open)
            if dm is None:
                await home.publish(client, user, notice=NO_DM)
                return
            inventory: MemoryInventory | None = None
            with tracing.observe("memory.export", input={"via": "home"}) as span:
                try:
                    async with home.store(EXPORT_BUDGET_S) as store:
                        inventory = await take_inventory(store, user, full=True, conversations=None)
                except MemoryOff:
                    notice = MEMORY_OFF
                except Exception as exc:
                    log.warning("memory.export.failed", exc_info=exc)
                    notice = EXPORT_FAILED
                else:
                    notice = await _send(client, dm, inventory)
                    span.update(output=inventory.counts())
            await home.publish(client, user, notice=notice, inventory=inventory)

    @app.action(ACTION_MEMORY_NOTES)
    async def on_notes_switch(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """Whether answers that changed what Orion remembers carry a note saying what: the
        clicking person's own choice, kept where the memory tool cannot flip it (the
        button's value says only which way)."""
        await ack()
        user = clicking_user(body)
        async with handling("slack.memory_notes_switch", body, user=user):
            if not user:
                return
            shown = action.get("value") == NOTES_SHOW
            try:
                async with home.store() as store:
                    await choose_memory_notes(store, user, shown=shown)
            except MemoryOff:
                notice = MEMORY_OFF
            except Exception as exc:
                log.warning("memory.notes_switch.failed", exc_info=exc)
                notice = NOTES_FAILED
            else:
                log.info("memory.notes_switch", shown=shown)
                notice = NOTES_SHOWN if shown else NOTES_HIDDEN
            await home.publish(client, user, notice=notice)


async def _forget(store: ObjectStore, user: str, kind: str, value: str) -> int:
    """Forget the person's own item named `value` (a note: a file name under their own
    directory, checked as the memory tool checks paths); how many objects changed or went."""
    item = to_memory_path(f"users/{user}/{value}") if kind == "note" else value
    try:
        return await forget_item(store, user, kind, item)
    except ValueError:
        return 0  # not a note or a thread id of theirs


async def _send(client: AsyncWebClient, dm: str, inventory: MemoryInventory) -> str:
    started = time.perf_counter()
    document = render_memory(inventory, full=True)
    now = datetime.now(UTC)
    try:
        await client.files_upload_v2(
            channel=dm,
            content=document,
            filename=f"orion-memory-{now:%Y-%m-%d}.md",
            title=FILE_TITLE,
            initial_comment=COMMENT.format(when=f"{now:%Y-%m-%d %H:%M} UTC"),
        )
    except (SlackApiError, SlackRequestError) as exc:
        log.warning("memory.export.upload_failed", exc_info=exc)
        return "Orion couldn't send the file just now. Please try again in a few minutes."
    log.info(
        "memory.export",
        via="home",
        **inventory.counts(),
        bytes=len(document.encode()),
        **since(started),
    )
    return SENT
