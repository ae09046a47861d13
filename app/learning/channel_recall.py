"""`recall` in a channel: what was said in this channel's earlier threads — and, in a
public channel, in the workspace's other public channels.

The scopes' rule: a **public** channel's threads may be recalled in any public channel
of the same workspace (its keys are the workspace's in distribution mode); a **private**
channel's only in that channel; nobody's DMs ever (a channel's search reads channel
indexes only, and a thread whose record is not that channel's is never returned).

The same shape as a person's `recall` (app/learning/recall.py), with a scope that decides
which indexes a search reads:

- **One index per channel**, `channel-records/{channel}/search.json`, in the format of a
  person's (app/learning/search_index.py: every message of each thread, its title and
  summary), written at each turn end with the thread's summary
  (`channel-records/{channel}/threads/{thread}.md`: app/learning/channel_summary.py).
- **The workspace's public channels** with an index, `channel-records/public.json`,
  newest first (at most MAX_PUBLIC_CHANNELS): a public channel's turn end puts it there,
  a private one's (a channel made private since) takes it out, and erasing the channel
  too. A search in a public channel reads its own index and those of the
  MAX_OTHER_CHANNELS most recently active other public channels, ranks each by itself
  (BM25 over its own entries), merges them by score, and reads the best `limit` threads'
  records, whose messages matching the question are the passages — each with its author
  — of one citable `search_result` per thread: at most 2 + MAX_OTHER_CHANNELS + `limit`
  storage reads (a thread without a transcript is read from its summary, one more).
- **Whether a channel is still public** is asked of Slack when a search would return
  one of its threads (`still_public`, from the turn: a channel made private, shared with
  another organisation or archived since its last turn is left out, and so is one in a
  workspace the turn's channel is not in), never taken from Orion's own list alone.
  Without an answer, only the channel's own threads are returned; a guest's turn (and
  one whose person Slack did not describe) has no `still_public`, and searches only its
  channel.

Whose threads are searched is fixed by the turn (the channel the mention came from,
whether Slack says it is public, and who asked); the model's input carries only the
question, how many results, and a time range.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool
from anthropic.tools import ToolError
from anthropic.types.beta import BetaToolParam

from app.learning.conversation_record import ConversationRecord
from app.learning.recall import (
    COULD_NOT_SEARCH,
    MAX_QUERY_CHARS,
    Found,
    LinkTo,
    RecallHit,
    parse_recall_input,
    read_hit,
    recall_tool_param,
    render_hits,
)
from app.learning.search_index import (
    MAX_TITLE_CHARS,
    SearchDocument,
    SearchIndex,
    parse_search_index,
    with_documents,
)
from app.learning.search_ranking import Ranked, TimeRange, rank
from app.learning.search_terms import query_terms
from app.memory.retention import cutoff_of
from app.memory.scopes import (
    channel_search_index_key,
    channel_summary_key,
    is_shared_channel_id,
    public_channels_key,
    validate_channel,
)
from app.memory.tolerant_json import load_json_object
from app.observability import tracing
from app.observability.audit import audit, channel_scope
from app.observability.logging import get_logger
from app.storage.store import ObjectStore, update

log = get_logger(__name__)

MAX_PUBLIC_CHANNELS = 500
# Other public channels one search reads the index of, the most recently active first.
MAX_OTHER_CHANNELS = 10
# The public list is rewritten only when a channel is new to it or its day changed.
_RELISTED_AFTER_S = 24 * 60 * 60

# Which of these channels are public now (not private, not shared with another
# organisation, not archived), as Slack says.
StillPublic = Callable[[Sequence[str]], Awaitable[set[str]]]

DESCRIPTION = (
    "Search earlier threads of this Slack channel{public}: every message said in them (who "
    "said it, and when), their titles and summaries. Use it when someone refers to "
    "something discussed or decided before ('what did we decide about the launch date?', "
    "'who owns billing?'). Pass the few words that would appear where it was said, in the "
    "language the discussion was held in; an empty query lists the most recent threads. "
    "Results are search results you can cite: each thread's title, dates, a link to it and "
    "the passages that match. `after` and `before` (YYYY-MM-DD) limit the search to threads "
    "held in that time. Nobody's private conversations with you are ever searched."
)


@dataclass(frozen=True)
class ChannelRecallScope:
    """Where one channel turn's searches look: the channel, and — public — the workspace's
    other public channels, each checked with `still_public` before it is returned."""

    channel_id: str
    thread_ts: str
    public: bool
    still_public: StillPublic | None = None

    def __post_init__(self) -> None:
        validate_channel(self.channel_id)

    @property
    def reaches_others(self) -> bool:
        """Whether searches look beyond the channel (a guest's, or an unchecked turn's,
        do not: `still_public` is None)."""
        return self.public and self.still_public is not None


# --- the workspace's public channels --------------------------------------------------


def parse_public_channels(raw: str | None) -> list[tuple[str, int]]:
    """(channel, last updated) pairs, newest first, as far as they are sound."""
    items = load_json_object(raw, what="public_channels").get("channels")
    found: dict[str, int] = {}
    for item in (items or [])[:MAX_PUBLIC_CHANNELS]:
        if (
            isinstance(item, list)
            and len(item) == 2
            and is_shared_channel_id(item[0])
            and type(item[1]) is int
            and item[0] not in found
        ):
            found[item[0]] = item[1]
    return sorted(found.items(), key=lambda pair: pair[1], reverse=True)


def _render_public(channels: list[tuple[str, int]]) -> str:
    kept = sorted(channels, key=lambda pair: pair[1], reverse=True)[:MAX_PUBLIC_CHANNELS]
    return json.dumps({"version": 1, "channels": [list(pair) for pair in kept]})


async def note_channel_visibility(
    store: ObjectStore, channel_id: str, *, public: bool, now: datetime | None = None
) -> None:
    """A public channel is on the list (its time refreshed once a day); a private one is
    not. One read when nothing changes."""
    moment = int((now or datetime.now(UTC)).timestamp())
    stored = await store.read(public_channels_key())
    listed = dict(parse_public_channels(stored.content if stored else None))
    if public and moment - listed.get(channel_id, 0) < _RELISTED_AFTER_S:
        return
    if not public and channel_id not in listed:
        return

    def changed(raw: str | None) -> str:
        channels = dict(parse_public_channels(raw))
        if public:
            channels[channel_id] = moment
        else:
            channels.pop(channel_id, None)
        return _render_public(list(channels.items()))

    await update(store, public_channels_key(), changed, already_read=stored)


async def forget_public_channel(store: ObjectStore, channel_id: str) -> None:
    await note_channel_visibility(store, channel_id, public=False)


# --- each channel's index -------------------------------------------------------------


async def record_channel_thread(
    store: ObjectStore, channel_id: str, document: SearchDocument, *, public: bool
) -> None:
    """The thread's entry in the channel's index (at turn end), and the channel's place
    on the public list."""
    cutoff = cutoff_of(store)
    await update(
        store,
        channel_search_index_key(channel_id),
        lambda raw: with_documents(raw, [document], cutoff=cutoff),
        attempts=10,
    )
    await note_channel_visibility(store, channel_id, public=public)


@dataclass
class ChannelSearchCounts:
    channels: int = 0
    indexed: int = 0
    read: int = 0
    missing: int = 0
    failed: int = 0
    not_public: int = 0  # another channel's threads Slack no longer says are public
    not_theirs: int = 0  # indexed, but the record is not that channel's
    reads: int = 0  # storage reads of the found threads


@dataclass(frozen=True)
class _Found:
    channel_id: str
    index: SearchIndex
    ranked: Ranked


async def search_channels(
    store: ObjectStore,
    scope: ChannelRecallScope,
    query: str,
    limit: int,
    *,
    within: TimeRange | None = None,
) -> tuple[list[RecallHit], ChannelSearchCounts]:
    """The best-matching threads of the channel (and, public, of other public channels
    Slack says are still public), best first. Raises what storage raises."""
    counts = ChannelSearchCounts()
    own = asyncio.ensure_future(store.read(channel_search_index_key(scope.channel_id)))
    others: list[str] = []
    if scope.reaches_others:
        listed = await store.read(public_channels_key())
        others = [
            channel
            for channel, _ in parse_public_channels(listed.content if listed else None)
            if channel != scope.channel_id
        ][:MAX_OTHER_CHANNELS]
    stored = await asyncio.gather(own, *(store.read(channel_search_index_key(c)) for c in others))
    channels = [scope.channel_id, *others]
    cutoff = cutoff_of(store)
    groups = query_terms(query[:MAX_QUERY_CHARS])
    found: list[_Found] = []
    for channel, raw in zip(channels, stored, strict=True):
        if raw is None:
            continue
        counts.channels += 1
        # Each index ranked on its own (BM25 by its own statistics), off the event loop.
        index = await asyncio.to_thread(parse_search_index, raw.content, cutoff=cutoff)
        exclude = scope.thread_ts if channel == scope.channel_id else None
        ranked = await asyncio.to_thread(rank, index, groups, limit, exclude=exclude, within=within)
        counts.indexed += len(index) - (exclude in index.threads)
        found += [_Found(channel, index, r) for r in ranked]
    found.sort(key=lambda f: (-f.ranked.score, -f.index.updated[f.ranked.at]))
    elsewhere = {f.channel_id for f in found} - {scope.channel_id}
    public = await _still_public(scope, sorted(elsewhere))
    chosen = []
    for hit in found:
        if hit.channel_id != scope.channel_id and hit.channel_id not in public:
            counts.not_public += 1
            continue
        chosen.append(hit)
    hits = await asyncio.gather(*(_hit(store, f, groups, counts) for f in chosen[:limit]))
    return [hit for hit in hits if hit is not None], counts


async def _still_public(scope: ChannelRecallScope, channels: list[str]) -> set[str]:
    if not channels or scope.still_public is None:
        return set()
    try:
        return await scope.still_public(channels)
    except Exception as exc:  # Slack could not say: other channels' threads are left out
        log.warning("tool.recall.visibility_unknown", error=type(exc).__name__, exc_info=exc)
        return set()


async def _hit(
    store: ObjectStore, found: _Found, groups: list[tuple[str, ...]], counts: ChannelSearchCounts
) -> RecallHit | None:
    """The thread's passages, each with its author; None when its record is not that
    channel's."""
    channel, index, at = found.channel_id, found.index, found.ranked.at

    def belongs(record: ConversationRecord | None) -> bool:
        owner = record.owner if record is not None else None
        return owner is not None and owner.in_channel and owner.channel == channel

    return await read_hit(
        store,
        Found(
            found.ranked.thread_ts,
            channel,
            index.titles[at][:MAX_TITLE_CHARS] or "Untitled thread",
            index.started[at],
            index.updated[at],
            found.ranked.score,
        ),
        groups,
        counts,
        belongs=belongs,
        summary_key=channel_summary_key(channel, found.ranked.thread_ts),
    )


