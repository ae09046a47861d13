"""What a turn starts from, read beside its retry-dedupe claim under one storage budget: its
owner's state (app/learning/opening.py), all at once. A thread recorded for another DM is
refused; one whose state storage could not give in time is answered and keeps nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from app.agent.history import ThreadMessage
from app.learning.conversation_record import ConversationOwner, moment_of, owner_of_event, said
from app.learning.conversations import TurnTranscript
from app.learning.opening import Opening, open_event
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.thread_history import history_from_transcript
from app.storage.breaker import StoreOffline
from app.storage.store import ObjectStore

if TYPE_CHECKING:
    from app.slack.conversation.channel_turns import ChannelGate

log = get_logger(__name__)

# What the person is told when the thread their message names is someone else's.
NOT_YOURS = (
    "I can't continue that conversation here. Start a new conversation with me and I'll "
    "pick up from what I remember about you."
)


@dataclass(frozen=True)
class TurnOpening:
    """The conversation and the memory one message is answered with."""

    owner: ConversationOwner | None
    # None: memory is off, or storage is not there yet.
    opening: Opening | None = None
    # A mention in a channel: what Slack and the admins say of the channel
    # (channel_turns.py); None in a DM.
    channel: ChannelGate | None = None
    # A DM Slack says is not the event's person's: nothing of theirs is used there.
    not_theirs: bool = False

    @property
    def refused(self) -> bool:
        return self.not_theirs or (self.opening is not None and self.opening.refused)

    def vouched_in(self, channel: str) -> bool:
        """A conversation of theirs Orion keeps in `channel` says it is their DM, so Slack
        need not be asked (a returning person's burst asks it nothing)."""
        kept = self.opening.profile.conversations if self.opening is not None else ()
        return any(entry.channel == channel for entry in kept)

    def in_dm(self, theirs: bool | None) -> TurnOpening:
        """The opening once Slack said whether the DM is the person's (`theirs`; None: Slack
        did not say): nothing of theirs is used unless it is."""
        if theirs:
            return self
        return TurnOpening(self.owner, not_theirs=theirs is False)

    @property
    def remembers(self) -> bool:
        """Whether the turn may use and keep memory: its state answered, and the
        conversation is the owner's."""
        return self.opening is not None and self.opening.remembers


async def open_turn(
    provider: ServiceProvider,
    *,
    user: str | None,
    channel: str,
    thread_ts: str,
    team: str | None,
    enterprise: str | None,
    since: datetime | None = None,
) -> TurnOpening:
    """Read the turn's owner state at once, within the current storage deadline (`since`:
    when the message was sent; an erasure after it takes the turn's writes back, also
    when the profile was read after that erasure). Never raises."""
    owner = owner_of_event(user, channel, team, enterprise, kind="person")
    store = await memory_store(provider)
    if store is None or owner is None:
        return TurnOpening(owner)
    try:
        opening = await open_event(
            store,
            owner,
            thread_ts,
            budget_s=provider.settings.memory_load_timeout_s,
            token_budget=provider.settings.memory_context_token_budget,
            since=since,
        )
    except Exception as exc:
        log.warning("slack.conversation.unavailable", exc_info=exc)
        return TurnOpening(owner)
    return TurnOpening(owner, opening)


async def stores(provider: ServiceProvider) -> tuple[ObjectStore | None, ObjectStore | None]:
    """Orion's records and the memory store, once connected within the current deadline;
    None for each that is not there (memory off, or the store not answering)."""
    try:
        async with provider.storage_within() as storage:
            return storage.store, storage.memory_store
    except Exception as exc:
        if not isinstance(exc, StoreOffline | TimeoutError):
            log.warning("slack.conversation.unavailable", exc_info=exc)
        return None, None


async def memory_store(provider: ServiceProvider) -> ObjectStore | None:
    return (await stores(provider))[1]


@dataclass(frozen=True)
class TurnHistory:
    messages: list[ThreadMessage]
    # Where the turn writes what was said (None: Orion keeps no transcript of it).
    transcript: TurnTranscript | None


def turn_history(opening: TurnOpening, *, thread_ts: str, ts: str, text: str) -> TurnHistory:
    """The history the message is answered with, and the turn's transcript, which holds
    the message, to be written as the answer ends."""
    state = opening.opening
    conversation = state.conversation if state is not None else None
    record = conversation.record if conversation is not None else None
    history = history_from_transcript(
        conversation.transcript if conversation is not None else (),
        dropped=record.dropped if record is not None else 0,
        current_ts=ts,
        current_text=text,
    )
    transcript = state.transcript() if state is not None else None
    if transcript is not None:
        transcript.add(said("user", text, at=moment_of(ts), ts=ts))
    return TurnHistory(history, transcript)
