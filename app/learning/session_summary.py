"""The session summary of one assistant thread: its file format, and how a turn updates it.

After every turn Orion rewrites `sessions/{thread}/context.md` with a short summary of the
whole thread so far; the loader restores it when the thread resumes, and `recall` searches
it later. The file is Markdown, written for Claude to read:

    # <title>

    Last updated: 2026-05-04T10:12:00Z
    User: U0123ABCD

    <summary>

The summary is rolling: each update starts from the previous summary plus what was said
since, so its cost does not grow with the thread. The text comes from a caller-supplied
`summarize` function (a Claude call, app/agent/summarizer.py); when that fails,
`fallback_summary` extracts one deterministically, so a turn never ends without one.
This module knows nothing about Claude or Slack.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol

from app.learning.session_index import (
    IndexedToday,
    SessionEntry,
    format_time,
    parse_time,
    record_session,
)
from app.learning.welcome import Welcome, save_welcome
from app.memory.scopes import session_context_key, validate_thread_ts, validate_user_id
from app.storage.store import ObjectStore, update

# Below this many characters of conversation a thread has nothing worth summarising.
MIN_CONVERSATION_CHARS = 100
MAX_TITLE_CHARS = 80
MAX_SUMMARY_CHARS = 2_000
MAX_WELCOME_CHARS = 200
# What the summarizer is shown when there is no previous summary: the newest part.
MAX_TRANSCRIPT_CHARS = 12_000
# How much of one message the deterministic fallback quotes.
FALLBACK_EXCERPT_CHARS = 240
UNTITLED = "Conversation with Orion"

_UPDATED_LINE = "Last updated: "
_USER_LINE = "User: "


class Utterance(Protocol):
    """One message of the conversation (app.agent.history.ThreadMessage fits)."""

    @property
    def role(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class SummaryDraft:
    """What a summarizer produces: a title and the summary text, and (from a model) how to
    welcome the person back to this conversation next time, in their language."""

    title: str
    body: str
    welcome: str | None = None  # one sentence greeting them back to the topic
    next_step: str | None = None  # a short suggestion to continue, for a prompt button


@dataclass(frozen=True)
class SessionSummary:
    title: str
    body: str
    user_id: str | None = None
    updated: datetime | None = None


Summarize = Callable[[SessionSummary | None, Sequence[Utterance]], Awaitable[SummaryDraft]]


@dataclass(frozen=True)
class SummaryOutcome:
    """How one update went; `source` says who wrote the text (for logs and spans)."""

    written: bool
    source: Literal["model", "fallback", "skipped"]
    conversation_chars: int
    summary_chars: int = 0
    failure: str | None = None


# --- the file format ---------------------------------------------------------------------


def render_summary(summary: SessionSummary) -> str:
    lines = [f"# {_one_line(summary.title, MAX_TITLE_CHARS) or UNTITLED}", ""]
    if summary.updated is not None:
        lines.append(f"{_UPDATED_LINE}{format_time(summary.updated)}")
    if summary.user_id is not None:
        lines.append(f"{_USER_LINE}{summary.user_id}")
    return "\n".join([*lines, "", summary.body.strip(), ""])


def parse_summary(text: str) -> SessionSummary:
    """Read a summary file back; tolerant of hand- or model-edited files."""
    lines = text.strip().splitlines()
    title = UNTITLED
    if lines and lines[0].startswith("#"):
        title = lines.pop(0).lstrip("#").strip() or UNTITLED
    user_id: str | None = None
    updated: datetime | None = None
    body_start = 0
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(_UPDATED_LINE):
            updated = parse_time(stripped[len(_UPDATED_LINE) :])
        elif stripped.startswith(_USER_LINE):
            user_id = stripped[len(_USER_LINE) :].strip() or None
        elif stripped:
            break
        body_start = index + 1
    body = "\n".join(lines[body_start:]).strip()
    return SessionSummary(title=title, body=body, user_id=user_id, updated=updated)


# --- what is worth summarising -----------------------------------------------------------


def conversation(history: Sequence[Utterance]) -> list[Utterance]:
    """The exchange proper: non-empty messages from the person's first one on.

    Orion's greeting opens every thread; it says nothing about this conversation.
    """
    messages = [m for m in history if m.text.strip()]
    while messages and messages[0].role != "user":
        messages.pop(0)
    return messages


def conversation_chars(messages: Sequence[Utterance]) -> int:
    return sum(len(m.text.strip()) for m in messages)


def latest_exchange(messages: Sequence[Utterance]) -> list[Utterance]:
    """The last answer and the person's message(s) it answered."""
    end = len(messages)
    start = end
    while start > 0 and messages[start - 1].role != "user":
        start -= 1  # the answer (possibly in several messages)
    while start > 0 and messages[start - 1].role == "user":
        start -= 1
    return list(messages[start:end])


