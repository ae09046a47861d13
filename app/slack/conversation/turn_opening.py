"""What a turn starts from, read beside its retry-dedupe claim under one storage budget:
whose the conversation is (its record, with its transcript) and the person's memory.

Both reads go out at once, and nothing of the thread is used before the record has
answered (app/learning/conversations.py): a thread recorded for another person or
channel is refused, and one whose record storage could not give in time is answered
without any memory — nothing read is used, nothing is written — since nothing then says
whose its summary and notes are. Then the history: from the transcript when Orion keeps
one; from Slack otherwise (thread_history.py), once, for a conversation Orion has no
record of yet, whose record is then made from it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import ThreadMessage
from app.learning.conversation_record import (
    ConversationOwner,
    TranscriptMessage,
    moment_of,
    owner_of_event,
    said,
)
from app.learning.conversations import (
    OpenedConversation,
    TurnTranscript,
    open_conversation,
)
from app.learning.erasure import erasure_time
from app.memory.restore import RestoredMemory
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.thread_history import (
    SlackThread,
    history_from_slack,
    history_from_transcript,
    read_slack_thread,
    transcript_from_slack,
)
from app.slack.conversation.thread_memory import restore_for
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
    store: ObjectStore | None  # None: memory is off, or storage is not there yet
    # None when memory is off, or storage could not say whose the thread is in time.
    conversation: OpenedConversation | None = None
    memory: RestoredMemory | None = None  # what was restored (None: nothing could be)
    # A mention in a channel: what Slack and the admins say of the channel
    # (channel_turns.py); None in a DM.
    channel: ChannelGate | None = None

    @property
    def refused(self) -> bool:
        return self.conversation is not None and not self.conversation.allowed

    @property
    def remembers(self) -> bool:
        """Whether the turn may use and keep memory: its record says the conversation is
        the person's (with memory off, there is none to use either way)."""
        return self.conversation is not None and self.conversation.allowed


async def open_turn(
    provider: ServiceProvider,
    *,
    user: str | None,
    channel: str,
    thread_ts: str,
    team: str | None,
    enterprise: str | None,
    starts: bool,
) -> TurnOpening:
    """Read the conversation's record and restore the person's memory, both at once,
    within the current storage deadline; `starts`: the message opens the conversation.
    Never raises."""
    owner = owner_of_event(user, channel, team, enterprise)
    store = await _memory_store(provider)
    if store is None or owner is None:
        return TurnOpening(owner, store)
    memory = asyncio.ensure_future(restore_for(provider, user, thread_ts, new_thread=starts))
    try:
        conversation = await open_conversation(store, owner, thread_ts, starts=starts)
    except Exception as exc:
        memory.cancel()
        if not isinstance(exc, StoreOffline):
            log.warning("slack.conversation.unavailable", error=type(exc).__name__, exc_info=exc)
        return TurnOpening(owner, store)
    return TurnOpening(owner, store, conversation, await memory)


async def _memory_store(provider: ServiceProvider) -> ObjectStore | None:
    try:
        async with provider.storage_within() as storage:
            return storage.memory_store
    except Exception as exc:
        if not isinstance(exc, StoreOffline | TimeoutError):
            log.warning("slack.conversation.unavailable", error=type(exc).__name__, exc_info=exc)
        return None


@dataclass(frozen=True)
class TurnHistory:
    messages: list[ThreadMessage]
    # Where the turn writes what was said (None: Orion keeps no transcript of it).
    transcript: TurnTranscript | None


async def turn_history(
    client: AsyncWebClient,
    opening: TurnOpening,
    *,
    channel: str,
    thread_ts: str,
    ts: str,
    text: str,
) -> TurnHistory:
    """The history the message is answered with, and the turn's transcript, which already
    has the message on its way."""
    conversation, store, owner = opening.conversation, opening.store, opening.owner
    record = conversation.record if conversation is not None else None
    known = conversation.transcript if conversation is not None else None
    keep = opening.remembers and store is not None and owner is not None
    if known is not None:
        dropped = record.dropped if record is not None else 0
        history = history_from_transcript(known, dropped=dropped, current_ts=ts, current_text=text)
        earlier: list[TranscriptMessage] = []
    else:
        thread, keep = await _slack_thread(client, opening, channel=channel, thread_ts=thread_ts)
        history = history_from_slack(thread, thread_ts=thread_ts, current_ts=ts, current_text=text)
        earlier = transcript_from_slack(thread, current_ts=ts)
    if not keep or store is None or owner is None or conversation is None:
        return TurnHistory(history, None)
    transcript = TurnTranscript(store, owner, thread_ts, conversation, earlier=earlier)
    transcript.add(said("user", text, at=moment_of(ts), ts=ts))
    return TurnHistory(history, transcript)


async def _slack_thread(
    client: AsyncWebClient, opening: TurnOpening, *, channel: str, thread_ts: str
) -> tuple[SlackThread, bool]:
    """The thread as Slack shows it, and whether Orion may keep it as the conversation's
    transcript. What was said before the person last asked to be forgotten is left out,
    and if storage cannot say when that was, nothing is kept this turn."""
    reading = read_slack_thread(client, channel=channel, thread_ts=thread_ts)
    conversation, store, owner = opening.conversation, opening.store, opening.owner
    if conversation is None or store is None or owner is None or not opening.remembers:
        return await reading, False
    erasure = asyncio.ensure_future(erasure_time(store, owner.user))
    thread = await reading
    try:
        erased_at = await erasure
    except Exception as exc:
        if not isinstance(exc, StoreOffline):
            log.warning("slack.conversation.unavailable", error=type(exc).__name__, exc_info=exc)
        return thread, False
    return (thread.since(erased_at) if erased_at is not None else thread), True
