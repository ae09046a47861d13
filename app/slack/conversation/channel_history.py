"""A channel turn's history: the thread as its members wrote it, each message with its
author, ending with the mention being answered.

Orion keeps its own transcript of a channel thread (app/learning/conversations.py), but
members write in the thread without mentioning Orion, and Slack sends Orion only its
mentions (no `message.channels` subscription: Orion does not read every message of every
channel it is in). So each mention reads what was said since the transcript's newest
message — `conversations.replies` from that ts, usually one page — and a thread Orion
has no transcript of is read whole, within Slack's limits (thread_history.py: a
commercially distributed app outside the Slack Marketplace gets the method once a
minute, 15 messages a call; a limited read goes on with what it has). A mention that
opens its thread needs no read at all.

A thread Orion first hears of deep into it is read whole (paged to its end, as for a DM
from before transcripts), and only its opening and its newest WINDOW_MESSAGES are used.

What was read goes into the transcript with the mention, each message with its author,
in the background — except what an author wrote before they last asked to be forgotten
(one tombstone read per author, `said_since_erasure`): what Slack still shows is answered
with, never kept again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import ThreadMessage
from app.learning.conversation_record import TranscriptMessage, moment_of, said
from app.learning.conversations import TurnTranscript
from app.learning.erasure import said_since_erasure
from app.memory.scopes import is_thread_ts, is_user_id
from app.slack.conversation.thread_history import (
    WINDOW_MESSAGES,
    SlackThread,
    read_slack_thread,
    seconds_of,
)
from app.slack.conversation.turn_opening import TurnHistory, TurnOpening
from app.slack.mrkdwn import text_of

if TYPE_CHECKING:
    from app.slack.conversation.answering import Incoming

# Message subtypes that are someone writing (a reply also sent to the channel included).
_WRITTEN = (None, "file_share", "thread_broadcast", "bot_message")


async def channel_turn_history(
    client: AsyncWebClient, opening: TurnOpening, message: Incoming
) -> TurnHistory:
    """The history the mention is answered with, and the turn's transcript, which already
    has what was read and the mention on their way."""
    conversation, store, owner = opening.conversation, opening.store, opening.owner
    known = conversation.transcript if conversation is not None else None
    newest = max((m.ts for m in known or () if m.ts is not None), key=float, default=None)
    thread = await _read(client, message, since=newest if known is not None else None)
    after = seconds_of(newest) if newest is not None else None
    slack = [
        m
        for m in thread.messages
        if m.get("ts") != message.ts
        and m.get("subtype") in _WRITTEN
        and (m.get("text") or "").strip()
        and (after is None or (seconds_of(m.get("ts")) or 0.0) > after)
        # With a transcript, Orion's own answers are in it already.
        and not (known is not None and _by_orion(m, message.bot_user_id))
    ]
    if len(slack) > WINDOW_MESSAGES:
        # A long thread Orion has no transcript of: its opening and its newest messages
        # (what the history can hold), whatever its length.
        slack = [slack[0], *slack[-(WINDOW_MESSAGES - 1) :]]
    history = [_from_transcript(m) for m in known or ()]
    history += [_from_slack(m, message.bot_user_id) for m in slack]
    history.append(
        ThreadMessage("user", _authored(message.user, message.text), sent_at=seconds_of(message.ts))
    )
    if not opening.remembers or store is None or owner is None or conversation is None:
        return TurnHistory(history, None)
    transcript = TurnTranscript(store, owner, message.thread_ts, conversation)
    # Redacting up to WINDOW_MESSAGES messages of any shape: off the event loop.
    read = await asyncio.to_thread(lambda: [_said(m, message.bot_user_id) for m in slack])
    mention = said("user", message.text, at=moment_of(message.ts), ts=message.ts, user=message.user)

    async def keepable(messages: Any) -> list[TranscriptMessage]:
        return await said_since_erasure(store, messages)

    transcript.add_checked([*read, mention], keepable)
    return TurnHistory(history, transcript)


async def _read(client: AsyncWebClient, message: Incoming, *, since: str | None) -> SlackThread:
    if message.thread_ts == message.ts:
        return SlackThread([], complete=True)  # the mention opens its thread
    return await read_slack_thread(
        client, channel=message.channel, thread_ts=message.thread_ts, oldest=since
    )


def _authored(user: object, text: str) -> str:
    """A member's message as Claude reads it in a channel: who wrote it, then what."""
    return f"<@{user}>: {text}" if is_user_id(user) else text


def _by_orion(message: dict[str, Any], bot_user_id: str | None) -> bool:
    return bot_user_id is not None and message.get("user") == bot_user_id


def _from_transcript(message: TranscriptMessage) -> ThreadMessage:
    text = _authored(message.user, message.text) if message.role == "user" else message.text
    return ThreadMessage(message.role, text, sent_at=message.sent_at)


def _from_slack(message: dict[str, Any], bot_user_id: str | None) -> ThreadMessage:
    text = text_of(message)
    if _by_orion(message, bot_user_id):
        return ThreadMessage("assistant", text, sent_at=seconds_of(message.get("ts")))
    return ThreadMessage(
        "user", _authored(message.get("user"), text), sent_at=seconds_of(message.get("ts"))
    )


def _said(message: dict[str, Any], bot_user_id: str | None) -> TranscriptMessage:
    ts = message.get("ts")
    orion = _by_orion(message, bot_user_id)
    return said(
        "assistant" if orion else "user",
        text_of(message),
        at=moment_of(ts if is_thread_ts(ts) else None),
        ts=ts if is_thread_ts(ts) else None,
        user=None if orion else message.get("user"),
    )
