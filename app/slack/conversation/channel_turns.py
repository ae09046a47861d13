"""A mention in a channel thread: whether Orion answers there, and with what memory.

Everything a channel turn starts from is asked at once, beside the retry-dedupe claim and
under the same storage budget — nothing sits in front of the memory reads:

- **Slack** (`conversations.info`, without waiting out a rate limit): is Orion still a
  member, is the channel private, archived, or shared with another organisation (Slack
  Connect). What the event says is not taken for it: a retried or forged mention of a
  channel Orion has left reaches nothing.
- **What admins chose** (app/learning/channel_memory.py), within `SLACK_CHANNELS`.
- **The conversation's record**, as the channel's (app/learning/conversations.py): a
  thread recorded for a person's DM, or for another channel, is refused.
- **The memory**: the organisation's context, the thread's summary, and of the person
  who mentioned Orion only how they like answers (their language, the shape of an
  answer) — nothing else of theirs.

Then one verdict (`Verdict`): answer and remember; answer and keep nothing; say in a line
only the person sees that Orion is off here (an admin's choice), or that it does not work
in channels shared with other organisations, or that it cannot check right now; or, in a
channel Orion is no longer in (or archived), nothing at all. When storage cannot say what
admins chose, Orion does not answer (their choice is never overridden by an outage).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.channel_memory import ChannelChoices, ModeChoice, channel_choice, workspace_choice
from app.learning.channel_mode import ChannelMode
from app.learning.channel_recall import ChannelRecallScope, StillPublic
from app.learning.conversation_record import owner_of_event
from app.learning.opening import Opening, open_event
from app.learning.profile import Profile
from app.memory.loader import Scope
from app.memory.scopes import is_shared_channel_id
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.turn_opening import TurnOpening
from app.slack.web_client import without_rate_limit_waits
from app.storage.breaker import StoreOffline
from app.storage.deadline import time_left
from app.storage.store import ObjectStore, StoredObject

if TYPE_CHECKING:
    from app.slack.conversation.answering import Incoming

log = get_logger(__name__)

# conversations.info is Tier 3; a mention waits for it at most this long.
INFO_BUDGET_S = 3.0
# Other channels one recall checks with Slack at most (its results come from few).
MAX_CHECKED_CHANNELS = 10
# What Slack answers for a channel the bot cannot see (never was in, or was removed from).
_NOT_THERE = ("channel_not_found", "not_in_channel", "method_not_supported_for_channel_type")

OFF_HERE = (
    "I'm not answering in this channel: a workspace admin turned me off here. You can "
    "still talk to me in a direct message."
)
NOT_WITH_OTHER_ORGANISATIONS = (
    "I don't answer in channels shared with other organisations, and I keep nothing from "
    "them. You can still talk to me in a direct message."
)
CANNOT_CHECK = (
    "I can't check whether I may answer in this channel right now. Please mention me "
    "again in a minute."
)


@dataclass(frozen=True)
class ChannelInfo:
    """What Slack says of the channel now."""

    channel: str
    member: bool  # Orion is in it
    private: bool
    archived: bool
    shared_externally: bool  # Slack Connect: members of another organisation


async def channel_info(client: AsyncWebClient, channel: str) -> ChannelInfo | None:
    """The channel as Slack describes it; None when Slack did not say in time (within the
    turn's storage deadline, when there is one: a slow Slack costs the turn its memory,
    not its answer). Never raises."""
    left = time_left()
    budget = INFO_BUDGET_S if left is None else max(0.0, min(INFO_BUDGET_S, left))
    try:
        async with asyncio.timeout(budget):
            response = await without_rate_limit_waits(client).conversations_info(channel=channel)
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else None
        if error in _NOT_THERE:
            return ChannelInfo(channel, False, True, False, False)
        log.warning("slack.channel.info_failed", error=error or "unknown", exc_info=exc)
        return None
    except Exception as exc:
        log.warning("slack.channel.info_failed", error=type(exc).__name__, exc_info=exc)
        return None
    data = response.get("channel") or {}
    return ChannelInfo(
        channel,
        member=data.get("is_member") is True,
        private=data.get("is_private") is not False or data.get("is_group") is True,
        archived=data.get("is_archived") is True,
        shared_externally=data.get("is_ext_shared") is True,
    )


def still_public(client: AsyncWebClient) -> StillPublic:
    """For recall across channels: which channels Slack says are public now, Orion is in,
    and neither archived nor shared with another organisation."""

    async def ask(channels: Sequence[str]) -> set[str]:
        checked = [c for c in channels if is_shared_channel_id(c)][:MAX_CHECKED_CHANNELS]
        infos = await asyncio.gather(*(channel_info(client, c) for c in checked))
        return {
            i.channel
            for i in infos
            if i is not None
            and i.member
            and not i.private
            and not i.archived
            and not i.shared_externally
        }

    return ask


class Verdict(StrEnum):
    REMEMBER = "remember"  # answer, with the channel's memory
    ANSWER = "answer"  # answer, keeping nothing
    OFF = "off"  # an admin turned Orion off here: a line to the person
    SHARED = "shared"  # Slack Connect: a line to the person
    UNCHECKED = "unchecked"  # what admins chose could not be read: a line to the person
    ABSENT = "absent"  # Orion is not in the channel (or it is archived): nothing at all


@dataclass(frozen=True)
class ChannelGate:
    info: ChannelInfo | None  # None: Slack did not say in time
    mode: ChannelMode | None  # None: storage could not say what admins chose
    shared_flag: bool = False  # the event itself says the channel is shared externally

    @property
    def verdict(self) -> Verdict:
        info = self.info
        if info is not None and (not info.member or info.archived):
            return Verdict.ABSENT
        if self.shared_flag or (info is not None and info.shared_externally):
            return Verdict.SHARED
        if self.mode is None:
            return Verdict.UNCHECKED
        if self.mode is ChannelMode.OFF:
            return Verdict.OFF
        if self.mode is ChannelMode.MEMORY and info is not None:
            return Verdict.REMEMBER
        # Slack did not say whether the channel is private: nothing is kept or recalled.
        return Verdict.ANSWER

    @property
    def public(self) -> bool:
        return self.info is not None and not self.info.private


async def open_channel_turn(
    provider: ServiceProvider, client: AsyncWebClient, message: Incoming
) -> TurnOpening:
    """Slack's word on the channel, what admins chose, and the channel's state (its
    profile, the conversation, the memory), all at once, within the current storage
    deadline. Never raises."""
    owner = owner_of_event(
        message.user, message.channel, message.team_id, message.enterprise_id, kind="channel"
    )
    info = asyncio.ensure_future(channel_info(client, message.channel))
    records, memory = await _stores(provider)
    ceiling = provider.settings.slack_channels
    if records is None or owner is None:
        return TurnOpening(
            owner, None, channel=ChannelGate(await info, None, message.shared_externally)
        )
    workspace = asyncio.ensure_future(workspace_choice(records))
    opening: asyncio.Future[Opening] | asyncio.Future[StoredObject | None]
    if memory is not None and ceiling is ChannelMode.MEMORY:
        left = time_left()
        opening = asyncio.ensure_future(
            open_event(
                memory,
                owner,
                message.thread_ts,
                budget_s=provider.settings.memory_load_timeout_s if left is None else left,
                token_budget=provider.settings.memory_context_token_budget,
            )
        )
    else:  # nothing of the channel is remembered here: only what its admins chose is read
        opening = asyncio.ensure_future(records.read(owner.home.profile_key))
    mode = await _mode(workspace, opening, ceiling)
    gate = ChannelGate(await info, mode, message.shared_externally)
    state = _result(opening)
    if gate.verdict is not Verdict.REMEMBER or not isinstance(state, Opening):
        opening.cancel()
        return TurnOpening(owner, None, channel=gate)
    return TurnOpening(owner, state, channel=gate)


def recall_scope(
    client: AsyncWebClient, message: Incoming, gate: ChannelGate
) -> ChannelRecallScope:
    """Where the turn's searches look: the channel, and — public — the public channels
    Slack says are still public when a search would return theirs."""
    return ChannelRecallScope(
        message.channel,
        message.thread_ts,
        public=gate.public,
        still_public=still_public(client) if gate.public else None,
    )


async def _stores(provider: ServiceProvider) -> tuple[ObjectStore | None, ObjectStore | None]:
    try:
        async with provider.storage_within() as storage:
            return storage.store, storage.memory_store
    except Exception as exc:
        if not isinstance(exc, StoreOffline | TimeoutError):
            log.warning("slack.conversation.unavailable", error=type(exc).__name__, exc_info=exc)
        return None, None


async def _mode(
    workspace: asyncio.Future[ModeChoice | None],
    opening: asyncio.Future[Opening] | asyncio.Future[StoredObject | None],
    ceiling: ChannelMode,
) -> ChannelMode | None:
    """What Orion does here: the channel's choice (in its profile), else the workspace's,
    within the deployment's `ceiling`; None when storage could not say."""
    if ceiling is ChannelMode.OFF:
        workspace.cancel()
        return ChannelMode.OFF  # the deployment allows nothing here, whatever was chosen
    try:
        chosen, state = await asyncio.gather(workspace, opening)
    except Exception as exc:
        if not isinstance(exc, StoreOffline):
            log.warning(
                "slack.channel.settings_unavailable", error=type(exc).__name__, exc_info=exc
            )
        return None
    if isinstance(state, Opening):
        if not state.loaded.answered(Scope.PROFILE):
            return None
        profile = state.profile
    else:
        profile = Profile.parse(state.content if state is not None else None)
    return ChannelChoices(chosen, channel_choice(profile)).mode(ceiling)


def _result(task: asyncio.Future[Opening] | asyncio.Future[StoredObject | None]) -> object:
    if not task.done() or task.cancelled() or task.exception() is not None:
        return None
    return task.result()
