""" "Download my memory" on the Home tab: post the clicking person one Markdown file, in
their DM with Orion, with everything Orion keeps about them in full (`files_upload_v2`).

The document is the one the operator's export prints (app/learning/memory_document.py),
read for the person who clicked and sent only to their own DM. The log says how many
items and bytes it held, never what they said.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.memory_document import render_memory
from app.learning.memory_inventory import MemoryInventory, take_inventory
from app.observability import tracing
from app.observability.logging import get_logger
from app.slack.event_scope import handling
from app.slack.home.home_tab import HomeTab, MemoryOff, clicking_user
from app.slack.home.memory_view import ACTION_DOWNLOAD, MEMORY_OFF, HomeOwner

log = get_logger(__name__)

# An export reads every note and summary in full: more than the tab's budget.
EXPORT_BUDGET_S = 30.0

FILE_TITLE = "What Orion remembers about you"
COMMENT = "Here is everything Orion remembers about you, as of {when}."
SENT = "Sent: your memory is in your messages with Orion, as a Markdown file."
NO_DM = "Orion couldn't open your messages with it to send the file. Please try again."
FAILED = (
    "Orion couldn't gather your memory just now: its memory isn't answering. "
    "Please try again in a few minutes."
)


def register(app: AsyncApp, home: HomeTab) -> None:
    @app.action(ACTION_DOWNLOAD)
    async def on_download(ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        user = clicking_user(body)
        async with handling("slack.memory_download", body, user=user, channel=None, thread_ts=None):
            if not user:
                return
            dm = await home.dm_of(body, client)
            owner = HomeOwner(user, dm)
            if dm is None:
                await home.publish(client, owner, notice=NO_DM)
                return
            inventory: MemoryInventory | None = None
            with tracing.observe("memory.export", input={"via": "home"}) as span:
                try:
                    async with home.store(EXPORT_BUDGET_S) as store:
                        inventory = await take_inventory(store, user, full=True, conversations=None)
                except MemoryOff:
                    notice = MEMORY_OFF
                except Exception as exc:
                    log.warning("memory.export.failed", error=type(exc).__name__, exc_info=exc)
                    notice = FAILED
                else:
                    notice = await _send(client, dm, inventory)
                    span.update(output=inventory.counts())
            await home.publish(client, owner, notice=notice, inventory=inventory)


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
        log.warning("memory.export.upload_failed", error=type(exc).__name__, exc_info=exc)
        return "Orion couldn't send the file just now. Please try again in a few minutes."
    log.info(
        "memory.export",
        via="home",
        **inventory.counts(),
        bytes=len(document.encode()),
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return SENT
