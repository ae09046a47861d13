"""How a turn updates its thread's summary (the file: summary_file; the material:
transcript). The text comes from a caller-supplied `summarize` function (a Claude call,
app/agent/summarizer.py), or the fallback when that fails. This module knows nothing
about Claude or Slack.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from app.learning.erasure import erasure_time
from app.learning.search_index import document_for, record_search_document
from app.learning.session_index import IndexedToday, SessionEntry, record_session
from app.learning.summary_file import (
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
    SessionSummary,
    SummaryDraft,
    one_line,
    parse_summary,
    render_summary,
)
from app.learning.transcript import (
    MAX_TRANSCRIPT_CHARS,
    MIN_CONVERSATION_CHARS,
    Utterance,
    conversation,
    conversation_chars,
    fallback_summary,
    latest_exchange,
    newest_within,
    said_after,
)
from app.learning.welcome import Welcome, save_welcome
from app.memory.scopes import session_context_key, validate_thread_ts, validate_user_id
from app.observability.logging import get_logger
from app.storage.store import ObjectStore, update

log = get_logger(__name__)

MAX_WELCOME_CHARS = 200


Summarize = Callable[[SessionSummary | None, Sequence[Utterance]], Awaitable[SummaryDraft]]


@dataclass(frozen=True)
class SummaryOutcome:
    """How one update went; `source` says who wrote the text (for logs and spans)."""

    written: bool
    source: Literal["model", "fallback", "skipped"]
    conversation_chars: int
    summary_chars: int = 0
    failure: str | None = None


async def update_session_summary(
    store: ObjectStore,
    *,
    user_id: str,
    thread_ts: str,
    channel: str | None = None,
    history: Sequence[Utterance],
    summarize: Summarize,
    transcript: Sequence[Utterance] | None = None,
    indexed: IndexedToday | None = None,
    now: datetime | None = None,
) -> SummaryOutcome:
    """Rewrite the thread's summary to cover `history` (the thread, ending with the answer).

    The person's search index gets the thread's entry anew: its title, its summary and
    every message of `transcript` (the conversation as Orion keeps it, when the turn end
    has it: app/learning/conversation_record.py), else of `history`.

    Skips threads with too little substance. A failing `summarize` is replaced by the
    fallback, never raised; storage errors are raised (the caller logs them). The write is
    optimistic: if another turn of the same thread rewrote the summary meanwhile, the new
    messages are added to that version deterministically instead of overwriting it. The
    person's session index is updated too, unless `indexed` says it already is.

    A person who asked to be forgotten and came back to an old thread gets a summary of
    what they said since, never of what came before.
    """
    validate_user_id(user_id)
    validate_thread_ts(thread_ts)
    chars = conversation_chars(conversation(history))
    if chars < MIN_CONVERSATION_CHARS:  # too little even before anything is left out
        return SummaryOutcome(written=False, source="skipped", conversation_chars=chars)
    key = session_context_key(thread_ts)
    stored, erased_at = await asyncio.gather(store.read(key), erasure_time(store, user_id))
    messages = conversation(said_after(history, erased_at))
    chars = conversation_chars(messages)
    if chars < MIN_CONVERSATION_CHARS:
        return SummaryOutcome(written=False, source="skipped", conversation_chars=chars)

    previous = parse_summary(stored.content) if stored is not None else None
    new_material = latest_exchange(messages) if previous is not None else messages
    new_material = newest_within(new_material, MAX_TRANSCRIPT_CHARS)

    fallback = fallback_summary(previous, new_material)
    source: Literal["model", "fallback"] = "model"
    failure: str | None = None
    try:
        draft = bounded_draft(await summarize(previous, new_material), default_title=fallback.title)
    except Exception as exc:  # the turn still gets its summary: the fallback's
        log.warning("memory.summary.model_failed", error=type(exc).__name__, exc_info=exc)
        source, failure, draft = "fallback", type(exc).__name__, fallback

    moment = now or datetime.now(UTC)
    read_content = stored.content if stored is not None else None
    created: list[bool] = []  # whether the write found no summary (the last try's answer)

    def transform(current: str | None) -> str:
        created[:] = [current is None]
        final = draft
        if current != read_content and current is not None:
            # Someone else summarised this thread since we read it: build on their version.
            final = fallback_summary(parse_summary(current), latest_exchange(messages))
        summary = SessionSummary(final.title, final.body, user_id=user_id, updated=moment)
        return render_summary(summary)

    written = await update(store, key, transform, already_read=stored) or ""
    kept = parse_summary(written)
    entry = SessionEntry(thread_ts, kept.title, moment, channel)
    # The search entry changes with every summary: written on every turn, after the
    # conversation index's entry (when that one changes). Recall must find only threads
    # the Home tab lists, where the person can forget them: a search entry alone would be
    # found but shown nowhere. A thread without a summary is new to the index, or was
    # forgotten (on any instance) since this one wrote its entry: what `indexed`
    # remembers no longer says it is listed.
    # Normalising a summary's words costs milliseconds for the strangest Unicode (NFKC
    # expands some characters eighteenfold): off the event loop.
    said = conversation(said_after(transcript, erased_at)) if transcript is not None else messages
    times = [m.sent_at for m in said if m.sent_at is not None]
    began = datetime.fromtimestamp(min(times), UTC) if times else None
    document = await asyncio.to_thread(
        document_for, thread_ts, kept.title, kept.body, said, moment, began, channel
    )
    fresh = any(created)
    if indexed is not None and not fresh and indexed.covers(user_id, entry, erased_at=erased_at):
        await record_search_document(store, user_id, document)
    else:
        await record_session(store, user_id, entry)
        await record_search_document(store, user_id, document)
        # With the index entry (a thread's first turn of the day, or a new title): how to
        # greet the person next time, read at thread start beside their preferences.
        welcome = Welcome(
            thread_ts, entry.title, moment, greeting=draft.welcome, next_step=draft.next_step
        )
        await save_welcome(store, user_id, welcome)
        if indexed is not None:
            indexed.remember(user_id, entry)
    return SummaryOutcome(
        written=True,
        source=source,
        conversation_chars=chars,
        summary_chars=len(written),
        failure=failure,
    )


def bounded_draft(draft: SummaryDraft, *, default_title: str) -> SummaryDraft:
    body = draft.body.strip()
    if not body:
        raise ValueError("the summary is empty")
    if len(body) > MAX_SUMMARY_CHARS:
        body = body[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"
    return SummaryDraft(
        title=one_line(draft.title, MAX_TITLE_CHARS) or default_title,
        body=body,
        welcome=one_line(draft.welcome, MAX_WELCOME_CHARS) if draft.welcome else None,
        next_step=one_line(draft.next_step, MAX_TITLE_CHARS) if draft.next_step else None,
    )
