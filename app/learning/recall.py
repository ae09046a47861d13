"""`recall`: Claude's way to look through the current person's past conversations.

"What did we discuss about the Q3 budget last week?" is answered from the session
summaries the after-turn step writes. A search reads the person's search index (Orion's
own record, which only Orion writes: app/learning/search_index.py) once, ranks every
conversation it lists with BM25 (app/learning/search_ranking.py), in any language
(app/learning/search_terms.py), and then reads only the summaries of the best `limit`,
each beside its thread's record (whose the thread is: app/learning/conversations.py):
at most 1 + 2 × `limit` storage reads, in two rounds, however long the person's history.
An index that does not cover the person's older conversations yet is filled in first,
once (app/learning/search_backfill.py).

Whose sessions are searched is fixed when the tool is built, from the turn's scope; the
model's input carries only the query.

A turn that shows its work (app/agent/memory_tasks.py) passes a `RecallLog`: each search
then also records the conversations it found, with the DM each is in (from the person's
conversation index, read beside the search), so that the person can open them.

Conversations older than the retention window are not recalled: the index skips their
entries and the store reads their summaries as absent (app/memory/retention.py). When
storage cannot be read, the model is told the search could not be made — never that
there is nothing to find.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool
from anthropic.tools import ToolError
from anthropic.types.beta import BetaToolParam

from app.learning.conversations import read_conversation, whose
from app.learning.search_backfill import fill_in
from app.learning.search_index import SearchIndex, parse_search_index, read_search_index
from app.learning.search_ranking import Ranked, rank
from app.learning.search_terms import query_terms
from app.learning.session_index import read_index
from app.learning.summary_file import SessionSummary, parse_summary
from app.memory.retention import cutoff_of
from app.memory.scopes import MemoryScope, session_context_key
from app.observability import tracing
from app.observability.logging import get_logger
from app.storage.store import ObjectStore

log = get_logger(__name__)

RECALL_TOOL_NAME = "recall"
DEFAULT_RESULTS = 5
MAX_RESULTS = 10
EXCERPT_CHARS = 600
MAX_QUERY_CHARS = 500
COULD_NOT_SEARCH = (
    "Could not search earlier conversations right now: the memory store did not answer. "
    "Tell the person you could not look it up this time — not that nothing was found."
)

DESCRIPTION = (
    "Search summaries of your earlier conversations with the person you are talking to "
    "(other Slack threads, newest first on ties). Use it when they refer to something "
    "discussed before ('what did we decide about the Q3 budget?', 'recap our last "
    "conversation'). Pass the topic as a few words, in the language the conversation was "
    "held in (any language works); an empty topic lists the most recent "
    "conversations. Results give each conversation's title, date and summary. Only this "
    "person's own conversations are ever searched."
)


@dataclass(frozen=True)
class RecallHit:
    thread_ts: str
    updated: datetime
    summary: SessionSummary
    score: float


@dataclass
class SearchCounts:
    indexed: int = 0
    read: int = 0
    missing: int = 0
    failed: int = 0
    backfilled: int = 0  # summaries read to fill in the index (once per person)
    backfill_failed: int = 0  # and those that could not be read (tried again next time)
    not_theirs: int = 0  # indexed, but the thread's record names someone else

    @property
    def unreadable(self) -> int:
        return self.failed + self.backfill_failed


@dataclass(frozen=True)
class RecalledConversation:
    """A conversation a search found: its thread, its title, and the DM it is in (None
    when the person's conversation index does not list it)."""

    thread_ts: str
    title: str
    channel: str | None


class RecallLog:
    """The conversations the latest search of a turn found, until taken. A turn runs its
    tool calls one after the other, so each search's are taken before the next."""

    def __init__(self) -> None:
        self._found: list[RecalledConversation] = []

    def record(self, found: list[RecalledConversation]) -> None:
        self._found = found

    def take(self) -> list[RecalledConversation]:
        found, self._found = self._found, []
        return found


class SearchFailed(Exception):
    """Storage did not give what a search needs: the search was not made."""


async def search_sessions(
    store: ObjectStore,
    *,
    user_id: str,
    query: str,
    limit: int = DEFAULT_RESULTS,
    exclude_thread: str | None = None,
) -> tuple[list[RecallHit], SearchCounts]:
    """The person's best-matching past sessions, best first, recent first on ties.

    Raises whatever storage raises when the index cannot be read, and `SearchFailed` when
    none of the best matches' summaries could be."""
    counts = SearchCounts()
    stored = await read_search_index(store, user_id)
    cutoff = cutoff_of(store)
    content = stored.content if stored is not None else None
    # Up to 1.5 MB of JSON for a long history, and a hostile 40,000-character query:
    # parsing and ranking run off the event loop.
    index = await asyncio.to_thread(parse_search_index, content, cutoff=cutoff)
    if not index.complete:
        backfilled = await fill_in(store, user_id, stored, index)
        index, counts.backfilled = backfilled.index, backfilled.read
        counts.backfill_failed = backfilled.failed
    ranked = await asyncio.to_thread(_ranked, index, query, limit, exclude_thread)
    counts.indexed = len(index) - (exclude_thread in index.threads)
    hits = await asyncio.gather(*(_hit(store, user_id, r, counts) for r in ranked))
    if ranked and counts.failed == len(ranked):
        raise SearchFailed(f"{counts.failed} summaries could not be read")
    return [hit for hit in hits if hit is not None], counts


def _ranked(index: SearchIndex, query: str, limit: int, exclude: str | None) -> list[Ranked]:
    return rank(index, query_terms(query[:MAX_QUERY_CHARS]), limit, exclude=exclude)


async def _hit(
    store: ObjectStore, user_id: str, ranked: Ranked, counts: SearchCounts
) -> RecallHit | None:
    thread = ranked.document.thread_ts
    try:
        # Beside the summary, the thread's record: a thread it gives someone else is not
        # the person's, whatever their index says (one written before records were kept).
        stored, record = await asyncio.gather(
            store.read(session_context_key(thread)), read_conversation(store, thread)
        )
    except Exception as exc:
        counts.failed += 1
        log.warning("tool.recall.read_failed", error=type(exc).__name__, exc_info=exc)
        return None
    if whose(record, user_id) is False:
        counts.not_theirs += 1
        log.warning("tool.recall.not_theirs")
        return None
    if stored is None:
        counts.missing += 1  # expired or forgotten since the index was written
        return None
    counts.read += 1
    updated = datetime.fromtimestamp(ranked.document.updated, UTC)
    return RecallHit(thread, updated, parse_summary(stored.content), ranked.score)


def render_hits(query: str, hits: list[RecallHit], *, searched: int, unreadable: int = 0) -> str:
    """`searched`: how many conversations the index holds (besides the current one);
    `unreadable`: how many summaries could not be read just now (never "nothing")."""
    note = (
        f"\n\n({unreadable} earlier conversation(s) could not be read just now and were not "
        "searched: say so rather than that nothing exists.)"
        if unreadable
        else ""
    )
    if searched == 0 and not unreadable:
        return "There are no summaries of earlier conversations with this person yet."
    if not hits:
        return f'No earlier conversation with this person matches "{query}".{note}'
    heading = (
        f'Earlier conversations with this person matching "{query}", best match first:'
        if query.strip()
        else "This person's most recent earlier conversations, newest first:"
    )
    parts = [heading]
    for number, hit in enumerate(hits, start=1):
        body = hit.summary.body
        if len(body) > EXCERPT_CHARS:
            body = body[: EXCERPT_CHARS - 1].rstrip() + "…"
        date = hit.updated.strftime("%Y-%m-%d")
        parts.append(
            f"{number}. {hit.summary.title} (last updated {date}, thread {hit.thread_ts})\n{body}"
        )
    return "\n\n".join(parts) + note


class RecallTool(BetaAsyncBuiltinFunctionTool):
    """Search the turn's own user's past session summaries."""

    def __init__(
        self, store: ObjectStore, scope: MemoryScope, *, log: RecallLog | None = None
    ) -> None:
        self.store = store
        self.scope = scope
        self.log = log

    def to_dict(self) -> BetaToolParam:
        return {
            "name": RECALL_TOOL_NAME,
            "description": DESCRIPTION,
            "input_schema": {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "The topic, e.g. 'Q3 budget' or '予算会議'.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "description": f"How many conversations to return (default "
                        f"{DEFAULT_RESULTS}).",
                    },
                },
                "required": ["query"],
            },
        }

    async def call(self, input: object) -> str:
        query, limit = _parse_input(input)
        started = time.perf_counter()
        with tracing.observe(
            "tool.recall",
            as_type="tool",
            input={"query_chars": len(query), "limit": limit},
        ) as span:
            # Where each conversation is: read beside the search, only to show the person.
            channels = asyncio.ensure_future(self._channels()) if self.log is not None else None
            try:
                hits, counts = await search_sessions(
                    self.store,
                    user_id=self.scope.user_id,
                    query=query,
                    limit=limit,
                    exclude_thread=self.scope.thread_ts,
                )
            except Exception as exc:
                if channels is not None:
                    channels.cancel()
                log.warning("tool.recall.failed", error=type(exc).__name__, exc_info=exc)
                span.update(output={"failed": type(exc).__name__})
                raise ToolError(COULD_NOT_SEARCH) from exc
            if self.log is not None and channels is not None:
                where = await channels
                self.log.record(
                    [
                        RecalledConversation(h.thread_ts, h.summary.title, where.get(h.thread_ts))
                        for h in hits
                    ]
                )
            outcome = {
                "indexed": counts.indexed,
                "backfilled": counts.backfilled,
                "backfill_failed": counts.backfill_failed,
                "read": counts.read,
                "missing": counts.missing,
                "failed": counts.failed,
                "not_theirs": counts.not_theirs,
                "returned": len(hits),
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            }
            span.update(output=outcome)
            log.info("tool.recall", **outcome)
            return render_hits(query, hits, searched=counts.indexed, unreadable=counts.unreadable)

    async def _channels(self) -> dict[str, str]:
        """Each of the person's conversations' DM, from their own conversation index (only
        Orion writes it); empty when it cannot be read: the search goes on regardless."""
        try:
            entries = await read_index(self.store, self.scope.user_id)
        except Exception as exc:
            log.warning("tool.recall.channels_unavailable", error=type(exc).__name__, exc_info=exc)
            return {}
        return {e.thread_ts: e.channel for e in entries if e.channel}


def _parse_input(input: object) -> tuple[str, int]:
    if not isinstance(input, Mapping):
        raise ToolError("The recall tool expects an object with a `query` string.")
    query: Any = input.get("query", "")
    limit: Any = input.get("limit", DEFAULT_RESULTS)
    if not isinstance(query, str):
        raise ToolError("`query` must be a string of keywords.")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
        raise ToolError(f"`limit` must be a whole number from 1 to {MAX_RESULTS}.")
    return query.strip()[:MAX_QUERY_CHARS], limit
