"""`/orion` in a channel and its Forget buttons (docs/channels.md): who clicked where from Slack's
signed ids, membership asked at each click, a button's file only inside that channel's memory."""

from __future__ import annotations

import asyncio
import re
from enum import StrEnum
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.channel_memory import (
    channel_file_key,
    choose_mode,
    forget_channel_file,
    forget_channel_memory,
    read_channel_memory,
    read_choices,
)
from app.learning.channel_mode import ChannelMode
from app.memory.scopes import is_shared_channel_id
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.channel_view.channel_memory_view import (
    ACTION_FORGET_ALL,
    ACTION_FORGET_FILE,
    MODES,
    memory_blocks,
)
from app.slack.conversation.channel_facts import channel_info, person_info
from app.slack.event_scope import handling
from app.slack.web_client import without_rate_limit_waits

log = get_logger(__name__)

COMMAND = "/orion"
MAX_TEXT_CHARS = 200
STORAGE_BUDGET_S = 10.0

USAGE = (
    "`/orion memory` shows what I remember for this channel. Admins: `/orion channel "
    "off|answers|memory` chooses what I do in this channel, `/orion workspace "
    "off|answers|memory` in every channel without a choice of its own."
)
IN_A_CHANNEL = "Use `/orion` in a channel: it shows and changes what I keep for that channel."
NOT_A_MEMBER = "Only members of this channel can see and forget what I remember for it."
NOT_THERE = "I'm not in this channel, so I keep nothing for it."
NOT_WITH_OTHER_ORGANISATIONS = (
    "This channel is shared with another organisation: I don't answer or keep anything "
    "here, so there is nothing to show or change."
)
CANNOT_CHECK = "I can't check that with Slack right now. Please try again in a minute."
UNAVAILABLE = "My memory isn't answering right now. Please try again in a few minutes."
ADMINS_ONLY = "Only workspace admins can choose what I do in channels."


# --- who may see, forget and choose: asked of Slack at every command and click. A member:
# `conversations.members` (at most MAX_MEMBER_PAGES pages of 1,000, else "can't check"), with
# `conversations.info` (Slack Connect: no controls); an admin: `users.info`. No answer is a no.

MEMBERS_PAGE = 1000
MAX_MEMBER_PAGES = 20
SLACK_BUDGET_S = 5.0


class Membership(StrEnum):
    MEMBER = "member"
    NOT_MEMBER = "not_member"
    ORION_ABSENT = "orion_absent"  # Orion is not in the channel: it keeps nothing there
    SHARED = "shared"  # shared with another organisation: no controls, as no answers
    UNKNOWN = "unknown"  # Slack did not say


async def membership(client: AsyncWebClient, channel: str, user: str) -> Membership:
    """Whether `user` is a member of `channel`, as Slack lists its members now, in a
    channel not shared with another organisation."""
    info, listed = await asyncio.gather(
        channel_info(client, channel), _listed(client, channel, user)
    )
    if info is None:
        return Membership.UNKNOWN
    if info.shared_externally:
        return Membership.SHARED
    return listed


async def _listed(client: AsyncWebClient, channel: str, user: str) -> Membership:
    patient_free = without_rate_limit_waits(client)
    cursor: str | None = None
    try:
        async with asyncio.timeout(SLACK_BUDGET_S):
            for _ in range(MAX_MEMBER_PAGES):
                page = await patient_free.conversations_members(
                    channel=channel, limit=MEMBERS_PAGE, cursor=cursor
                )
                if user in (page.get("members") or []):
                    return Membership.MEMBER
                cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
                if cursor is None:
                    return Membership.NOT_MEMBER
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else None
        if error in ("channel_not_found", "not_in_channel"):
            return Membership.ORION_ABSENT
        log.warning("slack.channel.members_failed", error=error or "unknown", exc_info=exc)
        return Membership.UNKNOWN
    except Exception as exc:
        log.warning("slack.channel.members_failed", exc_info=exc)
        return Membership.UNKNOWN
    log.warning("slack.channel.members_unchecked", pages=MAX_MEMBER_PAGES)
    return Membership.UNKNOWN


