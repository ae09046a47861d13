"""Post the memory note under an answer: what the turn changed in the person's memory,
with an Undo (app/slack/conversation/memory_undo.py handles the click).

A message of its own in the thread, right after the answer (or after the confirmation of
a Stop): the answer's stream and its fallbacks stay as they are, and the undo rewrites
only the note. The same in both experiences. The preferences a message stated are saved
beside the answer; the note waits for them (their save is bounded), so it names them too.
"""

from __future__ import annotations

import asyncio
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.request import TurnRequest
from app.observability.logging import get_logger
from app.slack.conversation.memory_note_blocks import note_blocks, note_fallback
from app.slack.conversation.unfurls import NO_UNFURLS

log = get_logger(__name__)


async def show_memory_note(
    client: AsyncWebClient,
    agent: Any,
    turn: TurnRequest,
    capturing: asyncio.Future[None] | None,
) -> None:
    """Post the turn's note, if it has one. Never raises: the answer is already shown."""
    try:
        if capturing is not None:
            await asyncio.wait({capturing})  # never cancelled here: it is the save itself
        note = await agent.memory_note(turn)
        if note is None:
            return
        lines = [str(line) for line in note.lines]
        await client.chat_postMessage(
            channel=turn.channel_id,
            thread_ts=turn.thread_ts,
            text=note_fallback(lines),
            blocks=note_blocks(lines, note.undo_id),
            **NO_UNFURLS,
        )
    except Exception as exc:  # Slack refused it, or anything else: the answer stands
        log.warning("slack.memory_note_failed", error=type(exc).__name__, exc_info=exc)
