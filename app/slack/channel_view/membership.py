"""Who may see and forget a channel's memory, and who may choose for channels — asked of
Slack at every command and click, never taken from what the request says beyond the
signed ids of who clicked where.

- **A member** of the channel: `conversations.members` lists them (paged, at most
  MAX_MEMBER_PAGES pages of 1,000: a channel larger than that is answered "can't check").
  Beside it, `conversations.info`: in a channel shared with another organisation (Slack
  Connect) there are no memory controls, as there are no answers (channel_turns.py).
- **An admin**: `users.info` says the person is a workspace admin or owner.

Either question Slack cannot answer is a no: nothing is shown or changed.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.slack.conversation.channel_facts import channel_info, person_info
from app.slack.web_client import without_rate_limit_waits

log = get_logger(__name__)

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
        log.warning("slack.channel.members_failed", error=type(exc).__name__, exc_info=exc)
        return Membership.UNKNOWN
    log.warning("slack.channel.members_unchecked", pages=MAX_MEMBER_PAGES)
    return Membership.UNKNOWN


async def is_admin(client: AsyncWebClient, user: str) -> bool:
    """Whether Slack says `user` is an admin or owner of the workspace."""
    person = await person_info(client, user, budget_s=SLACK_BUDGET_S)
    return person is not None and person.admin


async def is_shared(client: AsyncWebClient, channel: str) -> bool | None:
    """Whether Slack says `channel` is shared with another organisation (None: it did
    not say)."""
    info = await channel_info(client, channel)
    return None if info is None else info.shared_externally
