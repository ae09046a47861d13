"""Stream Claude's Markdown into a Slack thread, and end it cleanly whatever happens: written
whole when streaming is unavailable or breaks, kept as shown when stopped, a line and *Ask
again* when cut off by a restart (docs/architecture.md, "How an event flows", 8)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.memory_task import MemoryTask
from app.observability.logging import get_logger
from app.slack.conversation.answer_parts import rest_of, split_markdown
from app.slack.conversation.paced_stream import (
    MAX_MARKDOWN_CHARS,
    NOT_STREAMING,
    STREAM_FAILURES,
    PacedStream,
    slack_error,
)
from app.slack.conversation.presence import Presence
from app.slack.conversation.task_display import STOPPED, UNFINISHED, TaskDisplaySupport, task_chunk
from app.slack.conversation.thread_links import ThreadLinks
from app.slack.conversation.unfurls import NO_UNFURLS

log = get_logger(__name__)

FEEDBACK_ACTION_ID = "feedback"
ASK_AGAIN_ACTION_ID = "ask_again"
# The end of an answer that a restart cut off (app/shutdown.py), above its button.
CUT_OFF_LINE = (
    "Orion restarted while writing this, so the answer stops here. Ask again for all of it."
)


# Message metadata on Orion's answers: which trace produced the answer, for its feedback.
ANSWER_METADATA_TYPE = "orion_answer"


def answer_metadata(trace_id: str | None) -> dict[str, Any] | None:
    """Slack message metadata naming the answer's trace (None when tracing is off)."""
    if trace_id is None:
        return None
    return {"event_type": ANSWER_METADATA_TYPE, "event_payload": {"trace_id": trace_id}}


def feedback_blocks() -> list[dict[str, Any]]:
    """Thumbs up/down under the final answer (handled by app/slack/conversation/feedback.py)."""
    return [
        {
            "type": "context_actions",
            "elements": [
                {
                    "type": "feedback_buttons",
                    "action_id": FEEDBACK_ACTION_ID,
                    "positive_button": {
                        "text": {"type": "plain_text", "text": "Good response"},
                        "accessibility_label": "Mark this response as good",
                        "value": "good",
                    },
                    "negative_button": {
                        "text": {"type": "plain_text", "text": "Bad response"},
                        "accessibility_label": "Mark this response as bad",
                        "value": "bad",
                    },
                }
            ],
        }
    ]


def ask_again_blocks(question_ts: str) -> list[dict[str, Any]]:
    """The button under a cut-off answer: the same question, answered again in the thread
    (app/slack/conversation/ask_again.py). It names only the question's message; whose it
    is and what it said come from Slack."""
    return [
        {
            "type": "actions",
            "elements": [
                {
                    "type": "button",
                    "action_id": ASK_AGAIN_ACTION_ID,
                    "text": {"type": "plain_text", "text": "Ask again"},
                    "value": question_ts,
                }
            ],
        }
    ]


