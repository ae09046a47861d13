"""Stream Claude's Markdown into a Slack thread, and end it cleanly whatever happens.

Uses Slack's chat streaming (`chat.startStream` / `appendStream` / `stopStream`) once an
answer outgrows the stream's buffer; a shorter one is posted whole. A stream
expires after about five minutes (`message_not_in_streaming_state`); from then on the
answer is collected and written with `chat.update`, so the full text still ends up visible.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from app.observability.logging import get_logger
from app.slack.presence import Presence

log = get_logger(__name__)

# Fewer Slack calls per answer; Slack's own limit per call is 12,000 characters.
STREAM_BUFFER_CHARS = 400
MAX_MARKDOWN_CHARS = 12_000
FEEDBACK_ACTION_ID = "feedback"


# Message metadata on Orion's answers: which trace produced the answer, for its feedback.
ANSWER_METADATA_TYPE = "orion_answer"


def answer_metadata(trace_id: str | None) -> dict[str, Any] | None:
    """Slack message metadata naming the answer's trace (None when tracing is off)."""
    if trace_id is None:
        return None
    return {"event_type": ANSWER_METADATA_TYPE, "event_payload": {"trace_id": trace_id}}


def feedback_blocks() -> list[dict[str, Any]]:
    """Thumbs up/down under the final answer (handled by app/slack/feedback.py)."""
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
    ) -> None:
        self._client = client
        self._presence = presence
        self._channel = channel
        self._thread_ts = thread_ts
        self._user_id = user_id
        self._team_id = team_id
        self._stream: AsyncChatStream | None = None
        self._text: list[str] = []
        self._chars = 0
        self._expired = False
        self._finished = False

    @property
    def text(self) -> str:
        return "".join(self._text)

    async def append(self, markdown: str) -> None:
        if not markdown:
            return
        self._text.append(markdown)
        self._chars += len(markdown)
        if self._expired:
            return
        try:
            if self._stream is not None:
                await self._stream.append(markdown_text=markdown)
            elif self._chars >= STREAM_BUFFER_CHARS:
                # Outgrew one buffer: open the stream with everything held so far.
                self._stream = await self._open()
                await self._stream.append(markdown_text=self.text)
            # Else held here: Claude streams a few characters per delta, and the SDK's
            # stream would spend CPU on each (a debug line) only to buffer it likewise.
        except SlackApiError as exc:
            self._on_stream_error(exc)

    async def show_progress(self, status: str) -> None:
        await self._presence.progress(status)

    async def finish(
        self,
        *,
        blocks: list[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Close the stream with the final blocks, or write the collected answer.

        An answer shorter than the stream's buffer has not reached Slack yet: it is posted
        whole, in one `chat.postMessage`, instead of a `chat.startStream` and a
        `chat.stopStream` that would show the person the same message at the same moment.
        """
        if self._finished:
            return
        self._finished = True
        if not self._expired and self._stream is not None and self._stream.ts is not None:
            try:
                await self._stream.stop(blocks=blocks, metadata=metadata)
                return
            except SlackApiError as exc:
                self._on_stream_error(exc)
        await self._write_whole_answer(blocks, metadata)

    async def fail(self, apology: str) -> None:
        """End the turn with an apology, keeping whatever was already shown."""
        separator = "\n\n" if self._text else ""
        await self.append(f"{separator}_{apology}_")
        await self.finish()

    async def _open(self) -> AsyncChatStream:
        return await self._client.chat_stream(
            buffer_size=STREAM_BUFFER_CHARS,
            channel=self._channel,
            thread_ts=self._thread_ts,
            recipient_user_id=self._user_id,
            recipient_team_id=self._team_id,
        )

    def _on_stream_error(self, exc: SlackApiError) -> None:
        error = exc.response.get("error")
        if error != "message_not_in_streaming_state":
            raise exc
        log.info("slack.stream_expired")
        self._expired = True

    async def _write_whole_answer(
        self, blocks: list[dict[str, Any]] | None, metadata: dict[str, Any] | None = None
    ) -> None:
        text = self.text[:MAX_MARKDOWN_CHARS] or " "
        markdown_block = {"type": "markdown", "text": text}
        all_blocks = [markdown_block, *(blocks or [])]
        streamed_ts = self._stream.ts if self._stream is not None else None
        if streamed_ts:
            await self._client.chat_update(
                channel=self._channel,
                ts=streamed_ts,
                text=text,
                blocks=all_blocks,
                metadata=metadata,
            )
        else:
            await self._client.chat_postMessage(
                channel=self._channel,
                thread_ts=self._thread_ts,
                text=text,
                blocks=all_blocks,
                metadata=metadata,
            )