# Bolt searches the pattern in the action id: anchored, it names these two only.
_FORGET_ACTIONS = re.compile(
    f"^(?:{re.escape(ACTION_FORGET_FILE)}|{re.escape(ACTION_FORGET_ALL)})$"
)


def register(app: AsyncApp, provider: ServiceProvider) -> None:
    @app.command(COMMAND)
    async def on_orion(
        ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        await ack()
        user, channel = command.get("user_id"), command.get("channel_id")
        words = str(command.get("text") or "")[:MAX_TEXT_CHARS].lower().split()
        async with handling("slack.orion_command", command, user=user, channel=channel):
            if not isinstance(user, str) or not is_shared_channel_id(channel):
                await respond(IN_A_CHANNEL)
                return
            channel_id = str(channel)
            if words in ([], ["memory"]):
                await respond(**await memory_message(provider, client, channel_id, user))
            elif len(words) == 2 and words[0] in ("channel", "workspace"):
                await respond(await _choose(provider, client, channel_id, user, words))
            else:
                await respond(USAGE)

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
        async with handling("slack.channel_memory_forget", body, user=user, channel=channel):
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
                log.warning("slack.channel_memory_forget.failed", exc_info=exc)
                await respond(text=UNAVAILABLE, replace_original=False)
                return
            notice = "Forgotten: everything." if everything else "Forgotten."
            message = await memory_message(provider, client, channel_id, user, notice=notice)
            await respond(**message, replace_original=True)


async def memory_message(
    provider: ServiceProvider,
    client: AsyncWebClient,
    channel_id: str,
    user: str,
    *,
    notice: str | None = None,
) -> dict[str, Any]:
    """The channel's memory as `user` may see it (a member), else why not: the arguments
    of a `respond`."""
    allowed = await membership(client, channel_id, user)
    if allowed is not Membership.MEMBER:
        return {"text": REFUSALS[allowed]}
    try:
        async with provider.storage_within(STORAGE_BUDGET_S) as storage:
            memory = await read_channel_memory(storage.store, channel_id)
            choices = await read_choices(storage.store, channel_id)
    except Exception as exc:
        log.warning("slack.channel.memory_unavailable", exc_info=exc)
        return {"text": UNAVAILABLE}
    ceiling = provider.settings.slack_channels
    blocks = memory_blocks(channel_id, memory, choices, ceiling, notice=notice)
    return {"text": "What Orion remembers for this channel", "blocks": blocks}


REFUSALS = {
    Membership.NOT_MEMBER: NOT_A_MEMBER,
    Membership.ORION_ABSENT: NOT_THERE,
    Membership.SHARED: NOT_WITH_OTHER_ORGANISATIONS,
    Membership.UNKNOWN: CANNOT_CHECK,
}


async def _choose(
    provider: ServiceProvider, client: AsyncWebClient, channel_id: str, user: str, words: list[str]
) -> str:
    where, chosen = words
    try:
        mode = ChannelMode(chosen)
    except ValueError:
        return USAGE
    person, info = await asyncio.gather(
        person_info(client, user, budget_s=SLACK_BUDGET_S), channel_info(client, channel_id)
    )
    if info is None or info.shared_externally:
        # Slack Connect (or Slack did not say): no controls here, as no answers.
        shared = info is not None
        log.info("slack.channel.setting_refused", reason="shared" if shared else "unchecked")
        return NOT_WITH_OTHER_ORGANISATIONS if shared else CANNOT_CHECK
    if person is None or not person.admin:
        log.info("slack.channel.setting_refused", reason="not an admin")
        return ADMINS_ONLY
    try:
        async with provider.storage_within(STORAGE_BUDGET_S) as storage:
            await choose_mode(
                storage.store, mode, channel_id=channel_id if where == "channel" else None, by=user
            )
    except Exception as exc:
        log.warning("slack.channel.setting_failed", exc_info=exc)
        return UNAVAILABLE
    ceiling = provider.settings.slack_channels
    effective = mode.at_most(ceiling)
    scope = "this channel" if where == "channel" else "every channel without a choice of its own"
    line = f"Done: in {scope}, Orion now {MODES[effective].replace('this channel', 'the channel')}."
    if effective is not mode:
        line += f" (This deployment allows at most `{ceiling.value}`.)"
    return line
