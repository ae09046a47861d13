"""Whose each conversation is (looked for only in the home the event's signed ids name), and what
a turn adds to it, in one update as the answer ends (docs/architecture.md, "How an event flows")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from app.learning.conversation_record import (
    ConversationOwner,
    ConversationRecord,
    Summary,
    TranscriptMessage,
)
from app.memory.homes import Home
from app.observability.logging import get_logger
from app.storage.store import (
    CREATE_ONLY,
    ObjectStore,
    PreconditionFailed,
    StoredObject,
    update,
)

log = get_logger(__name__)


class Standing(StrEnum):
    """Where an event stands with the thread it names."""

    OWN = "own"  # the owner's conversation: its transcript is the history
    NEW = "new"  # nothing is kept for it in the owner's home yet
    NOT_YOURS = "not_yours"  # another DM's, or another kind's: nothing of it is used


@dataclass(frozen=True)
class OpenedConversation:
    standing: Standing
    stored: StoredObject | None = None  # the object as read (None: there was none)
    record: ConversationRecord | None = None

    @property
    def allowed(self) -> bool:
        return self.standing is not Standing.NOT_YOURS

    @property
    def transcript(self) -> tuple[TranscriptMessage, ...]:
        return self.record.messages if self.record is not None else ()


# What of some messages may be kept (app/learning/erasure.py `said_since_erasure`).
Check = Callable[[Sequence[TranscriptMessage]], Awaitable[list[TranscriptMessage]]]


class NotYourConversation(Exception):
    """The record names another DM, or another kind of conversation: nothing was written."""


def opened_from(stored: StoredObject | None, owner: ConversationOwner) -> OpenedConversation:
    if stored is None:
        return OpenedConversation(Standing.NEW)
    record = ConversationRecord.parse(stored.content)
    if record is None:
        # In the event's own home, an object that cannot be read is nobody else's: the
        # conversation starts afresh, and its first write replaces that object.
        log.warning("memory.conversation.unreadable")
        return OpenedConversation(Standing.NEW, stored)
    standing = Standing.OWN if owner.may_continue(record.owner) else Standing.NOT_YOURS
    return OpenedConversation(standing, stored, record)


async def begin_conversation(
    store: ObjectStore,
    owner: ConversationOwner,
    thread_ts: str,
    *,
    started: datetime,
    context: dict[str, Any] | None = None,
) -> int | None:
    """Record `owner`'s conversation as a thread starts, with Slack's `context` of it: the
    generation written, or None when it was recorded already (another delivery of the same
    start got there first). Raises what storage raises."""
    record = ConversationRecord(thread_ts, owner, started, context=context or None)
    try:
        return await store.write(
            owner.home.conversation_key(thread_ts), record.render(), if_generation=CREATE_ONLY
        )
    except PreconditionFailed:
        return None


async def change_conversation(
    store: ObjectStore,
    home: Home,
    thread_ts: str,
    change: Callable[[ConversationRecord], ConversationRecord],
) -> StoredObject | None:
    """The conversation changed (None when it is gone or unreadable: nothing written)."""

    def changed(current: str | None) -> str | None:
        record = ConversationRecord.parse(current) if current is not None else None
        return change(record).render() if record is not None else current

    return await update(store, home.conversation_key(thread_ts), changed)


class TurnTranscript:
    """What one turn adds to its conversation: kept as the turn goes, written once."""

    def __init__(
        self,
        store: ObjectStore,
        owner: ConversationOwner,
        thread_ts: str,
        opened: OpenedConversation,
        *,
        summary: Summary | None = None,
    ) -> None:
        """`summary`: the conversation's freshest when it was opened, written with it."""
        if not opened.allowed:
            raise NotYourConversation(thread_ts)
        self._store = store
        self._owner = owner
        self._thread_ts = thread_ts
        self._read = opened.stored
        self._summary = summary
        self._pending: list[TranscriptMessage] = []
        self._written: StoredObject | None = None
        self._writing: asyncio.Future[StoredObject | None] | None = None
        self._checks: list[tuple[int, asyncio.Future[list[TranscriptMessage]]]] = []

    @property
    def home(self) -> Home:
        return self._owner.home

    @property
    def authors(self) -> set[str]:
        """Who wrote the messages this turn adds (a channel's conversation)."""
        return {m.user for m in self._pending if m.user is not None}

    def add(self, *messages: TranscriptMessage) -> None:
        """Messages to write (until the write has begun)."""
        if self._writing is None:
            self._pending.extend(messages)

    def add_checked(self, messages: Sequence[TranscriptMessage], check: Check) -> None:
        """Messages to write, as far as `check` keeps them (it runs now, beside the
        answer; the write waits for it). Unchecked, none of them is kept."""
        at = len(self._pending)
        self._checks.append((at, asyncio.ensure_future(check(messages))))

    def take_back(self, ts: str) -> None:
        """A message not to write after all (a question Claude refused to answer)."""
        self._pending = [m for m in self._pending if m.ts != ts]

    def write(self, summary: Summary | None = None) -> asyncio.Future[StoredObject | None]:
        """Write what the turn added, once (later calls share the first write), with `summary` (else
        the one it was opened with) when it is newer than the conversation's. Never raises: a write
        that storage refuses is logged, and the next turn goes on with what is kept."""
        if self._writing is None:
            self._writing = asyncio.ensure_future(self._write(summary or self._summary))
        return self._writing

    async def _write(self, summary: Summary | None) -> StoredObject | None:
        for at, check in reversed(self._checks):
            try:
                kept = await check
            except Exception as exc:  # unchecked, nothing of it is kept
                log.warning("memory.transcript.check_failed", exc_info=exc)
                kept = []
            self._pending[at:at] = kept
        if not self._pending and self._read is not None:
            return self._read
        owner, thread_ts, messages = self._owner, self._thread_ts, tuple(self._pending)

        def changed(current: str | None) -> str:
            record = ConversationRecord.parse(current) if current is not None else None
            if record is None:  # none yet, or one that cannot be read (opened_from)
                record = ConversationRecord(thread_ts, owner, _started(messages))
            elif not owner.may_continue(record.owner):
                raise NotYourConversation(thread_ts)
            return record.with_messages(messages).with_summary(summary).render()

        try:
            self._written = await update(
                self._store,
                owner.home.conversation_key(thread_ts),
                changed,
                already_read=self._read,
            )
        except NotYourConversation:
            log.warning("memory.transcript.refused", reason="another conversation's thread")
        except Exception as exc:
            log.warning("memory.transcript.write_failed", exc_info=exc)
        else:
            log.debug("memory.transcript.write", messages=len(messages))
        return self._written

    async def written(self) -> StoredObject | None:
        """The conversation as this turn wrote it (None: nothing written)."""
        return await self._writing if self._writing is not None else None

    def messages(self) -> tuple[TranscriptMessage, ...] | None:
        """The conversation as this turn last wrote or read it (once written): what the
        turn end indexes for `recall`; None when Orion keeps none of it."""
        known = self._written or self._read
        record = ConversationRecord.parse(known.content) if known is not None else None
        return record.messages if record is not None else None


def _started(messages: Sequence[TranscriptMessage]) -> datetime:
    return min((m.at for m in messages), default=datetime.now(UTC))


async def read_conversation(
    store: ObjectStore, home: Home, thread_ts: str
) -> ConversationRecord | None:
    """The owner's conversation; None when there is none or it cannot be read."""
    stored = await store.read(home.conversation_key(thread_ts))
    return ConversationRecord.parse(stored.content) if stored is not None else None


async def forget_said(store: ObjectStore, user_id: str, home: Home, thread_ts: str) -> bool:
    """Take what `user_id` wrote out of a channel's conversation; whether anything of
    theirs was there."""
    removed = False

    def without(current: str | None) -> str | None:
        nonlocal removed
        record = ConversationRecord.parse(current) if current is not None else None
        if record is None or not record.owner.in_channel:
            return current
        if user_id not in record.authors and record.owner.user != user_id:
            return current
        removed = True
        return record.without_author(user_id).render()

    await update(store, home.conversation_key(thread_ts), without)
    return removed
