"""`recall` in a channel: a person's search (app/learning/recall.py) over this channel's index
and, in a public channel, those of the workspace's other public channels, each of their threads
returned only while Slack says its channel is still public (`still_public`); without an answer,
or on a guest's turn, only this channel's (docs/channels.md, "How each rule is held")."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from typing import Any

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool
from anthropic.types.beta import BetaToolParam

from app.learning.recall import LinkTo, Shown, recall, recall_tool_param
from app.memory.homes import Home, channel, workspace_channels_key
from app.memory.scopes import is_shared_channel_id, validate_channel
from app.memory.tolerant_json import load_json_object
from app.observability.audit import channel_scope
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
    "language the discussion was held in (one query per part of a question said in "
    "different threads, in `queries`); an empty query lists the most recent threads. "
    "Results are search results you can cite: each thread's title, dates, a link to it and "
    "the exchanges that match. `after` and `before` (YYYY-MM-DD) favour threads held in "
    "that time. Nobody's private conversations with you are ever searched."
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

PUBLIC = "public"


def public_channels(data: dict[str, Any]) -> list[tuple[str, int]]:
    """(channel, last updated) pairs of `workspace/channels.json`, newest first, as far as
    they are sound."""
    items = data.get(PUBLIC)
    found: dict[str, int] = {}
    for item in (items if isinstance(items, list) else [])[:MAX_PUBLIC_CHANNELS]:
        if (
            isinstance(item, list)
            and len(item) == 2
            and is_shared_channel_id(item[0])
            and type(item[1]) is int
            and item[0] not in found
        ):
            found[item[0]] = item[1]
    return sorted(found.items(), key=lambda pair: pair[1], reverse=True)


async def read_public_channels(store: ObjectStore) -> list[tuple[str, int]]:
    stored = await store.read(workspace_channels_key())
    return public_channels(load_json_object(stored.content if stored else None, what="workspace"))


async def note_channel_visibility(
    store: ObjectStore, channel_id: str, *, public: bool, now: datetime | None = None
) -> None:
    """A public channel is on the list (its time refreshed once a day); a private one is
    not. One read when nothing changes."""
    moment = int((now or datetime.now(UTC)).timestamp())
    key = workspace_channels_key()
    stored = await store.read(key)
    listed = dict(
        public_channels(load_json_object(stored.content if stored else None, what="workspace"))
    )
    if public and moment - listed.get(channel_id, 0) < _RELISTED_AFTER_S:
        return
    if not public and channel_id not in listed:
        return

    def changed(raw: str | None) -> str:
        data = load_json_object(raw, what="workspace")
        channels = dict(public_channels(data))
        if public:
            channels[channel_id] = moment
        else:
            channels.pop(channel_id, None)
        kept = sorted(channels.items(), key=lambda pair: pair[1], reverse=True)
        data[PUBLIC] = [list(pair) for pair in kept[:MAX_PUBLIC_CHANNELS]]
        return json.dumps(data)

    await update(store, key, changed, already_read=stored)


@dataclass(eq=False)
class ChannelRecallTool(BetaAsyncBuiltinFunctionTool):
    """Search the threads the turn's channel (and, public, the public channels) had."""

    store: ObjectStore
    scope: ChannelRecallScope
    _: KW_ONLY
    actor: str
    link: LinkTo | None = None
    message: str = ""  # as RecallTool's
    shown: dict[str, Shown] = field(default_factory=dict, init=False, repr=False)  # as RecallTool's

    def to_dict(self) -> BetaToolParam:
        public = (
            " and of the workspace's other public channels" if self.scope.reaches_others else ""
        )
        return recall_tool_param(DESCRIPTION.format(public=public))

    async def call(self, input: object) -> str | list[dict[str, Any]]:  # type: ignore[override]
        public = " and the public channels" if self.scope.reaches_others else ""
        return await recall(
            input,
            self.store,
            self._homes,
            exclude_thread=self.scope.thread_ts,
            shown=self.shown,
            audited=(channel_scope(self.scope.channel_id), self.actor),
            keep=self._still_public,
            link=self.link,
            among="in this channel" + public,
            message=self.message,
        )

    async def _homes(self) -> list[Home]:
        """The channel's, then (public) the other public channels', most active first."""
        others: list[str] = []
        if self.scope.reaches_others:
            listed = await read_public_channels(self.store)
            others = [c for c, _ in listed if c != self.scope.channel_id]
        return [channel(self.scope.channel_id), *(channel(c) for c in others[:MAX_OTHER_CHANNELS])]

    async def _still_public(self, found: list[Home]) -> set[Home]:
        """Of the other channels a search would show threads of, those Slack says are
        still public (none without an answer)."""
        if self.scope.still_public is None:
            return set()
        public = await self.scope.still_public([home.id for home in found])
        return {home for home in found if home.id in public}
