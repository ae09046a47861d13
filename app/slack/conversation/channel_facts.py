"""What Slack says now of a channel and of a person, asked beside a turn's other reads, never kept
(docs/channels.md). None means Slack did not say: every caller takes the narrower reading."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncSlackResponse, AsyncWebClient

from app.observability.logging import get_logger
from app.slack.web_client import without_rate_limit_waits
from app.storage.deadline import time_left

log = get_logger(__name__)

# conversations.info is Tier 3, users.info Tier 4; a turn waits for either at most this.
INFO_BUDGET_S = 3.0
# What Slack answers for a channel the bot cannot see (never was in, or was removed from).
_NOT_THERE = ("channel_not_found", "not_in_channel", "method_not_supported_for_channel_type")


@dataclass(frozen=True)
class ChannelInfo:
    """What Slack says of the channel now."""

    channel: str
    member: bool  # Orion is in it
    private: bool
    archived: bool
    shared_externally: bool  # Slack Connect: members of another organisation
    # The workspaces whose members can see it (`shared_team_ids`, else `context_team_id`):
    # one for a workspace's channel, several for an Enterprise Grid channel shared across
    # its organisation's workspaces; empty when Slack did not say.
    workspaces: frozenset[str] = frozenset()

    def seen_wherever(self, here: ChannelInfo) -> bool:
        """Whether everyone who can see `here` can see this channel: public, Orion in it, not
        archived or shared with another organisation, and in every workspace `here` is in."""
        return (
            self.member
            and not self.private
            and not self.archived
            and not self.shared_externally
            and bool(here.workspaces)
            and here.workspaces <= self.workspaces
        )


@dataclass(frozen=True)
class PersonInfo:
    """What Slack says of a person now."""

    # A multi-channel (`is_restricted`) or single-channel (`is_ultra_restricted`) guest:
    # Slack shows them only the channels they are invited to.
    guest: bool
    admin: bool  # an admin or owner of the workspace


async def channel_info(client: AsyncWebClient, channel: str) -> ChannelInfo | None:
    """The channel as Slack describes it; None when Slack did not say in time. Never raises."""
    try:
        response = await _ask(
            lambda: without_rate_limit_waits(client).conversations_info(channel=channel),
            INFO_BUDGET_S,
        )
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else None
        if error in _NOT_THERE:
            return ChannelInfo(channel, False, True, False, False)
        log.warning("slack.channel.info_failed", error=error or "unknown", exc_info=exc)
        return None
    except Exception as exc:
        log.warning("slack.channel.info_failed", exc_info=exc)
        return None
    data = response.get("channel") or {}
    return ChannelInfo(
        channel,
        member=data.get("is_member") is True,
        private=data.get("is_private") is not False or data.get("is_group") is True,
        archived=data.get("is_archived") is True,
        shared_externally=data.get("is_ext_shared") is True,
        workspaces=_workspaces(data),
    )


async def person_info(
    client: AsyncWebClient, user: str | None, *, budget_s: float = INFO_BUDGET_S
) -> PersonInfo | None:
    """The person as Slack describes them; None when Slack did not say in time (or there
    is no one to ask about). Never raises."""
    if not user:
        return None
    try:
        response = await _ask(
            lambda: without_rate_limit_waits(client).users_info(user=user), budget_s
        )
    except Exception as exc:
        log.warning("slack.user.info_failed", exc_info=exc)
        return None
    person = response.get("user") or {}
    return PersonInfo(
        guest=person.get("is_restricted") is not False or person.get("is_ultra_restricted") is True,
        admin=any(
            person.get(flag) is True for flag in ("is_admin", "is_owner", "is_primary_owner")
        ),
    )


async def _ask(
    call: Callable[[], Awaitable[AsyncSlackResponse]], budget_s: float
) -> AsyncSlackResponse:
    left = time_left()
    budget = budget_s if left is None else max(0.0, min(budget_s, left))
    async with asyncio.timeout(budget):
        return await call()


def _workspaces(data: dict[str, Any]) -> frozenset[str]:
    shared = data.get("shared_team_ids")
    if isinstance(shared, list) and shared:
        return frozenset(t for t in shared if isinstance(t, str) and t)
    context = data.get("context_team_id")
    return frozenset([context]) if isinstance(context, str) and context else frozenset()
