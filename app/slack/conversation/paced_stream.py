"""One streamed Slack message, written while Claude writes it: the first words at once, then
all that arrived since, one Slack call in flight, at most one per APPEND_INTERVAL_S; a refusal
before STREAM_LIFETIME_S is the person's Stop (docs/architecture.md, "How an event flows", 8)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError, SlackRequestError
from slack_sdk.models.messages.chunk import Chunk, MarkdownTextChunk, TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.runtime.background import run_in_background
from app.slack.conversation.task_display import (
    CHUNKS_REFUSED,
    CHUNKS_REFUSED_THIS_ANSWER,
    TASK_DISPLAY_MODE,
    plan_chunk,
)

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
# Slack expires a stream about five minutes after it started; refused sooner, it was stopped.
STREAM_LIFETIME_S = 240.0


def slack_error(exc: BaseException) -> str | None:
    """The `error` Slack answered with, if the failure is an answer from Slack."""
    return exc.response.get("error") if isinstance(exc, SlackApiError) else None


@dataclass
class _Piece:
    """What one call carries: text, and the tasks' latest updates in their order among it."""

    text: str = ""
    parts: list[str | TaskUpdateChunk] = field(default_factory=list)

    @property
    def has_tasks(self) -> bool:
        return any(isinstance(part, TaskUpdateChunk) for part in self.parts)

    def chunks(self, *, with_plan: bool) -> list[Chunk]:
        """The call's `chunks`: text as markdown_text chunks (slack_sdk's ChatStream sends
        text that way beside other chunks), each task once, at its first place."""
        chunks: list[Chunk] = [plan_chunk()] if with_plan else []
        latest: dict[str, TaskUpdateChunk] = {}
        for part in self.parts:
            if isinstance(part, TaskUpdateChunk):
                latest[part.id] = part
        placed: set[str] = set()
        for part in self.parts:
            if isinstance(part, str):
                if part:
                    chunks.append(MarkdownTextChunk(text=part))
            elif part.id not in placed:
                placed.add(part.id)
                chunks.append(latest[part.id])
        return chunks


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
        on_stopped: Callable[[], object] = lambda: None,
        tasks_allowed: bool = False,
        on_tasks_refused: Callable[[str | None], None] | None = None,
    ) -> None:
        """`on_stopped`: Slack stopped the stream (see the module's doc); `tasks_allowed`:
        the workspace is not known to refuse the task display; `on_tasks_refused` hears
        Slack's error when it does."""
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._user_id = user_id
        self._team_id = team_id
        self._on_failure = on_failure
        self._on_stopped = on_stopped
        self.ts: str | None = None  # the streamed message, once chat.startStream answered
        self._started_at = 0.0  # event-loop time chat.startStream answered
        self.shown = 0  # characters Slack has confirmed receiving
        self.failed = False
        self.stopped = False  # Slack stopped the stream (the person pressed Stop)
        self._ended_by_slack = False  # a call failed because the stream had expired
        self._unsent: list[str | TaskUpdateChunk] = []
        self._unsent_visible = False  # anything but whitespace among `_unsent`
        self._tasks_allowed = tasks_allowed
        self._on_tasks_refused = on_tasks_refused
        self._plan_shown = False  # the plan's title went with the first task
        self._nudge = asyncio.Event()  # the first words, or the end, wake a waiting writer
        self._writer: asyncio.Task[None] | None = None
        self._handed_off = False  # a Stop left the call in flight to end the stream after
        self._closing = asyncio.Event()
        self._last_call = float("-inf")  # event-loop time the latest call started

    @property
    def shows_tasks(self) -> bool:
        """Task updates can be shown (the workspace has not refused them)."""
        return self._tasks_allowed and not self.failed

    def push(self, text: str) -> None:
        """Queue `text` for the stream; a call goes out now or when the interval allows."""
        if self.failed or self._closing.is_set() or not text:
            return
        self._unsent.append(text)
        if text.isspace():
            return
        self._unsent_visible = True
        if self.shown == 0:
            self._nudge.set()  # the first words: not held for the interval
        self._wake_writer()

    def push_task(self, update: TaskUpdateChunk, *, send: bool = True) -> None:
        """Queue a task's update; `send=False`: only with the stream's end (a stopped
        answer's tasks, which must not open a stream of their own)."""
        if not self.shows_tasks or (self._closing.is_set() and send):
            return
        self._unsent.append(update)
        if send:
            self._unsent_visible = True
            self._wake_writer()

    def _wake_writer(self) -> None:
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write(), name="slack.stream_writer")

    async def close(
        self, *, blocks: list[dict[str, Any]] | None, metadata: dict[str, Any] | None
    ) -> bool:
        """Send the rest and end the stream with `blocks` and `metadata`; False when there
        is no stream to end (nothing visible was written, or Slack failed)."""
        self._close_now()
        await self._settled()
        if self.failed or self.ts is None:
            return False
        try:
            rest = self._take(MAX_MARKDOWN_CHARS)
            while self._unsent:
                await self._send(rest)
                rest = self._take(MAX_MARKDOWN_CHARS)
            await self._send(rest, blocks=blocks or None, metadata=metadata, last=True)
        except STREAM_FAILURES as exc:
            self._fail(exc)
            return False
        return True

    async def abandon(self) -> None:
        """Stop writing (the person stopped the answer): what Slack shows stays, and the
        message leaves its streaming state (with the tasks queued `send=False`). Slack has
        usually ended it already."""
        self._close_now()
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
        # Only the tasks: the text Slack has not shown is dropped with the stop.
        tasks = _Piece(parts=[p for p in self._take_all() if isinstance(p, TaskUpdateChunk)])
        try:
            await self._send(tasks, last=True)
        except STREAM_FAILURES as exc:
            if slack_error(exc) == NOT_STREAMING:
                log.info("slack.stream_already_ended", shown_chars=self.shown, exc_info=exc)
            else:
                log.warning("slack.stream_stop_failed", exc_info=exc)

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
                await self._send(self._take(MAX_MARKDOWN_CHARS))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # whatever breaks the stream, the answer is written whole
            self._fail(exc)

    def _close_now(self) -> None:
        self._closing.set()
        self._nudge.set()

    async def _turn(self) -> bool:
        """Wait until the next call may start; False if the stream is closing meanwhile.
        The answer's first words do not wait (a task may have opened the stream)."""
        while not self._closing.is_set():
            delay = self._last_call + APPEND_INTERVAL_S - asyncio.get_running_loop().time()
            if delay <= 0 or (self.shown == 0 and self._nudge.is_set()):
                return True
            self._nudge.clear()
            if self.shown == 0 and any(
                isinstance(p, str) and not p.isspace() for p in self._unsent
            ):
                return True
            try:
                await asyncio.wait_for(self._nudge.wait(), delay)
            except TimeoutError:
                return True
        return False

    async def _send(
        self,
        piece: _Piece,
        *,
        blocks: list[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None,
        last: bool = False,
    ) -> None:
        """One call: start the stream, append to it, or (`last`) stop it. A call with
        tasks that Slack refuses goes again without them, and no task is sent again."""
        if piece.has_tasks and self._tasks_allowed:
            try:
                await self._call(
                    piece, piece.chunks(with_plan=not self._plan_shown), blocks, metadata, last
                )
                self._plan_shown = True
                return
            except SlackApiError as exc:
                error = slack_error(exc)
                if error not in CHUNKS_REFUSED and error not in CHUNKS_REFUSED_THIS_ANSWER:
                    raise
                self._refuse_tasks(exc, workspace=error in CHUNKS_REFUSED)
        text = _Piece(piece.text, [piece.text])
        if last or text.text.strip() or (self.ts is not None and text.text):
            await self._call(text, None, blocks, metadata, last)

    async def _call(
        self,
        piece: _Piece,
        chunks: list[Chunk] | None,
        blocks: list[dict[str, Any]] | None,
        metadata: dict[str, Any] | None,
        last: bool,
    ) -> None:
        # With chunks the text is among them, else it is `markdown_text` as always.
        markdown = None if chunks is not None else piece.text or None
        self._last_call = asyncio.get_running_loop().time()
        if self.ts is None:
            response = await self._client.chat_startStream(
                channel=self._channel,
                thread_ts=self._thread_ts,
                markdown_text=markdown,
                chunks=chunks,
                task_display_mode=TASK_DISPLAY_MODE if chunks else None,
                recipient_user_id=self._user_id,
                recipient_team_id=self._team_id,
            )
            ts = response.get("ts")
            if not ts:
                raise SlackRequestError("chat.startStream answered without the message's ts")
            self.ts = str(ts)
            self._started_at = asyncio.get_running_loop().time()
        elif last:
            await self._client.chat_stopStream(
                channel=self._channel,
                ts=self.ts,
                markdown_text=markdown,
                chunks=chunks,
                blocks=blocks,
                metadata=metadata,
            )
        else:
            await self._client.chat_appendStream(
                channel=self._channel, ts=self.ts, markdown_text=markdown, chunks=chunks
            )
        self.shown += len(piece.text)

    def _refuse_tasks(self, exc: SlackApiError, *, workspace: bool) -> None:
        """Text only, from now on; `workspace`: Slack said the workspace does not take the
        task display (`on_tasks_refused` hears it), not only that this call was malformed."""
        log.info(
            "slack.task_display_refused", error=slack_error(exc), workspace=workspace, exc_info=exc
        )
        self._tasks_allowed = False
        self._unsent = [p for p in self._unsent if isinstance(p, str)]
        self._unsent_visible = any(not p.isspace() for p in self._unsent if isinstance(p, str))
        if workspace and self._on_tasks_refused is not None:
            self._on_tasks_refused(slack_error(exc))

    def _take(self, limit: int) -> _Piece:
        """The unsent text (its first `limit` characters) and the task updates queued
        before its cut, in order, taken out of the queue."""
        items = self._take_all()
        piece, room = _Piece(), limit
        for n, item in enumerate(items):
            if isinstance(item, TaskUpdateChunk):
                piece.parts.append(item)
                continue
            head = item[:room]
            piece.parts.append(head)
            piece.text += head
            room -= len(head)
            if len(head) < len(item):
                self._unsent = [item[len(head) :], *items[n + 1 :]]
                self._unsent_visible = any(
                    isinstance(p, TaskUpdateChunk) or not p.isspace() for p in self._unsent
                )
                break
        return piece

    def _take_all(self) -> list[str | TaskUpdateChunk]:
        items = self._unsent
        self._unsent, self._unsent_visible = [], False
        return items

    def _fail(self, exc: Exception) -> None:
        if self.failed:
            return
        self.failed = True
        self._ended_by_slack = slack_error(exc) == NOT_STREAMING
        age = asyncio.get_running_loop().time() - self._started_at
        if self._ended_by_slack and age < STREAM_LIFETIME_S:
            self.stopped = True
            log.info("slack.stream_stopped", shown_chars=self.shown, age_s=round(age, 1))
            self._on_stopped()
            return
        self._on_failure(exc)
