"""The Undo button under a memory note (docs/memory-notes.md, "Undo"): only the record's owner's
click does anything; every refusal is told to the clicker alone and logged."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.memory_note import file_name
from app.learning.undo import (
    UNAVAILABLE,
    UNDONE,
    UndoOutcome,
    UndoResult,
    outcome_text,
    undo_changes,
)
from app.memory.scopes import is_thread_ts
from app.observability import tracing
from app.observability.logging import get_logger, since
from app.services import ServiceProvider
from app.slack.conversation import memory_note_blocks as blocks
from app.slack.event_scope import handling
from app.slack.mrkdwn import escape

log = get_logger(__name__)


def register(app: AsyncApp, provider: ServiceProvider) -> None:
    @app.action(blocks.UNDO_ACTION_ID)
    async def on_undo(
        ack: AsyncAck, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        await ack()
        user = str((body.get("user") or {}).get("id") or "")
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
        message_ts = container.get("message_ts")
        thread_ts = container.get("thread_ts") or (body.get("message") or {}).get("thread_ts")
        async with handling(
            "slack.memory_undo", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if not user or not channel:
                return
            undo_id = str(action.get("value") or "")
            started = time.perf_counter()
            with tracing.observe("memory.undo") as span:
                try:
                    budget = provider.settings.memory_load_timeout_s * 2
                    result: UndoResult | None = None  # stays None with memory switched off
                    async with provider.storage_within(budget) as storage:
                        if storage.memory_store is not None:
                            result = await undo_changes(
                                storage.memory_store, undo_id, user, noted_at=_moment(message_ts)
                            )
                except Exception as exc:
                    log.warning("memory.undo.failed", exc_info=exc)
                    span.update(level="WARNING", output={"outcome": "failed"})
                    await _tell(client, channel, user, thread_ts, UNAVAILABLE)
                    return
                if result is None:
                    # The record may well be there, unread: not expired, unavailable.
                    log.info("memory.undo", outcome="memory_off")
                    span.update(output={"outcome": "memory_off"})
                    await _tell(client, channel, user, thread_ts, UNAVAILABLE)
                    return
                span.update(output={"outcome": result.outcome.value})
            if result.outcome is UndoOutcome.NOT_YOURS:
                # Someone clicked another person's Undo: nothing changed; worth a look.
                log.warning("memory.undo.refused", reason="not_the_owner", **since(started))
            else:
                files = len(result.lines)
                log.info("memory.undo", outcome=result.outcome.value, files=files, **since(started))
            await _answer(client, channel, user, thread_ts, message_ts, result)


async def _answer(
    client: AsyncWebClient,
    channel: str,
    user: str,
    thread_ts: str | None,
    message_ts: str | None,
    result: UndoResult,
) -> None:
    if result.outcome is UndoOutcome.UNDONE:
        if not message_ts or not await _rewrite(client, channel, message_ts, result.lines):
            # The note cannot show it (deleted, say): the person still learns it worked.
            await _tell(client, channel, user, thread_ts, UNDONE)
        return
    owner = result.owner or user
    names = [file_name(owner, key) for key in result.changed_since]
    await _tell(client, channel, user, thread_ts, outcome_text(result, names))


async def _rewrite(client: AsyncWebClient, channel: str, ts: str, lines: list[str]) -> bool:
    """The note, undone: no button left to click. Whether Slack took it."""
    try:
        await client.chat_update(
            channel=channel, ts=ts, text=UNDONE, blocks=blocks.undone_blocks(lines)
        )
    except SlackApiError as exc:
        log.warning(
            "slack.memory_note_update_failed", error=exc.response.get("error"), exc_info=exc
        )
        return False
    return True


async def _tell(
    client: AsyncWebClient, channel: str, user: str, thread_ts: str | None, text: str
) -> None:
    """A line only the clicking person sees."""
    try:
        await client.chat_postEphemeral(
            channel=channel,
            user=user,
            thread_ts=thread_ts,
            text=escape(text),  # names a person chose: shown as themselves
            blocks=blocks.refusal_blocks(text),
        )
    except SlackApiError as exc:
        log.warning("slack.memory_undo_reply_failed", error=exc.response.get("error"), exc_info=exc)


def _moment(ts: object) -> datetime | None:
    """When a message was posted, from its Slack timestamp."""
    if not is_thread_ts(ts):
        return None
    return datetime.fromtimestamp(float(str(ts)), UTC)
