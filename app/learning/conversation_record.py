"""One conversation (owner, transcript, summary) as one object in its owner's home, read once as a
turn begins, written once as it ends (docs/architecture.md, "Two records")."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from app.learning.profile import ConversationEntry
from app.learning.quoting import is_bot_id
from app.learning.summary_file import UNTITLED, Summary
from app.learning.timestamps import format_time, parse_time
from app.memory.homes import Home, OwnerKind, channel, person
from app.memory.scopes import (
    is_channel_id,
    is_shared_channel_id,
    is_thread_ts,
    is_user_id,
    validate_thread_ts,
    validate_user_id,
)
from app.memory.tolerant_json import load_json_object
from app.observability.redaction import redact_secret_shapes
from app.storage.team_scope import is_slack_team_id

Role = Literal["user", "assistant"]

VERSION = 2
# As much of one message as the history shows Claude (app/agent/history.py trims there;
# the most its MAX_MESSAGE_TOKENS can hold), and as a transcript keeps it.
MAX_MESSAGE_CHARS = 12_000
# Several times what one turn's history holds (30 messages, 40,000 characters): room for
# a search over the whole conversation, and a bound on what each message's read costs.
MAX_MESSAGES = 200
MAX_TRANSCRIPT_CHARS = 120_000
# What a message becomes when its redacted text cannot be stored as it is (redaction of
# the encoded record would change it again): nothing of it is kept.
WITHHELD = "[This message is not kept: it held something shaped like a secret.]"
# Who opened a channel's conversation once they asked to be forgotten: nobody is named.
NOBODY = ""


@dataclass(frozen=True)
class ConversationOwner:
    """Whose the conversation is: from Slack's signed event, never from anything a person
    or Claude writes. A person's (their DM), or a channel's (`kind == "channel"`: `user`
    is then who opened it, for the record — NOBODY once they were forgotten)."""

    user: str
    channel: str
    team: str | None = None
    enterprise: str | None = None
    kind: OwnerKind = "person"

    def __post_init__(self) -> None:
        if not (self.kind == "channel" and self.user == NOBODY):
            validate_user_id(self.user)
        if not is_channel_id(self.channel):
            raise ValueError("not a Slack channel id")
        if self.kind not in ("person", "channel"):
            raise ValueError("not a kind of conversation")
        if self.in_channel and not is_shared_channel_id(self.channel):
            raise ValueError("a DM is never a channel's conversation")

    @property
    def in_channel(self) -> bool:
        return self.kind == "channel"

    @property
    def home(self) -> Home:
        """Whose home the conversation lives in: the channel's, or the person's."""
        return channel(self.channel) if self.in_channel else person(self.user)

    def may_continue(self, owner: ConversationOwner) -> bool:
        """Whether `self` (an event's ids) may continue `owner`'s conversation: the same kind,
        person and DM, or the same channel. Teams are not compared: keys are already the
        workspace's."""
        if self.kind != owner.kind:
            return False
        if self.in_channel:
            return self.channel == owner.channel
        return (self.user, self.channel) == (owner.user, owner.channel)

    def to_json(self) -> dict[str, str | None]:
        return {
            "kind": self.kind,
            "team": self.team,
            "enterprise": self.enterprise,
            "channel": self.channel,
            "user": self.user or None,
        }

    @staticmethod
    def parse(data: object) -> ConversationOwner | None:
        if not isinstance(data, dict):
            return None
        kind, user = data.get("kind", "person"), data.get("user")  # no kind: from before channels
        if user is None and kind == "channel":
            user = NOBODY
        return _owner(user, data.get("channel"), data.get("team"), data.get("enterprise"), kind)


def owner_of_event(
    user: str | None,
    channel: str | None,
    team: str | None,
    enterprise: str | None,
    *,
    kind: OwnerKind = "person",
) -> ConversationOwner | None:
    """The owner an event's ids make, or None when they are not Slack's shapes."""
    return _owner(user, channel, team, enterprise, kind) if user and channel else None


def _owner(
    user: Any, channel: Any, team: Any, enterprise: Any, kind: Any
) -> ConversationOwner | None:
    """The owner these ids make (validated), or None."""
    try:
        return ConversationOwner(user, channel, _team_id(team), _team_id(enterprise), kind)
    except ValueError:
        return None


@dataclass(frozen=True)
class TranscriptMessage:
    role: Role
    text: str
    at: datetime  # when it was said (UTC)
    ts: str | None = None  # its Slack ts, where Slack gave one
    cut: bool = False  # longer than MAX_MESSAGE_CHARS: the rest is not kept
    # Who wrote it, in a channel's conversation (a DM's user messages are its person's).
    user: str | None = None
    # Or, not a person: the Slack bot id of the app or integration (a webhook, a workflow:
    # `integration`) that posted it.
    bot: str | None = None
    integration: bool = False

    @property
    def sent_at(self) -> float:
        """Seconds since the epoch (what history and `said_after` compare)."""
        return self.at.timestamp()

    def to_json(self) -> dict[str, Any]:
        # The text last: a secret's label at a text's end is then followed by nothing
        # the store's redaction could take for its value.
        item: dict[str, Any] = {"role": self.role, "ts": self.ts, "at": format_time(self.at)}
        if self.user is not None:
            item["user"] = self.user
        if self.bot is not None:
            item["bot"] = self.bot
            item["integration"] = self.integration
        if self.cut:
            item["cut"] = True
        item["text"] = self.text
        return item

    @staticmethod
    def parse(item: object) -> TranscriptMessage | None:
        if not isinstance(item, dict):
            return None
        role, text, moment = item.get("role"), item.get("text"), parse_time(item.get("at"))
        if role not in ("user", "assistant") or not isinstance(text, str) or moment is None:
            return None
        ts, user, bot = item.get("ts"), item.get("user"), item.get("bot")
        return TranscriptMessage(
            role,
            text[:MAX_MESSAGE_CHARS],
            moment,
            ts if is_thread_ts(ts) else None,
            item.get("cut") is True or len(text) > MAX_MESSAGE_CHARS,
            user if is_user_id(user) else None,
            bot if is_bot_id(bot) else None,
            item.get("integration") is True,
        )


def said(
    role: Role,
    text: str,
    *,
    at: datetime,
    ts: str | None = None,
    user: str | None = None,
    bot: str | None = None,
    integration: bool = False,
) -> TranscriptMessage:
    """A message as the transcript keeps it: cut to its bound, its secrets redacted; `user`: its
    author, in a channel's conversation — or `bot`, the app or integration that posted it."""
    cut = len(text) > MAX_MESSAGE_CHARS
    posted_by = bot if is_bot_id(bot) else None
    return TranscriptMessage(
        role,
        storable(text[:MAX_MESSAGE_CHARS]),
        at,
        ts if is_thread_ts(ts) else None,
        cut,
        user if is_user_id(user) and posted_by is None else None,
        posted_by,
        integration and posted_by is not None,
    )


def moment_of(ts: str | None) -> datetime:
    """When a Slack ts was (now, for a ts that is not one)."""
    if ts is None or not is_thread_ts(ts):
        return datetime.now(UTC)
    try:
        return datetime.fromtimestamp(float(ts), UTC)
    except (OverflowError, ValueError, OSError):
        return datetime.now(UTC)


def storable(text: str) -> str:
    """`text` with its secrets redacted, also as the store's redaction of the encoded record will
    see it (JSON's two-character escapes can make a label and the next line a label and its value),
    until nothing changes."""
    text = redact_secret_shapes(text)
    for _ in range(3):
        encoded = json.dumps(text, ensure_ascii=False)
        again = redact_secret_shapes(encoded)
        if again == encoded:
            return text
        try:
            decoded = json.loads(again)
        except ValueError:
            break
        if not isinstance(decoded, str):
            break
        text = decoded
    return WITHHELD


MAX_CONTEXT_CHARS = 2_000  # Slack's thread context: a few ids


@dataclass(frozen=True)
class ConversationRecord:
    thread_ts: str
    owner: ConversationOwner
    started: datetime
    messages: tuple[TranscriptMessage, ...] = ()
    dropped: int = 0  # messages left out between the opening and the newest
    summary: Summary | None = None
    context: dict[str, Any] | None = None  # Slack's thread context (assistant_view)

    def __post_init__(self) -> None:
        validate_thread_ts(self.thread_ts)

    def with_messages(self, new: Iterable[TranscriptMessage]) -> ConversationRecord:
        """The record with `new` added after what it holds, in the order they were
        written (a message already kept, by its Slack ts, is not added twice), within the
        transcript's bounds."""
        kept = {m.ts for m in self.messages if m.ts is not None}
        added = [m for m in new if m.ts is None or m.ts not in kept]
        if not added:
            return self
        messages, dropped = _bounded([*self.messages, *added])
        return replace(self, messages=messages, dropped=self.dropped + dropped)

    def with_summary(self, summary: Summary | None) -> ConversationRecord:
        """The record with `summary`, unless it is older than the one it holds."""
        if summary is None or (self.summary is not None and summary.updated < self.summary.updated):
            return self
        return replace(self, summary=summary)

    def with_context(self, context: dict[str, Any]) -> ConversationRecord:
        return replace(self, context=context)

    def listed_as(self) -> ConversationEntry:
        """How its owner's profile lists it: by its summary's title, as of its last word."""
        title = self.summary.title if self.summary else UNTITLED
        updated = max((m.at for m in self.messages), default=self.started)
        return ConversationEntry(self.thread_ts, title, updated, self.owner.channel)

    def without(self, ts: str) -> ConversationRecord:
        """The record without the message Slack knows as `ts` (one Claude refused to
        answer: kept, it would have the next turns refused too)."""
        return replace(self, messages=tuple(m for m in self.messages if m.ts != ts))

    def without_author(self, user_id: str) -> ConversationRecord:
        """The record without what `user_id` wrote in it, nor their id (a channel's conversation,
        when they ask to be forgotten): everyone else's messages and Orion's answers stay."""
        owner = self.owner
        if owner.in_channel and owner.user == user_id:
            owner = replace(owner, user=NOBODY)
        messages = tuple(m for m in self.messages if m.user != user_id)
        return replace(self, owner=owner, messages=messages)

    @property
    def authors(self) -> set[str]:
        """Who wrote the messages the transcript holds."""
        return {m.user for m in self.messages if m.user is not None}

    def render(self) -> str:
        data: dict[str, Any] = {
            "version": VERSION,
            "thread": self.thread_ts,
            "owner": self.owner.to_json(),
            "started": format_time(self.started),
        }
        if self.context:
            data["context"] = self.context
        if self.summary is not None:
            data["summary"] = self.summary.to_json()
        data["dropped"] = self.dropped
        data["messages"] = [m.to_json() for m in self.messages]
        return json.dumps(data, ensure_ascii=False)

    @staticmethod
    def parse(content: str | None) -> ConversationRecord | None:
        """The record; None when it cannot be read (logged: tolerant_json.py) or names no
        owner. Messages that cannot be read are skipped, the rest kept in order."""
        data = load_json_object(content, what="conversation_record")
        owner = ConversationOwner.parse(data.get("owner"))
        thread, moment = data.get("thread"), parse_time(data.get("started"))
        if owner is None or not is_thread_ts(thread) or moment is None:
            return None
        items = data.get("messages")
        parsed = [TranscriptMessage.parse(item) for item in (items or [])[:MAX_MESSAGES]]
        dropped, context = data.get("dropped"), data.get("context")
        return ConversationRecord(
            str(thread),
            owner,
            moment,
            tuple(m for m in parsed if m is not None),
            dropped if isinstance(dropped, int) and dropped >= 0 else 0,
            Summary.parse(data.get("summary")),
            thread_context(context),
        )


def thread_context(context: object) -> dict[str, Any] | None:
    """Slack's thread context as kept: a small JSON object of strings, else None."""
    if not isinstance(context, dict):
        return None
    kept = {k: v for k, v in context.items() if isinstance(k, str) and isinstance(v, str)}
    if not kept or len(json.dumps(kept)) > MAX_CONTEXT_CHARS:
        return None
    return kept


def _bounded(messages: Sequence[TranscriptMessage]) -> tuple[tuple[TranscriptMessage, ...], int]:
    """The messages within the bounds; past them, the person's opening message (what the
    conversation is about) and the newest that fit; how many were left out."""
    if len(messages) <= MAX_MESSAGES and sum(len(m.text) for m in messages) <= MAX_TRANSCRIPT_CHARS:
        return tuple(messages), 0
    start = next((n for n, m in enumerate(messages) if m.role == "user"), 0)
    opening, rest = messages[start], messages[start + 1 :]
    room = MAX_TRANSCRIPT_CHARS - len(opening.text)
    kept: list[TranscriptMessage] = []
    for message in reversed(rest):
        if len(kept) >= MAX_MESSAGES - 1 or (len(message.text) > room and kept):
            break
        kept.append(message)
        room -= len(message.text)
    kept.reverse()
    return (opening, *kept), len(messages) - 1 - len(kept)


def _team_id(value: object) -> str | None:
    return value if isinstance(value, str) and is_slack_team_id(value) else None
