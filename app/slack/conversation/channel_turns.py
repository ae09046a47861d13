"""A mention in a channel thread: whether Orion answers there, and with what memory
(docs/channels.md), asked all at once under one storage budget, then one `Verdict`. When storage
cannot say what admins chose, Orion does not answer: an outage never overrides their choice."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

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
from app.slack.conversation.channel_facts import (
    INFO_BUDGET_S,
    ChannelInfo,
    PersonInfo,
    channel_info,
    person_info,
)
from app.slack.conversation.turn_opening import TurnOpening, stores
from app.storage.breaker import StoreOffline
from app.storage.store import StoredObject

if TYPE_CHECKING:
    from app.slack.conversation.answering import Incoming

log = get_logger(__name__)

# Other channels one recall checks with Slack at most (its results come from few).
MAX_CHECKED_CHANNELS = 10

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


def still_public(client: AsyncWebClient, here: ChannelInfo) -> StillPublic:
    """For recall across channels: which channels everyone who can see `here` can see,
    as Slack says now (ChannelInfo.seen_wherever)."""

    async def ask(channels: Sequence[str]) -> set[str]:
        checked = [c for c in channels if is_shared_channel_id(c)][:MAX_CHECKED_CHANNELS]
        infos = await asyncio.gather(*(channel_info(client, c) for c in checked))
        return {i.channel for i in infos if i is not None and i.seen_wherever(here)}

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
    # What Slack says of who mentioned Orion, still on its way: only recall needs it, and
    # only recall's scope waits for it, after the memory reads and the history.
    person: asyncio.Future[PersonInfo | None] | None = None

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

    def reaches_others(self, person: PersonInfo | None) -> bool:
        """Whether the turn's recall may look in other channels: the channel is public,
        Slack says in which workspaces, and `person` is not a guest (Slack shows a guest
        only the channels they are in; a person Slack did not describe counts as one)."""
        return (
            self.public
            and self.info is not None
            and bool(self.info.workspaces)
            and person is not None
            and not person.guest
        )


async def open_channel_turn(
    provider: ServiceProvider, client: AsyncWebClient, message: Incoming
) -> TurnOpening:
    """Slack's word on the channel, what admins chose, and the channel's state (its profile, the
    conversation, the memory), all at once, within the current storage deadline. Never raises."""
    team, enterprise = message.context.team_id, message.context.enterprise_id
    owner = owner_of_event(message.user, message.channel, team, enterprise, kind="channel")
    info = asyncio.ensure_future(channel_info(client, message.channel))
    person = asyncio.ensure_future(person_info(client, message.user))
    records, memory = await stores(provider)
    ceiling = provider.settings.slack_channels
    if records is None or owner is None:
        return TurnOpening(
            owner, None, channel=ChannelGate(await info, None, message.shared_externally, person)
        )
    workspace = asyncio.ensure_future(workspace_choice(records))
    opening: asyncio.Future[Opening] | asyncio.Future[StoredObject | None]
    if memory is not None and ceiling is ChannelMode.MEMORY:
        opening = asyncio.ensure_future(
            open_event(
                memory,
                owner,
                message.thread_ts,
                budget_s=provider.settings.memory_load_timeout_s,
                token_budget=provider.settings.memory_context_token_budget,
            )
        )
    else:  # nothing of the channel is remembered here: only what its admins chose is read
        opening = asyncio.ensure_future(records.read(owner.home.profile_key))
    mode = await _mode(workspace, opening, ceiling)
    gate = ChannelGate(await info, mode, message.shared_externally, person)
    state = _result(opening)
    if gate.verdict is not Verdict.REMEMBER or not isinstance(state, Opening):
        opening.cancel()
        person.cancel()
        return TurnOpening(owner, None, channel=gate)
    return TurnOpening(owner, state, channel=gate)


async def recall_scope(
    client: AsyncWebClient, message: Incoming, gate: ChannelGate
) -> ChannelRecallScope:
    """Where the turn's searches look: the channel, and (public, asked by a non-guest) the public
    channels everyone here can see; waits for what Slack says of the person."""
    person = await _person(gate.person)
    here = gate.info if gate.reaches_others(person) else None
    if gate.public and here is None:
        log.info("slack.channel.recall_here_only", guest=person is None or person.guest)
    return ChannelRecallScope(
        message.channel,
        message.thread_ts,
        public=gate.public,
        still_public=still_public(client, here) if here is not None else None,
    )


async def _person(asked: asyncio.Future[PersonInfo | None] | None) -> PersonInfo | None:
    if asked is None or asked.cancelled():
        return None
    try:  # person_info has its own bound; this one only guards against a stuck task
        return await asyncio.wait_for(asyncio.shield(asked), INFO_BUDGET_S)
    except TimeoutError:
        return None


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
            log.warning("slack.channel.settings_unavailable", exc_info=exc)
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
