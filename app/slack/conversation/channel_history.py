"""A channel turn's history: the thread as its members wrote it, each author from Slack's fields,
never text, and nobody's words from before they asked to be forgotten (docs/channels.md)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import ThreadMessage
from app.learning.conversation_record import MAX_MESSAGE_CHARS, TranscriptMessage, moment_of, said
from app.learning.erasure import said_since_erasure
from app.learning.quoting import attributed, author_label, is_bot_id
from app.memory.scopes import is_thread_ts, is_user_id
from app.slack.conversation.thread_history import (
    WINDOW_MESSAGES,
    SlackThread,
    read_thread_ends,
    seconds_of,
)
from app.slack.conversation.turn_opening import TurnHistory, TurnOpening
from app.slack.mrkdwn import text_of

if TYPE_CHECKING:
    from app.slack.conversation.answering import Incoming

# Message subtypes that are someone writing (a reply also sent to the channel, and an
# integration's message, included).
_WRITTEN = (None, "file_share", "thread_broadcast", "bot_message")
# What one mention keeps of what it read, at most (the transcript's own bound).
MAX_READ_CHARS = 120_000


@dataclass(frozen=True)
class Author:
    """Who wrote a message of the thread, from Slack's fields."""

    user: str | None = None  # a member
    bot: str | None = None  # an app's bot, or an integration
    integration: bool = False  # Slack's `bot_message`: a webhook, a workflow
    claimed_name: str | None = None  # the name an integration posts under (its claim)
    orion: bool = False

    @property
    def label(self) -> str:
        return author_label(
            self.user, bot=self.bot, integration=self.integration, claimed_name=self.claimed_name
        )


def author_of(message: dict[str, Any], bot_user_id: str | None) -> Author:
    """The message's author as Slack records it; its text is never consulted."""
    user, bot = message.get("user"), message.get("bot_id")
    if bot_user_id is not None and user == bot_user_id:
        return Author(orion=True)
    if is_bot_id(bot):
        name = message.get("username")
        return Author(
            bot=str(bot),
            integration=message.get("subtype") == "bot_message",
            claimed_name=name if isinstance(name, str) else None,
        )
    return Author(user=str(user)) if is_user_id(user) else Author()


async def channel_turn_history(
    client: AsyncWebClient, opening: TurnOpening, message: Incoming
) -> TurnHistory:
    """The history the mention is answered with, and the turn's transcript, which already
    has what was read and the mention on their way."""
    state = opening.opening
    conversation = state.conversation if state is not None else None
    known = conversation.transcript if conversation is not None and conversation.stored else None
    newest = max((m.ts for m in known or () if m.ts is not None), key=float, default=None)
    thread = await _read(client, message, since=newest if known is not None else None)
    after = seconds_of(newest) if newest is not None else None
    read = [
        (m, author_of(m, message.context.bot_user_id))
        for m in thread.messages
        if m.get("ts") != message.ts
        and m.get("subtype") in _WRITTEN
        and (m.get("text") or "").strip()
        and (after is None or (seconds_of(m.get("ts")) or 0.0) > after)
    ]
    # With a transcript, Orion's own answers are in it already.
    new = [(m, a) for m, a in read if not (known is not None and a.orion)]
    slack = _bounded(new)
    history = [_from_transcript(m) for m in known or ()]
    history += [_from_slack(m, author) for m, author in slack]
    if known is None and history and (not thread.complete or len(slack) < len(new)):
        # Messages after the thread's opening were not read (or not kept): Claude is told.
        history[0] = replace(history[0], opens_cut=True)
    history.append(
        ThreadMessage(
            "user",
            attributed(author_label(message.user), message.text),
            sent_at=seconds_of(message.ts),
        )
    )
    transcript = state.transcript() if state is not None else None
    if state is None or transcript is None:
        return TurnHistory(history, None)
    store = state.store
    # Redacting up to WINDOW_MESSAGES messages of any shape: off the event loop.
    kept = await asyncio.to_thread(lambda: [_said(m, author) for m, author in slack])
    mention = said("user", message.text, at=moment_of(message.ts), ts=message.ts, user=message.user)
    transcript.add_checked([*kept, mention], lambda messages: said_since_erasure(store, messages))
    return TurnHistory(history, transcript)


async def _read(client: AsyncWebClient, message: Incoming, *, since: str | None) -> SlackThread:
    if message.thread_ts == message.ts:
        return SlackThread([], complete=True)  # the mention opens its thread
    return await read_thread_ends(
        client,
        channel=message.channel,
        thread_ts=message.thread_ts,
        newest=message.ts,
        oldest=since,
    )


def _bounded(read: list[tuple[dict[str, Any], Author]]) -> list[tuple[dict[str, Any], Author]]:
    """The opening and the newest messages, at most WINDOW_MESSAGES of them and
    MAX_READ_CHARS of text (each message counted to MAX_MESSAGE_CHARS, where the history
    and the transcript cut it)."""
    if not read:
        return []
    opening, rest = read[0], read[1:]
    room = MAX_READ_CHARS - _chars(opening[0])
    kept: list[tuple[dict[str, Any], Author]] = []
    for item in reversed(rest):
        if len(kept) >= WINDOW_MESSAGES - 1 or _chars(item[0]) > room:
            break
        kept.append(item)
        room -= _chars(item[0])
    return [opening, *reversed(kept)]


def _chars(message: dict[str, Any]) -> int:
    return min(len(str(message.get("text") or "")), MAX_MESSAGE_CHARS)


def _from_transcript(message: TranscriptMessage) -> ThreadMessage:
    if message.role == "assistant":
        return ThreadMessage("assistant", message.text, sent_at=message.sent_at)
    who = author_label(message.user, bot=message.bot, integration=message.integration)
    return ThreadMessage("user", attributed(who, message.text), sent_at=message.sent_at)


def _from_slack(message: dict[str, Any], author: Author) -> ThreadMessage:
    text = text_of(message)[:MAX_MESSAGE_CHARS]
    sent_at = seconds_of(message.get("ts"))
    if author.orion:
        return ThreadMessage("assistant", text, sent_at=sent_at)
    return ThreadMessage("user", attributed(author.label, text), sent_at=sent_at)


def _said(message: dict[str, Any], author: Author) -> TranscriptMessage:
    ts = message.get("ts")
    return said(
        "assistant" if author.orion else "user",
        text_of(message),
        at=moment_of(ts if is_thread_ts(ts) else None),
        ts=ts if is_thread_ts(ts) else None,
        user=author.user,
        bot=author.bot,
        integration=author.integration,
    )
