"""`recall`: Claude's way to look through the current person's past conversations.

"What did we discuss about the Q3 budget last week?" is answered from the session
summaries the after-turn step writes. The tool searches only the sessions listed in the
person's own conversation index (Orion's record, which only Orion writes:
app/learning/session_index.py), reads at most the newest `MAX_SCANNED` of them, and
returns the best keyword matches with their titles and dates.

Whose sessions are searched is fixed when the tool is built, from the turn's scope; the
model's input carries only the query.

Conversations older than the retention window are not recalled: the store reads their
summaries as absent (app/memory/retention.py), so their index entries find nothing, and
a person whose every conversation has expired is told there is nothing to search.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool
from anthropic.tools import ToolError
from anthropic.types.beta import BetaToolParam

from app.learning.session_index import SessionEntry, read_index
from app.learning.summary_file import MAX_SUMMARY_CHARS, SessionSummary, parse_summary
from app.memory.scopes import MemoryScope, session_context_key
from app.observability import tracing
from app.observability.logging import get_logger
from app.storage.store import ObjectStore

log = get_logger(__name__)

RECALL_TOOL_NAME = "recall"
DEFAULT_RESULTS = 5
MAX_RESULTS = 10
# Newest sessions read per search: bounds the cost for people with long histories.
MAX_SCANNED = 50
READ_CONCURRENCY = 8
EXCERPT_CHARS = 600
MAX_QUERY_CHARS = 500
# A topic is a few words: more would only multiply the searches.
MAX_KEYWORDS = 10
# Orion's summaries are at most MAX_SUMMARY_CHARS; one edited by hand or with the memory
# tool is searched in its first characters only.
MAX_SEARCHED_CHARS = 2 * MAX_SUMMARY_CHARS

# Words that say "search my past" rather than what to search for.
_STOPWORD_TEXT = """
    a about again ago all an and any anything are as at be been before but by can could
    conversation conversations did discuss discussed discussing discussion do does earlier
    for from had has have how i in into is it its last me month my of on or our past
    previous recall remember said say session sessions should something talk talked
    talking tell that the there this those time to today us was we week were what when
    where which who why with would year yesterday you your"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'-]*")

DESCRIPTION = (
    "Search summaries of your earlier conversations with the person you are talking to "
    "(other Slack threads, newest first on ties). Use it when they refer to something "
    "discussed before ('what did we decide about the Q3 budget?', 'recap our last "
    "conversation'). Pass the topic as keywords; an empty topic lists the most recent "
    "conversations. Results give each conversation's title, date and summary. Only this "
    "person's own conversations are ever searched."
)


@dataclass(frozen=True)
class RecallHit:
    entry: SessionEntry
    summary: SessionSummary
    score: int


@dataclass
class SearchCounts:
    indexed: int = 0
    read: int = 0
    missing: int = 0
    failed: int = 0


def keywords(query: str) -> list[str]:
    """The words worth matching, in order, without duplicates or filler."""
    found: list[str] = []
    for token in _TOKEN.findall(query.lower()):
        token = token.strip("'-")
        if token in _STOPWORDS or token in found:
            continue
        if len(token) >= 3 or any(ch.isdigit() for ch in token):
            found.append(token)
            if len(found) == MAX_KEYWORDS:
                break
    return found


def score(summary: SessionSummary, words: list[str]) -> int:
    """Distinct keywords found (as word beginnings: 'budget' finds 'budgets'); a keyword in
    the title counts twice."""
    title = summary.title[:MAX_SEARCHED_CHARS].lower()
    body = summary.body[:MAX_SEARCHED_CHARS].lower()
    total = 0
    for word in words:
        # The word first and the look back after it (no letter or digit before the word):
        # a pattern that starts with a literal is searched for as quickly as str.find.
        literal = re.escape(word)
        pattern = re.compile(rf"{literal}(?<![a-z0-9]{literal})")
        if pattern.search(title):
            total += 2
        elif pattern.search(body):
            total += 1
    return total


async def search_sessions(
    store: ObjectStore,
    *,
    user_id: str,
    query: str,
    limit: int = DEFAULT_RESULTS,
    exclude_thread: str | None = None,
) -> tuple[list[RecallHit], SearchCounts]:
    """The person's best-matching past sessions, best first, recent first on ties."""
    counts = SearchCounts()
    entries = [e for e in await read_index(store, user_id) if e.thread_ts != exclude_thread]
    counts.indexed = len(entries)
    entries = entries[:MAX_SCANNED]
    gate = asyncio.Semaphore(READ_CONCURRENCY)

    async def load(entry: SessionEntry) -> SessionSummary | None:
        async with gate:
            try:
                stored = await store.read(session_context_key(entry.thread_ts))
            except Exception as exc:
                counts.failed += 1
                log.warning("tool.recall.read_failed", error=type(exc).__name__, exc_info=exc)
                return None
        if stored is None:
            counts.missing += 1
            return None
        counts.read += 1
        return parse_summary(stored.content)

    summaries = await asyncio.gather(*(load(entry) for entry in entries))
    found = [(e, s) for e, s in zip(entries, summaries, strict=True) if s is not None]
    # Up to MAX_KEYWORDS searches in each of MAX_SCANNED summaries: off the event loop.
    return await asyncio.to_thread(_best, found, keywords(query), limit), counts


def _best(
    found: list[tuple[SessionEntry, SessionSummary]], words: list[str], limit: int
) -> list[RecallHit]:
    hits = [RecallHit(entry, summary, score(summary, words)) for entry, summary in found]
    if words:
        hits = [hit for hit in hits if hit.score > 0]
    # Entries are newest first and the sort is stable: ties stay recent first.
    hits.sort(key=lambda hit: hit.score, reverse=True)
    return hits[:limit]


def render_hits(query: str, hits: list[RecallHit], *, searched: int) -> str:
    if searched == 0:
        return "There are no summaries of earlier conversations with this person yet."
    if not hits:
        return f'No earlier conversation with this person matches "{query}".'
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
        date = hit.entry.updated.strftime("%Y-%m-%d")
        parts.append(
            f"{number}. {hit.summary.title} (last updated {date}, thread {hit.entry.thread_ts})\n"
            f"{body}"
        )
    return "\n\n".join(parts)


class RecallTool(BetaAsyncBuiltinFunctionTool):
    """Search the turn's own user's past session summaries."""

    def __init__(self, store: ObjectStore, scope: MemoryScope) -> None:
        self.store = store
        self.scope = scope

    def to_dict(self) -> BetaToolParam:
        return {
            "name": RECALL_TOOL_NAME,
            "description": DESCRIPTION,
            "input_schema": {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "Keywords for the topic, e.g. 'Q3 budget'.",
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
            input={"query_chars": len(query), "keywords": len(keywords(query)), "limit": limit},
        ) as span:
            hits, counts = await search_sessions(
                self.store,
                user_id=self.scope.user_id,
                query=query,
                limit=limit,
                exclude_thread=self.scope.thread_ts,
            )
            outcome = {
                "indexed": counts.indexed,
                "read": counts.read,
                "missing": counts.missing,
                "failed": counts.failed,
                "returned": len(hits),
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            }
            span.update(output=outcome)
            log.info("tool.recall", **outcome)
            # Searched: the summaries that are there (gone or expired ones are not).
            return render_hits(query, hits, searched=counts.read + counts.failed)


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
