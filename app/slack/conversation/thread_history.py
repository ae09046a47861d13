"""A turn's history: what was said in the conversation before the message being answered.

It comes from Orion's own transcript of the conversation (app/learning/conversations.py),
read beside the memory, with no Slack call at all. Slack's `conversations.replies` is read
only where Orion has no transcript — a conversation started before transcripts were kept,
or one whose record storage could not give — and then once: what it shows becomes the
transcript.

`conversations.replies` returns a thread oldest first, a page at a time, with no
newest-first order, so a long thread is read to its end to reach its newest messages.
Commercially distributed apps outside the Slack Marketplace get it at 1 request a minute
and 15 messages a call: there the read stops at Slack's `ratelimited` (at once: this
client does not wait out `Retry-After`), and the turn goes on with what it has, logged.
A read Slack refuses for any other reason costs the turn its history, never its answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import MAX_HISTORY_MESSAGES, Role, ThreadMessage
from app.learning.conversation_record import TranscriptMessage, moment_of, said
from app.observability.logging import get_logger
from app.slack.conversation.memory_note_blocks import NOTE_BLOCK_ID
from app.slack.mrkdwn import text_of
from app.slack.web_client import without_rate_limit_waits

log = get_logger(__name__)

# Slack recommends pages of 200 (at most 1,000) for this Tier 3 method; without the
# Marketplace, Slack answers 15 whatever is asked.
REPLIES_PAGE_SIZE = 200
# How many of the newest messages a history keeps beside the opening: the history sent to
# Claude keeps at most MAX_HISTORY_MESSAGES, so twice that leaves room to spare.
WINDOW_MESSAGES = 2 * MAX_HISTORY_MESSAGES
# Slack's own root message of an assistant thread ("New Assistant Thread"): not something
# the person wrote, so not part of the conversation.
ASSISTANT_THREAD_ROOT = "assistant_app_thread"


@dataclass(frozen=True)
class SlackThread:
    """A thread as `conversations.replies` gave it, oldest first (its root included)."""

    messages: list[dict[str, Any]]
    complete: bool  # False: Slack limited or refused the read before the thread's end

    def since(self, moment: datetime) -> SlackThread:
        """Only the messages posted at or after `moment` (what a person said before asking
        to be forgotten is not brought back)."""
        after = moment.timestamp()
        kept = [m for m in self.messages if (seconds_of(m.get("ts")) or 0.0) >= after]
        return SlackThread(kept, self.complete)


async def read_slack_thread(
    client: AsyncWebClient, *, channel: str, thread_ts: str, oldest: str | None = None
) -> SlackThread:
    """Every message Slack gives of the thread (`oldest`: only those from then on, with
    the thread's parent, which Slack always gives), paging to its end; what it gave until
    it limited or refused the read. Never raises for Slack's answer."""
    patient_free = without_rate_limit_waits(client)
    messages: list[dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        try:
            page = await patient_free.conversations_replies(
                channel=channel, ts=thread_ts, limit=REPLIES_PAGE_SIZE, cursor=cursor, oldest=oldest
            )
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else None
            if error == "ratelimited":
                log.warning("slack.thread_history.limited", pages=pages, messages=len(messages))
            else:
                log.warning(
                    "slack.thread_history.failed",
                    error=error or type(exc).__name__,
                    pages=pages,
                    exc_info=exc,
                )
            return SlackThread(messages, complete=False)
        pages += 1
        # A later page starts with the parent again on some paths: keep each message once.
        seen = {m.get("ts") for m in messages}
        replies: list[dict[str, Any]] = page.get("messages") or []
        messages += [m for m in replies if m.get("ts") not in seen]
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not page.get("has_more") or not cursor:
            return SlackThread(messages, complete=True)


def history_from_slack(
    thread: SlackThread, *, thread_ts: str, current_ts: str, current_text: str
) -> list[ThreadMessage]:
    """The thread's opening request, then its newest messages, oldest first, ending with
    the message being answered (taken from the event itself, so history is right even when
    Slack's read API has not caught up with it). Orion's own messages (anything a bot
    posted) are `assistant` turns."""
    messages = _conversation(thread.messages)
    history: list[ThreadMessage] = []
    window = messages[-WINDOW_MESSAGES:]
    if len(window) < len(messages):
        opening = next((m for m in messages if not m.get("bot_id")), None)
        if opening is not None and opening.get("ts") != current_ts:
            history.append(_as_history(opening, opens_cut=True))
            window = [m for m in window if m is not opening]
    history += [_as_history(m) for m in window if m.get("ts") != current_ts]
    history.append(ThreadMessage("user", current_text, sent_at=seconds_of(current_ts)))
    return history


def transcript_from_slack(thread: SlackThread, *, current_ts: str) -> list[TranscriptMessage]:
    """What the person wrote and Orion answered before the message being answered, as
    Slack shows it, for the transcript (bounded and redacted): not Orion's greeting (it
    comes before the person's first message) nor the notes under its answers of what they
    changed in memory."""
    messages = [
        m
        for m in _conversation(thread.messages)
        if m.get("ts") != current_ts and (m.get("text") or "").strip() and not _memory_note(m)
    ]
    first = next((n for n, m in enumerate(messages) if not m.get("bot_id")), len(messages))
    return [
        said(_role(m), text_of(m), at=moment_of(m.get("ts")), ts=m.get("ts"))
        for m in messages[first:]
    ]


def history_from_transcript(
    messages: Sequence[TranscriptMessage], *, dropped: int, current_ts: str, current_text: str
) -> list[ThreadMessage]:
    """The transcript as history, ending with the message being answered; the opening marked
    when messages after it were left out of the transcript."""
    earlier = [m for m in messages if m.ts is None or m.ts != current_ts]
    history = [
        ThreadMessage(
            m.role,
            m.text,
            opens_cut=number == 0 and dropped > 0,
            sent_at=m.sent_at,
        )
        for number, m in enumerate(earlier)
    ]
    history.append(ThreadMessage("user", current_text, sent_at=seconds_of(current_ts)))
    return history


def _conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The thread without Slack's own root of an assistant thread."""
    return [m for m in messages if m.get("subtype") != ASSISTANT_THREAD_ROOT]


def _memory_note(message: dict[str, Any]) -> bool:
    blocks = message.get("blocks") or []
    return any(isinstance(b, dict) and b.get("block_id") == NOTE_BLOCK_ID for b in blocks)


def _role(message: dict[str, Any]) -> Role:
    return "assistant" if message.get("bot_id") else "user"


def _as_history(message: dict[str, Any], *, opens_cut: bool = False) -> ThreadMessage:
    return ThreadMessage(
        _role(message),
        text_of(message),
        opens_cut=opens_cut,
        sent_at=seconds_of(message.get("ts")),
    )


def seconds_of(ts: object) -> float | None:
    """A Slack ts as seconds since the epoch (None when it is not one)."""
    try:
        return float(ts) if isinstance(ts, str) else None
    except ValueError:
        return None
