"""Read a Slack thread back as conversation history for Claude: its opening message and its
newest messages.

`conversations.replies` returns a thread oldest first, a page at a time, and has no
newest-first order, so the newest messages of a long thread are only reached by paging to
the end. The first turn in a thread on this instance does that; the reader then remembers
where the newest window begins, and every later turn asks only for the messages from
there on (`oldest=`), which Slack answers with the thread's opening message plus that
window: one call for a thread that grew by less than a page, with edits and deletions in
the window as they are now. The memory is per instance and only saves calls: another
instance, or a restart, pages through once.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import MAX_HISTORY_MESSAGES, Role, ThreadMessage

# Slack recommends pages of 200 (at most 1,000) for this Tier 3 method.
REPLIES_PAGE_SIZE = 200
# How many of the newest messages a later turn reads again: the history keeps at most
# MAX_HISTORY_MESSAGES, and a turn adds two, so twice that leaves room to spare.
WINDOW_MESSAGES = 2 * MAX_HISTORY_MESSAGES
THREADS_KEPT = 10_000
# Enough of a thread's start to find the person's first request (after Slack's root and
# Orion's greeting in assistant_view).
HEAD_MESSAGES = 5
# Slack's own root message of an assistant thread ("New Assistant Thread"): not something
# the person wrote, so not part of the conversation.
ASSISTANT_THREAD_ROOT = "assistant_app_thread"


class ThreadReader:
    """Reads threads, remembering per thread where its newest window begins."""

    def __init__(self) -> None:
        # (channel, thread) → (first ts of the newest window, whether replies precede it)
        self._windows: OrderedDict[tuple[str, str], tuple[str, bool]] = OrderedDict()

    async def read(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        current_ts: str,
        current_text: str,
    ) -> list[ThreadMessage]:
        """The thread's opening request, then its newest messages, oldest first, ending
        with the message being answered.

        Orion's own messages (anything posted by a bot) become `assistant` turns. The
        message being answered is taken from the event itself, so history is right even
        when Slack's read API has not caught up with it yet.
        """
        key = (channel, thread_ts)
        since, cut_before = self._windows.get(key, (None, False))
        messages = await _replies(client, channel, thread_ts, oldest=since)
        replies = [m for m in messages if m.get("ts") != thread_ts]
        window = replies[-WINDOW_MESSAGES:]
        cut = cut_before or len(window) < len(replies)
        if window:
            self._remember(key, (str(window[0]["ts"]), cut))
        history = []
        if cut:
            # Read from the start, the messages hold the opening; read from a window, only
            # the parent (agent_view: the person's own first message) may be it.
            start = messages if since is None else [m for m in messages if m["ts"] == thread_ts]
            opening = _opening(start, thread_ts)
            if opening is None and since is not None:
                opening = _opening(await _head(client, channel, thread_ts), thread_ts)
            if opening is not None and opening.get("ts") != current_ts:
                history.append(_as_history(opening, opens_cut=True))
                window = [m for m in window if m.get("ts") != opening.get("ts")]
        else:
            window = [m for m in messages if m.get("subtype") != ASSISTANT_THREAD_ROOT]
        history += [_as_history(m) for m in window if m.get("ts") != current_ts]
        history.append(ThreadMessage("user", current_text, sent_at=_seconds(current_ts)))
        return history

    def _remember(self, key: tuple[str, str], window: tuple[str, bool]) -> None:
        self._windows[key] = window
        self._windows.move_to_end(key)
        while len(self._windows) > THREADS_KEPT:
            self._windows.popitem(last=False)


def _opening(messages: list[dict[str, Any]], thread_ts: str) -> dict[str, Any] | None:
    """The request that opened the thread: the person's own root message (agent_view), or
    the first message a person wrote under Slack's assistant root (assistant_view)."""
    for message in messages:
        if message.get("ts") == thread_ts and message.get("subtype") == ASSISTANT_THREAD_ROOT:
            continue
        if not message.get("bot_id"):
            return message
    return None


async def _head(client: AsyncWebClient, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    """The first few messages of the thread (one call), to find its opening request."""
    page = await client.conversations_replies(channel=channel, ts=thread_ts, limit=HEAD_MESSAGES)
    return list(page.get("messages", []))


async def _replies(
    client: AsyncWebClient, channel: str, thread_ts: str, *, oldest: str | None
) -> list[dict[str, Any]]:
    """Every message of the thread from `oldest` on (all of it without), paging to the end."""
    window: dict[str, Any] = {"oldest": oldest, "inclusive": True} if oldest else {}
    messages: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await client.conversations_replies(
            channel=channel, ts=thread_ts, limit=REPLIES_PAGE_SIZE, cursor=cursor, **window
        )
        # A later page starts with the parent again on some paths: keep each message once.
        seen = {m.get("ts") for m in messages}
        replies: list[dict[str, Any]] = page.get("messages") or []
        messages += [m for m in replies if m.get("ts") not in seen]
        cursor = (page.get("response_metadata") or {}).get("next_cursor")
        if not page.get("has_more") or not cursor:
            return messages


def _as_history(message: dict[str, Any], *, opens_cut: bool = False) -> ThreadMessage:
    role: Role = "assistant" if message.get("bot_id") else "user"
    return ThreadMessage(
        role,
        message.get("text") or "",
        opens_cut=opens_cut,
        sent_at=_seconds(message.get("ts")),
    )


def _seconds(ts: object) -> float | None:
    """A Slack ts as seconds since the epoch (None when it is not one)."""
    try:
        return float(ts) if isinstance(ts, str) else None
    except ValueError:
        return None