class SlackReplyStream:
    """One answer in one thread; implements the agent's ReplySink."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        user_id: str | None,
        team_id: str | None,
        presence: Presence,
        task_display: TaskDisplaySupport,
        links: Callable[[], ThreadLinks],
        on_stopped: Callable[[], object],
    ) -> None:
        """`task_display`: which workspaces take Slack's task display; `links`: how to link
        to a past conversation's thread; `on_stopped`: Slack stopped the answer's stream (the
        person pressed Stop)."""
        self._client = client
        self._presence = presence
        self._channel = channel
        self._thread_ts = thread_ts
        self._links = links
        self._tasks: dict[str, MemoryTask] = {}  # each task's latest state
        self._stream = PacedStream(
            client,
            channel=channel,
            thread_ts=thread_ts,
            user_id=user_id,
            team_id=team_id,
            on_failure=self._on_stream_error,
            on_stopped=on_stopped,
            tasks_allowed=task_display.allowed(team_id),
            on_tasks_refused=lambda error: task_display.refused(team_id, error),
        )
        self._text: list[str] = []
        self._expired = False  # Slack ended the stream itself (it is no longer streaming)
        self._finished = False
        # Orion's chat.stopStream ended the answer's stream, which leaves agent_view's
        # session `active` by itself (the method's `session_status` default).
        self.ended_stream = False

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def stopped(self) -> bool:
        """Slack stopped the answer's stream (the person pressed Stop)."""
        return self._stream.stopped

    @property
    def ts(self) -> str | None:
        """The streamed answer's message, once Slack has started it."""
        return self._stream.ts

    async def append(self, markdown: str) -> None:
        """Never waits for Slack: Claude's stream goes on while Slack takes its time."""
        if not markdown:
            return
        self._text.append(markdown)
        self._stream.push(markdown)

    async def show_progress(self, status: str) -> None:
        """The status line, unless the tasks show the work (no second display of it)."""
        if not self._stream.shows_tasks:
            await self._presence.progress(status)

    async def show_task(self, task: MemoryTask) -> None:
        """Queue the task's update for the answer's stream; never waits for Slack."""
        if self._finished:
            return
        self._tasks[task.id] = task
        self._stream.push_task(task_chunk(task, self._links()))

    def link_to(self, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
        return self._links().to(channel, ts, thread_ts)

    def _end_tasks(self, output: str) -> None:
        """Every task still in progress, shown as not done (`error`, with `output`) with the
        stream's end: none outlives the answer."""
        for task in list(self._tasks.values()):
            if task.status == "in_progress":
                self._tasks[task.id] = ended = replace(task, status="error", output=output)
                self._stream.push_task(task_chunk(ended, self._links()), send=False)

    async def finish(
        self, *, blocks: list[dict[str, Any]] | None = None, metadata: dict[str, Any] | None = None
    ) -> None:
        """Close the stream with the final blocks, or write the collected answer."""
        if self._finished:
            return
        self._end_tasks(UNFINISHED)
        self._finished = True
        self.ended_stream = await self._stream.close(blocks=blocks, metadata=metadata)
        if self.ended_stream or self._stream.stopped:
            return  # ended; or stopped by the person, and nothing more is theirs to read
        await self._write_whole_answer(blocks or [], metadata)

    async def fail(self, line: str, blocks: list[dict[str, Any]] | None = None) -> None:
        """End the answer where it is, keeping what was shown, with `line` (an apology, or
        why it stops there) and `blocks`."""
        separator = "\n\n" if self._text else ""
        await self.append(f"{separator}_{line}_")
        await self.finish(blocks=blocks)

    async def stop(self) -> None:
        """The person stopped the answer: what it showed stays, ended. Text Claude wrote
        that Slack has not shown is dropped."""
        self._end_tasks(STOPPED)
        self._finished = True
        await self._stream.abandon()

    def discard(self) -> None:
        """The turn is torn down without an end (Orion shutting down): no more calls."""
        self._stream.cancel()

    def _on_stream_error(self, exc: Exception) -> None:
        """From now on the answer is only collected; `finish` writes it."""
        error = slack_error(exc)
        if error == NOT_STREAMING:
            self._expired = True
            log.info("slack.stream_expired", shown_chars=self._stream.shown, exc_info=exc)
        else:
            log.warning(
                "slack.stream_failed",
                error=error or type(exc).__name__,
                shown_chars=self._stream.shown,
                exc_info=exc,
            )

    async def _end_stream(self, ts: str) -> None:
        """Take a broken stream out of its streaming state, else Slack shows it as still
        being written until it expires."""
        try:
            await self._client.chat_stopStream(channel=self._channel, ts=ts)
            self.ended_stream = True
        except STREAM_FAILURES as exc:
            # Still failing: the chat.update that follows is what the person needs.
            log.warning("slack.stream_stop_failed", exc_info=exc)

    async def _write_whole_answer(
        self, blocks: list[dict[str, Any]], metadata: dict[str, Any] | None
    ) -> None:
        """The answer in as many messages as it needs, blocks and metadata on the last; a broken
        stream's message is rewritten to the first part (refused, it keeps what it shows and only
        the rest follows)."""
        parts = await _messages_of(self.text or " ")
        streamed_ts = self._stream.ts
        if streamed_ts:
            if not self._expired:
                await self._end_stream(streamed_ts)
            try:
                await self._client.chat_update(
                    channel=self._channel,
                    ts=streamed_ts,
                    text=parts[0],
                    **_content(parts[0], blocks, metadata, last=len(parts) == 1),
                )
                parts = parts[1:]
            except STREAM_FAILURES as exc:
                log.warning("slack.stream_rewrite_failed", exc_info=exc)
                rest = await asyncio.to_thread(rest_of, self.text, self._stream.shown)
                parts = await _messages_of(rest) if rest.strip() else []
        for number, part in enumerate(parts, start=1):
            await self._client.chat_postMessage(
                channel=self._channel,
                thread_ts=self._thread_ts,
                text=part,
                **_content(part, blocks, metadata, last=number == len(parts)),
                **NO_UNFURLS,
            )


async def _messages_of(answer: str) -> list[str]:
    """`answer` as Slack messages. Cutting a long one parses its Markdown, which takes tens
    of milliseconds per 10,000 characters of some shapes (tables, long lists): in a worker
    thread, so that the event loop keeps answering everyone else meanwhile."""
    if len(answer) <= MAX_MARKDOWN_CHARS:
        return [answer]
    return await asyncio.to_thread(split_markdown, answer, MAX_MARKDOWN_CHARS)


def _content(
    part: str, blocks: list[dict[str, Any]], metadata: dict[str, Any] | None, *, last: bool
) -> dict[str, Any]:
    """One message of an answer; the feedback blocks and the metadata go on the last only."""
    markdown = {"type": "markdown", "text": part}
    if not last:
        return {"blocks": [markdown]}
    return {"blocks": [markdown, *blocks], "metadata": metadata}
