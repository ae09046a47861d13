"""The Forget and Forget-everything buttons of `/orion memory`: any member of the channel
forgets one file of its memory, or all of it, and the message shows what is left.

Who clicked, and in which channel, are Slack's signed ids in the click; whether they are
a member is asked of Slack again at the click (they may have left since the message was
shown, or the channel been shared with another organisation). The file a button names
is checked to be inside that channel's memory (app/learning/channel_memory.py): a forged
value reaches nothing else.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.channel_memory import (
    channel_file_key,
    forget_channel_file,
    forget_channel_memory,
)
from app.memory.scopes import is_shared_channel_id
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.channel_view.channel_memory_view import ACTION_FORGET_ALL, ACTION_FORGET_FILE
from app.slack.channel_view.membership import Membership, membership
from app.slack.channel_view.orion_command import (
    REFUSALS,
    STORAGE_BUDGET_S,
    UNAVAILABLE,
    memory_message,
)
from app.slack.event_scope import handling

log = get_logger(__name__)

# Bolt searches the pattern in the action id: anchored, it names these two only.
_FORGET_ACTIONS = re.compile(
    f"^(?:{re.escape(ACTION_FORGET_FILE)}|{re.escape(ACTION_FORGET_ALL)})$"
)


def register(app: AsyncApp, provider: ServiceProvider) -> None:
    @app.action(_FORGET_ACTIONS)
    async def on_forget(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        respond: AsyncRespond,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        everything = action.get("action_id") == ACTION_FORGET_ALL
        user = (body.get("user") or {}).get("id")
        channel = (body.get("channel") or {}).get("id")
        name = action.get("value")
        async with handling(
            "slack.channel_memory_forget", body, user=user, channel=channel, thread_ts=None
        ):
            if not isinstance(user, str) or not is_shared_channel_id(channel):
                log.info("slack.channel_memory_forget.malformed")
                return
            channel_id = str(channel)
            if not everything and channel_file_key(channel_id, name) is None:
                log.warning("slack.channel_memory_forget.refused", reason="not a file of it")
                return
            allowed = await membership(client, channel_id, user)
            if allowed is not Membership.MEMBER:
                await respond(text=REFUSALS[allowed], replace_original=False)
                return
            try:
                async with provider.storage_within(STORAGE_BUDGET_S) as storage:
                    if everything:
                        await forget_channel_memory(storage.store, channel_id, by=user)
                    else:
                        await forget_channel_file(storage.store, channel_id, str(name), by=user)
            except Exception as exc:
                log.warning(
                    "slack.channel_memory_forget.failed", error=type(exc).__name__, exc_info=exc
                )
                await respond(text=UNAVAILABLE, replace_original=False)
                return
            notice = "Forgotten: everything." if everything else "Forgotten."
            message = await memory_message(provider, client, channel_id, user, notice=notice)
            await respond(**message, replace_original=True)
