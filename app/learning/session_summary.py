"""What a turn's end teaches Orion about its conversation: its summary, its search entry and the
owner's profile, whose write is the event's settle (all taken back after an erasure meanwhile)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from app.learning.guard import Guard
from app.learning.plain_text import clip, one_line
from app.learning.profile import ConversationEntry, Profile
from app.learning.search_index import document_for, record_search_document
from app.learning.summary_file import MAX_SUMMARY_CHARS, MAX_TITLE_CHARS, Summary, SummaryDraft
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
from app.learning.welcome import Welcome, with_welcome
from app.observability.logging import get_logger

log = get_logger(__name__)

MAX_WELCOME_CHARS = 200

Summarize = Callable[[Summary | None, Sequence[Utterance]], Awaitable[SummaryDraft]]


@dataclass(frozen=True)
class SummaryOutcome:
    """How one update went; `source` says who wrote the text (for logs and spans)."""

    written: bool
    source: Literal["model", "fallback", "skipped"]
    conversation_chars: int
    summary_chars: int = 0
    failure: str | None = None


async def learn_from_turn(
    guard: Guard,
    *,
    thread_ts: str,
    channel: str | None,
    history: Sequence[Utterance],
    previous: Summary | None,
    summarize: Summarize,
    transcript: Sequence[Utterance] | None = None,
    now: datetime | None = None,
    also: Callable[[Profile], Profile] | None = None,
) -> SummaryOutcome:
    """Summarise the conversation (`history`, ending with the answer), index it (`transcript`, else
    `history`) and settle the profile (`also`: a further change). A failing `summarize` gives the
    fallback."""
    messages = conversation(history)
    chars = conversation_chars(messages)
    if chars < MIN_CONVERSATION_CHARS:
        await guard.settle(also, thread_ts=thread_ts)
        return SummaryOutcome(written=False, source="skipped", conversation_chars=chars)
    new_material = latest_exchange(messages) if previous is not None else messages
    new_material = newest_within(new_material, MAX_TRANSCRIPT_CHARS)
    fallback = fallback_summary(previous, new_material)
    source: Literal["model", "fallback"] = "model"
    failure: str | None = None
    try:
        draft = bounded_draft(await summarize(previous, new_material), default_title=fallback.title)
    except Exception as exc:  # the turn still gets its summary: the fallback's
        log.warning("memory.summary.model_failed", exc_info=exc)
        source, failure, draft = "fallback", type(exc).__name__, fallback

    moment = now or datetime.now(UTC)
    summary = Summary(draft.title, draft.body, moment)
    said = conversation(transcript) if transcript is not None else messages
    times = [m.sent_at for m in said if m.sent_at is not None]
    began = datetime.fromtimestamp(min(times), UTC) if times else None
    # Normalising a long conversation's words costs milliseconds for the strangest
    # Unicode (NFKC expands some characters eighteenfold): off the event loop.
    document = await asyncio.to_thread(
        document_for, thread_ts, summary.title, summary.body, said, moment, began, channel
    )
    await record_search_document(guard.store, guard.home, document)
    entry = ConversationEntry(thread_ts, summary.title, moment, channel)
    welcome = Welcome(
        thread_ts, summary.title, moment, draft.welcome, draft.next_step, summary=summary
    )

    def change(profile: Profile) -> Profile:
        changed = with_welcome(profile.with_conversation(entry), welcome)
        return also(changed) if also is not None else changed

    await guard.settle(change, thread_ts=thread_ts)
    return SummaryOutcome(
        written=True,
        source=source,
        conversation_chars=chars,
        summary_chars=len(summary.body),
        failure=failure,
    )


def bounded_draft(draft: SummaryDraft, *, default_title: str) -> SummaryDraft:
    body = draft.body.strip()
    if not body:
        raise ValueError("the summary is empty")
    return SummaryDraft(
        title=one_line(draft.title, MAX_TITLE_CHARS) or default_title,
        body=clip(body, MAX_SUMMARY_CHARS),
        welcome=one_line(draft.welcome, MAX_WELCOME_CHARS) if draft.welcome else None,
        next_step=one_line(draft.next_step, MAX_TITLE_CHARS) if draft.next_step else None,
    )
