"""One streamed Slack message, written while Claude writes it: the first words at once,
then everything that arrived since, at most one Slack call per APPEND_INTERVAL_S.

Claude streams a few characters at a time (about 24 every 80 ms at Sonnet's pace). A
Slack call per delta would run into `chat.appendStream`'s rate limit; holding a fixed
number of characters before the first write (as slack_sdk's `chat_stream` does, 256 by
default) keeps the person waiting about a second for the first words. So the first
visible text opens the stream (`chat.startStream`) as soon as it arrives, and later text
is coalesced: one call in flight at a time, the next no sooner than APPEND_INTERVAL_S
after the previous one started, carrying all that arrived meanwhile (at most
MAX_MARKDOWN_CHARS a call, Slack's limit). Whatever Slack does — answer slowly, ask to
retry after a 429 (the client honours `Retry-After`), fail — no call queues up behind
another, and `push` never waits for Slack: the text gathers here and leaves with the
next call. `close` sends what is left with `chat.stopStream`.

Text that is only whitespace (the blank line between two steps of an answer) does not
open the stream nor make a call of its own: it goes with the next visible text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.runtime.background import run_in_background

log = get_logger(__name__)

# Slack's limit on the Markdown of one call (and of one message).
MAX_MARKDOWN_CHARS = 12_000
# At most this often a call per stream after the first words. At Sonnet's pace a call
# then carries ~300 characters, about as many calls per answer as the SDK's 256-character
# buffer makes, and a person reading the first words does not see the second's pause.
APPEND_INTERVAL_S = 1.0
# A Stop waits this long for a call in flight (to learn the stream it opened) before
# giving up on it: the person is waiting for the confirmation.
ABANDON_WAIT_S = 1.0

# What can break a stream: Slack refusing a call (after the client's retries), or not
# answering at all.
STREAM_FAILURES = (SlackApiError, SlackClientError, aiohttp.ClientError, TimeoutError)
NOT_STREAMING = "message_not_in_streaming_state"


def slack_error(exc: BaseException) -> str | None:
    """The `error` Slack answered with, if the failure is an answer from Slack."""
    return exc.response.get("error") if isinstance(exc, SlackApiError) else None


class PacedStream:
    """The Slack side of one answer's stream. `on_failure` hears of the first failure;
    from then on nothing more is sent (the caller writes the answer another way)."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        user_id: str | None,
        team_id: str | None,
        on_failure: Callable[[Exception], None],
    ) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._user_id = user_id
        self._team_id = team_id
        self._on_failure = on_failure
        self.ts: str | None = None  # the streamed message, once chat.startStream answered
        self.shown = 0  # characters Slack has confirmed receiving
        self.failed = False
        self._ended_by_slack = False  # a call failed because the stream had expired
        self._unsent: list[str] = []
        self._unsent_visible = False  # anything but whitespace among `_unsent`
        self._writer: asyncio.Task[None] | None = None
        self._handed_off = False  # a Stop left the call in flight to end the stream after
        self._closing = asyncio.Event()
        self._last_call = float("-inf")  # event-loop time the latest call started

    def push(self, text: str) -> None:
        """Queue `text` for the stream; a call goes out now or when the interval allows."""
        if self.failed or self._closing.is_set() or not text:
            return
        self._unsent.append(text)
        if text.isspace():
            return
        self._unsent_visible = True
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write(), name="slack.stream_writer")

    async def close(
        self, *, blocks: list[dict[str, Any]] | None, metadata: dict[str, Any] | None
    ) -> bool:
        """Send the rest and end the stream with `blocks` and `metadata`; False when there
        is no stream to end (nothing visible was written, or Slack failed)."""
        self._closing.set()
        await self._settled()
        if self.failed or self.ts is None:
            return False
        rest = self._take_all()
        try:
            while len(rest) > MAX_MARKDOWN_CHARS:
                await self._append(rest[:MAX_MARKDOWN_CHARS])
                rest = rest[MAX_MARKDOWN_CHARS:]
            await self._client.chat_stopStream(
                channel=self._channel,
                ts=self.ts,
                markdown_text=rest or None,
                blocks=blocks or None,
                metadata=metadata,
            )
        except STREAM_FAILURES as exc:
            self._fail(exc)
            return False
        self.shown += len(rest)
        return True

    async def abandon(self) -> None:
        """Stop writing (the person stopped the answer): what Slack shows stays, and the
        message leaves its streaming state. Slack has usually ended it already."""
        self._closing.set()
        if self._writer is not None and not self._writer.done():
            await asyncio.wait({self._writer}, timeout=ABANDON_WAIT_S)
        if self._writer is not None and not self._writer.done():
            # Slack still holds the call, which may open the stream: it is ended once Slack
            # answers, without keeping the person waiting for the confirmation (the writer
            # makes no further call: the stream is closing).
            self._handed_off = True
            run_in_background(self._end_after_writer(), name="slack.stream_end_after_stop")
            return
        await self._end()

    async def _end_after_writer(self) -> None:
        await self._settled()
        await self._end()

    async def _end(self) -> None:
        """Take the stream out of its streaming state (a stopped answer)."""
        # A stream that failed otherwise is still streaming in Slack: it is ended too.
        if self.ts is None or self._ended_by_slack:
            return
        try:
            await self._client.chat_stopStream(channel=self._channel, ts=self.ts)
        except STREAM_FAILURES as exc:
            if slack_error(exc) == NOT_STREAMING:
                log.info("slack.stream_already_ended", shown_chars=self.shown, exc_info=exc)
            else:
                log.warning("slack.stream_stop_failed", error=type(exc).__name__, exc_info=exc)

    def cancel(self) -> None:
        """Drop a call in flight (the turn is being torn down); not one a Stop left to end
        the stream once Slack answers."""
        if self._writer is not None and not self._handed_off:
            self._writer.cancel()

    async def _settled(self) -> None:
        """Wait for the writer: it ends after its call in flight, if any."""
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)

    async def _write(self) -> None:
        try:
            while self._unsent_visible and not self.failed:
                if self.ts is not None and not await self._turn():
                    return  # closing: `close` sends the rest with the stream's end
                piece = self._take(MAX_MARKDOWN_CHARS)
                if self.ts is None:
                    await self._start(piece)
                else:
                    await self._append(piece)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # whatever breaks the stream, the answer is written whole
            self._fail(exc)

    async def _turn(self) -> bool:
        """Wait until the next call may start; False if the stream is closing meanwhile."""
        delay = self._last_call + APPEND_INTERVAL_S - asyncio.get_running_loop().time()
        if delay > 0:
            try:
                await asyncio.wait_for(self._closing.wait(), delay)
            except TimeoutError:
                return True
        return not self._closing.is_set()

    async def _start(self, piece: str) -> None:
        self._last_call = asyncio.get_running_loop().time()
        response = await self._client.chat_startStream(
            channel=self._channel,
            thread_ts=self._thread_ts,
            markdown_text=piece,
            recipient_user_id=self._user_id,
            recipient_team_id=self._team_id,
        )
        ts = response.get("ts")
        if not ts:
            raise SlackRequestError("chat.startStream answered without the message's ts")
        self.ts = str(ts)
        self.shown += len(piece)

    async def _append(self, piece: str) -> None:
        assert self.ts is not None
        self._last_call = asyncio.get_running_loop().time()
        await self._client.chat_appendStream(channel=self._channel, ts=self.ts, markdown_text=piece)
        self.shown += len(piece)

    def _take(self, limit: int) -> str:
        """The first `limit` unsent characters, taken out of the queue."""
        text = self._take_all()
        piece, rest = text[:limit], text[limit:]
        if rest:
            self._unsent = [rest]
            self._unsent_visible = not rest.isspace()
        return piece

    def _take_all(self) -> str:
        text = "".join(self._unsent)
        self._unsent, self._unsent_visible = [], False
        return text

    def _fail(self, exc: Exception) -> None:
        if self.failed:
            return
        self.failed = True
        self._ended_by_slack = slack_error(exc) == NOT_STREAMING
        self._on_failure(exc)
