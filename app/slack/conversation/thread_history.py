"""A turn's history: Orion's own transcript, and in a channel thread Slack's `conversations.replies`
(a read Slack limits stops at once, costing history, never the answer: docs/channels.md)."""

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
# Pages from a thread's start (all of it but in the longest threads), then tries at a page of
# the time before the mention (TAIL_NARROWING times longer or shorter when a try said too
# little of the pace).
MAX_FORWARD_PAGES = 3
MAX_TAIL_READS = 3
TAIL_MESSAGES = REPLIES_PAGE_SIZE // 2
TAIL_NARROWING = 8
# How many of the newest messages a history keeps beside the opening: the history sent to
# Claude keeps at most MAX_HISTORY_MESSAGES, so twice that leaves room to spare.
WINDOW_MESSAGES = 2 * MAX_HISTORY_MESSAGES


@dataclass(frozen=True)
class SlackThread:
    """A thread as `conversations.replies` gave it, oldest first (its root included)."""

    messages: list[dict[str, Any]]
    complete: bool  # False: Slack limited or refused the read before the thread's end


async def read_thread_ends(
    client: AsyncWebClient, *, channel: str, thread_ts: str, newest: str, oldest: str | None = None
) -> SlackThread:
    """The thread's opening and its newest messages up to `newest` (from `oldest`), the newest found
    by time past the first pages (Slack has no newest-first order). `complete`: nothing between was
    skipped."""
    reader = _Reader(client, channel, thread_ts)
    cursor = await reader.page(oldest=oldest)
    while cursor and reader.pages < MAX_FORWARD_PAGES:
        cursor = await reader.page(cursor=cursor, oldest=oldest)
    if not cursor:
        return SlackThread(reader.messages, complete=cursor is not None)
    read = list(reader.messages)
    end, start = seconds_of(newest), seconds_of(read[-1].get("ts"))
    if end is None or start is None or end <= start:
        return SlackThread(read, complete=False)
    rest = end - start
    rate = _rate(read[-REPLIES_PAGE_SIZE:], thread_ts=thread_ts)
    unread = _unread(read, thread_ts) if oldest is None else None
    if rate and unread is not None:
        # Where the newest TAIL_MESSAGES should begin, were the rest said at that pace
        # (however long ago it ended: the time up to the mention is all read).
        span = min(rest, max(rest - max(unread - TAIL_MESSAGES, 0) / rate, 1e-3))
    else:
        span = min(rest, TAIL_MESSAGES / rate) if rate else rest
    # Every try's messages are kept (each try's time differs): the newest of them are used.
    found: dict[object, dict[str, Any]] = {m.get("ts"): m for m in read}
    complete = False
    for _ in range(MAX_TAIL_READS):
        reader.messages = []
        more = await reader.page(oldest=f"{end - span:.6f}", latest=newest)
        if more is None:  # limited or refused: what was read so far
            break
        tail = [m for m in reader.messages if m.get("ts") != thread_ts]
        found.update((m.get("ts"), m) for m in tail)
        # The pace in this very time: a page that held more says how much shorter to try.
        pace = _rate(tail, thread_ts=thread_ts)
        if more:
            span = min(span / 2, TAIL_MESSAGES / pace) if pace else span / TAIL_NARROWING
            continue
        complete = span >= rest
        if len(tail) >= TAIL_MESSAGES // 2 or complete:
            break
        grown = TAIL_MESSAGES * span / len(tail) if tail else span * TAIL_NARROWING
        span = min(rest, max(grown, span * 2))
    ordered = sorted(found.values(), key=lambda m: seconds_of(m.get("ts")) or 0.0)
    return SlackThread(ordered, complete=complete)


def _unread(read: list[dict[str, Any]], thread_ts: str) -> int | None:
    """How many replies are left to read, by the parent's `reply_count` (None: Slack did
    not give it)."""
    parent = next((m for m in read if m.get("ts") == thread_ts), None)
    count = parent.get("reply_count") if parent is not None else None
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    return max(count - sum(1 for m in read if m.get("ts") != thread_ts), 0)


def _rate(messages: list[dict[str, Any]], *, thread_ts: str) -> float:
    """Replies a second over the stretch `messages` cover (0: too few to say)."""
    times = [t for m in messages if m.get("ts") != thread_ts and (t := seconds_of(m.get("ts")))]
    if len(times) < 2:
        return 0.0
    return (len(times) - 1) / max(times[-1] - times[0], 1e-3)


class _Reader:
    """`conversations.replies`, a page at a time, without waiting out a rate limit; the
    messages so far, each once (a page starts with the thread's parent again)."""

    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str) -> None:
        self._client = without_rate_limit_waits(client)
        self._channel, self._thread_ts = channel, thread_ts
        self.messages: list[dict[str, Any]] = []
        self.pages = 0

    async def page(
        self, *, cursor: str | None = None, oldest: str | None = None, latest: str | None = None
    ) -> str | None:
        """One more page: its next cursor ("" at the end), or None when Slack limited or
        refused it (logged)."""
        try:
            page = await self._client.conversations_replies(
                channel=self._channel,
                ts=self._thread_ts,
                limit=REPLIES_PAGE_SIZE,
                cursor=cursor,
                oldest=oldest,
                latest=latest,
                inclusive=latest is not None or None,
            )
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else None
            if error == "ratelimited":
                log.warning(
                    "slack.thread_history.limited", pages=self.pages, messages=len(self.messages)
                )
            else:
                log.warning(
                    "slack.thread_history.failed",
                    error=error or type(exc).__name__,
                    pages=self.pages,
                    exc_info=exc,
                )
            return None
        self.pages += 1
        seen = {m.get("ts") for m in self.messages}
        replies: list[dict[str, Any]] = page.get("messages") or []
        self.messages += [m for m in replies if m.get("ts") not in seen]
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        return str(cursor) if page.get("has_more") and cursor else ""


def history_from_transcript(
    messages: Sequence[TranscriptMessage], *, dropped: int, current_ts: str, current_text: str
) -> list[ThreadMessage]:
    """The transcript as history, ending with the message being answered; the opening marked
    when messages after it were left out of the transcript."""
    earlier = [m for m in messages if m.ts is None or m.ts != current_ts]
    history = [
        ThreadMessage(m.role, m.text, opens_cut=number == 0 and dropped > 0, sent_at=m.sent_at)
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