class ChannelRecallTool(BetaAsyncBuiltinFunctionTool):
    """Search the threads the turn's channel (and, public, the public channels) had."""

    def __init__(
        self,
        store: ObjectStore,
        scope: ChannelRecallScope,
        *,
        actor: str,
        link: LinkTo | None = None,
    ) -> None:
        self.store = store
        self.scope = scope
        self.actor = actor
        self.link = link

    def to_dict(self) -> BetaToolParam:
        public = (
            " and of the workspace's other public channels" if self.scope.reaches_others else ""
        )
        return recall_tool_param(DESCRIPTION.format(public=public))

    async def call(self, input: object) -> str | list[dict[str, Any]]:  # type: ignore[override]
        query, limit, within = parse_recall_input(input)
        started = time.perf_counter()
        with tracing.observe(
            "tool.recall", as_type="tool", input={"query_chars": len(query), "limit": limit}
        ) as span:
            try:
                hits, counts = await search_channels(
                    self.store, self.scope, query, limit, within=within
                )
            except Exception as exc:
                log.warning("tool.recall.failed", error=type(exc).__name__, exc_info=exc)
                span.update(output={"failed": type(exc).__name__})
                raise ToolError(COULD_NOT_SEARCH) from exc
            outcome: dict[str, Any] = {
                "channels": counts.channels,
                "indexed": counts.indexed,
                "read": counts.read,
                "missing": counts.missing,
                "failed": counts.failed,
                "not_public": counts.not_public,
                "not_theirs": counts.not_theirs,
                "returned": len(hits),
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            }
            span.update(output=outcome)
            log.info("tool.recall", **outcome)
            audit(
                "recall",
                scope=channel_scope(self.scope.channel_id),
                actor=self.actor,
                returned=len(hits),
                from_channels=sorted({h.channel for h in hits if h.channel}),
            )
            return render_hits(
                query,
                hits,
                searched=counts.indexed,
                unreadable=counts.failed,
                within=within,
                link=self.link,
                among="in this channel"
                + (" and the public channels" if self.scope.reaches_others else ""),
            )
