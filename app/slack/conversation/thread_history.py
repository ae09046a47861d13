"""A turn's history: what was said in the conversation before the message being answered.

It comes from Orion's own transcript of the conversation (app/learning/conversations.py),
read beside the memory, with no Slack call at all. Slack's `conversations.replies` is read
only in a channel thread, for what members wrote there without mentioning Orion
(channel_history.py).

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
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import MAX_HISTORY_MESSAGES, ThreadMessage
from app.learning.conversation_record import TranscriptMessage
from app.observability.logging import get_logger
from app.slack.web_client import without_rate_limit_waits

log = get_logger(__name__)

# Slack recommends pages of 200 (at most 1,000) for this Tier 3 method; without the
# Marketplace, Slack answers 15 whatever is asked.
REPLIES_PAGE_SIZE = 200
# How many of the newest messages a history keeps beside the opening: the history sent to
# Claude keeps at most MAX_HISTORY_MESSAGES, so twice that leaves room to spare.
WINDOW_MESSAGES = 2 * MAX_HISTORY_MESSAGES


@dataclass(frozen=True)
class SlackThread:
    """A thread as `conversations.replies` gave it, oldest first (its root included)."""

    messages: list[dict[str, Any]]
    complete: bool  # False: Slack limited or refused the read before the thread's end


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


def seconds_of(ts: object) -> float | None:
    """A Slack ts as seconds since the epoch (None when it is not one)."""
    try:
        return float(ts) if isinstance(ts, str) else None
    except ValueError:
        return None
