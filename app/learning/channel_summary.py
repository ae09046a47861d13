"""How a channel turn updates its thread's summary, `channel-records/{channel}/threads/
{thread}.md`, and the channel's search index (app/learning/channel_recall.py).

The same steps as a person's thread (app/learning/session_summary.py): the new exchange
is summarised onto the previous summary by the caller's `summarize` (a Claude call), or
by the fallback; the write is optimistic (another turn's summary written meanwhile is
built on, not overwritten). What differs is whose it is: the summary is the channel's,
with no person's welcome, conversation index or search index — a channel thread is never
part of anyone's own history — and it stays when a participant asks to be forgotten (the
channel's memory of what was decided; their own messages leave the transcript).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

from app.learning.channel_recall import record_channel_thread
from app.learning.search_index import document_for
from app.learning.session_summary import Summarize, SummaryOutcome, bounded_draft
from app.learning.summary_file import SessionSummary, parse_summary, render_summary
from app.learning.transcript import (
    MAX_TRANSCRIPT_CHARS,
    MIN_CONVERSATION_CHARS,
    Utterance,
    conversation,
    conversation_chars,
    fallback_summary,
    latest_exchange,
    newest_within,
)
from app.memory.scopes import channel_summary_key
from app.observability.audit import audit, channel_scope
from app.observability.logging import get_logger
from app.storage.store import ObjectStore, update

log = get_logger(__name__)


async def update_channel_summary(
    store: ObjectStore,
    *,
    channel_id: str,
    thread_ts: str,
    public: bool,
    history: Sequence[Utterance],
    summarize: Summarize,
    actor: str | None,
    transcript: Sequence[Utterance] | None = None,
    now: datetime | None = None,
) -> SummaryOutcome:
    """Rewrite the channel thread's summary to cover `history` (ending with the answer),
    and its entry in the channel's index: its title, its summary and every message of
    `transcript` (the thread as Orion keeps it, when the turn end has it), else of
    `history`. Storage errors are raised."""
    messages = conversation(history)
    chars = conversation_chars(messages)
    if chars < MIN_CONVERSATION_CHARS:
        return SummaryOutcome(written=False, source="skipped", conversation_chars=chars)
    key = channel_summary_key(channel_id, thread_ts)
    stored = await store.read(key)
    previous = parse_summary(stored.content) if stored is not None else None
    new_material = latest_exchange(messages) if previous is not None else messages
    new_material = newest_within(new_material, MAX_TRANSCRIPT_CHARS)
    fallback = fallback_summary(previous, new_material)
    source = "model"
    failure: str | None = None
    try:
        draft = bounded_draft(await summarize(previous, new_material), default_title=fallback.title)
    except Exception as exc:
        log.warning("memory.summary.model_failed", error=type(exc).__name__, exc_info=exc)
        source, failure, draft = "fallback", type(exc).__name__, fallback
    moment = now or datetime.now(UTC)
    read_content = stored.content if stored is not None else None

    def transform(current: str | None) -> str:
        final = draft
        if current is not None and current != read_content:
            final = fallback_summary(parse_summary(current), latest_exchange(messages))
        return render_summary(SessionSummary(final.title, final.body, updated=moment))

    written = await update(store, key, transform, already_read=stored) or ""
    kept = parse_summary(written)
    said = conversation(transcript) if transcript is not None else messages
    times = [m.sent_at for m in said if m.sent_at is not None]
    began = datetime.fromtimestamp(min(times), UTC) if times else None
    document = await asyncio.to_thread(
        document_for, thread_ts, kept.title, kept.body, said, moment, began, channel_id
    )
    await record_channel_thread(store, channel_id, document, public=public)
    audit("write", scope=channel_scope(channel_id), actor=actor, what="thread summary")
    return SummaryOutcome(
        written=True,
        source="model" if source == "model" else "fallback",
        conversation_chars=chars,
        summary_chars=len(written),
        failure=failure,
    )