def newest_within(messages: Sequence[Utterance], limit: int) -> list[Utterance]:
    """The newest messages whose text fits in `limit` characters (at least the last one)."""
    kept: list[Utterance] = []
    total = 0
    for message in reversed(messages):
        total += len(message.text)
        if kept and total > limit:
            break
        kept.append(message)
    return kept[::-1]


# --- the deterministic fallback ----------------------------------------------------------


def fallback_summary(
    previous: SessionSummary | None, new_material: Sequence[Utterance]
) -> SummaryDraft:
    """A summary without a model: the previous one plus excerpts of the new messages."""
    person = [m.text for m in new_material if m.role == "user"]
    orion = [m.text for m in new_material if m.role != "user"]
    lines = []
    if person:
        lines.append(f"- The person said: {_excerpt(' '.join(person))}")
    if orion:
        lines.append(f"- Orion answered: {_excerpt(' '.join(orion))}")
    added = "\n".join(lines)
    earlier = previous.body.strip() if previous is not None else ""
    room = MAX_SUMMARY_CHARS - len(added) - 1
    if len(earlier) > room:
        # Keep the start (the gist of the thread) and the newest exchange; drop the middle.
        cut = earlier[: max(0, room - 2)]
        earlier = (cut[: cut.rfind("\n")] if "\n" in cut else cut).rstrip() + "\n…"
    body = f"{earlier}\n{added}".strip() if earlier else added
    if previous is not None and previous.title != UNTITLED:
        title = previous.title
    else:
        title = _one_line(person[0], MAX_TITLE_CHARS) if person else UNTITLED
    return SummaryDraft(title=title or UNTITLED, body=body)


def _excerpt(text: str, limit: int = FALLBACK_EXCERPT_CHARS) -> str:
    flat = _one_line(text, 10 * limit)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat[:limit].rstrip()


# --- the update --------------------------------------------------------------------------


async def update_session_summary(
    store: ObjectStore,
    *,
    user_id: str,
    thread_ts: str,
    history: Sequence[Utterance],
    summarize: Summarize,
    indexed: IndexedToday | None = None,
    now: datetime | None = None,
) -> SummaryOutcome:
    """Rewrite the thread's summary to cover `history` (the thread, ending with the answer).

    Skips threads with too little substance. A failing `summarize` is replaced by the
    fallback, never raised; storage errors are raised (the caller logs them). The write is
    optimistic: if another turn of the same thread rewrote the summary meanwhile, the new
    messages are added to that version deterministically instead of overwriting it. The
    person's session index is updated too, unless `indexed` says it already is.
    """
    validate_user_id(user_id)
    validate_thread_ts(thread_ts)
    messages = conversation(history)
    chars = conversation_chars(messages)
    if chars < MIN_CONVERSATION_CHARS:
        return SummaryOutcome(written=False, source="skipped", conversation_chars=chars)

    key = session_context_key(thread_ts)
    stored = await store.read(key)
    previous = parse_summary(stored.content) if stored is not None else None
    new_material = latest_exchange(messages) if previous is not None else messages
    new_material = newest_within(new_material, MAX_TRANSCRIPT_CHARS)

    fallback = fallback_summary(previous, new_material)
    source: Literal["model", "fallback"] = "model"
    failure: str | None = None
    try:
        draft = _bounded(await summarize(previous, new_material), default_title=fallback.title)
    except Exception as exc:
        source, failure, draft = "fallback", type(exc).__name__, fallback

    moment = now or datetime.now(UTC)
    read_content = stored.content if stored is not None else None

    def transform(current: str | None) -> str:
        final = draft
        if current != read_content and current is not None:
            # Someone else summarised this thread since we read it: build on their version.
            final = fallback_summary(parse_summary(current), latest_exchange(messages))
        summary = SessionSummary(final.title, final.body, user_id=user_id, updated=moment)
        return render_summary(summary)

    written = await update(store, key, transform, already_read=stored) or ""
    title = parse_summary(written).title
    entry = SessionEntry(thread_ts, title, moment)
    if indexed is None or not indexed.covers(user_id, entry):
        await record_session(store, user_id, entry)
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


def _bounded(draft: SummaryDraft, *, default_title: str) -> SummaryDraft:
    body = draft.body.strip()
    if not body:
        raise ValueError("the summary is empty")
    if len(body) > MAX_SUMMARY_CHARS:
        body = body[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"
    return SummaryDraft(
        title=_one_line(draft.title, MAX_TITLE_CHARS) or default_title,
        body=body,
        welcome=_one_line(draft.welcome, MAX_WELCOME_CHARS) if draft.welcome else None,
        next_step=_one_line(draft.next_step, MAX_TITLE_CHARS) if draft.next_step else None,
    )
