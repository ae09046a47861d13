"""Whose each conversation is, and what was said in it (the record: conversation_record.py).

**Opening.** Every message is answered only once its thread's record has been read: a
record that names another person or channel makes the thread not the event's
(`Standing.NOT_YOURS`), so nothing kept for it — its summary, its session notes, its
transcript, its index entry — reaches the event's person, nor is rewritten or erased in
their name. The read goes out beside the memory reads, under the same budget, never in
front of them.

A thread without a record was opened before records were kept, or its first write was
lost. It becomes the event's person's only when Orion's own records say so — their
conversation index lists it — or nothing at all is kept for it (no `sessions/{thread}/`):
otherwise it stays nobody's, and the event is refused. Nothing a person or Claude writes
decides it.

**The record** is created once, by whoever first sees the conversation (a thread start,
or the message that opens it): a create-only write, so two instances agree on its owner.
A marker under the person's records (`people/{id}/threads/{thread}`) is written first, so
that forgetting the person finds every record of theirs without listing the bucket.

**The transcript** grows turn by turn (`TurnTranscript`): the person's message as the
turn begins, Orion's answer as it ends, each an optimistic update (a generation-checked
write) that refuses a record naming someone else. Like every writer of a person's data,
the turn then checks the erasure tombstone (app/agent/turn.py, after these writes).

**A channel's conversation** (a thread Orion was mentioned in) is recorded the same way,
as the channel's (conversation_record.py), with a marker under the channel's records
(`channel-records/{channel}/conversations/{thread}`) instead of a person's, so that
erasing the channel finds it. Every participant's messages go into its transcript, each
with its author; before the first message of an author is written, a marker under their
records (`people/{id}/said/{thread}`) lets forgetting them take what they said back out
(`forget_said`), leaving everyone else's messages — and the channel's memory — as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import partial

from app.learning.conversation_record import (
    ConversationOwner,
    ConversationRecord,
    TranscriptMessage,
)
from app.learning.session_index import read_index
from app.memory.retention import retention_of
from app.memory.scopes import (
    channel_conversation_marker_key,
    conversation_marker_key,
    conversation_record_key,
    said_marker_key,
    session_prefix,
)
from app.observability.logging import get_logger
from app.storage.store import (
    CREATE_ONLY,
    NOT_READ,
    ObjectStore,
    PreconditionFailed,
    StoredObject,
    update_object,
)

log = get_logger(__name__)


class Standing(StrEnum):
    """Where an event stands with the thread it names."""

    OWN = "own"  # the record names its person and channel: its transcript is the history
    NEW = "new"  # the message opens the thread, and nothing is kept for it yet
    # No record: the person's from before records were kept (or its first write was
    # lost): its history is Slack's, once, and the record is made from it.
    UNRECORDED = "unrecorded"
    NOT_YOURS = "not_yours"  # someone else's, or nobody's to give: nothing of it is used


@dataclass(frozen=True)
class OpenedConversation:
    standing: Standing
    stored: StoredObject | None = None  # the record as read (None: there was none)
    record: ConversationRecord | None = None

    @property
    def allowed(self) -> bool:
        return self.standing is not Standing.NOT_YOURS

    @property
    def transcript(self) -> tuple[TranscriptMessage, ...] | None:
        """What was said before, as Orion kept it; None when Orion keeps nothing of it
        (the history must then come from Slack)."""
        if self.standing is Standing.OWN and self.record is not None:
            return self.record.messages
        return () if self.standing is Standing.NEW else None


# What of some messages may be kept (app/learning/erasure.py `said_since_erasure`).
Check = Callable[[Sequence[TranscriptMessage]], Awaitable[list[TranscriptMessage]]]


class NotYourConversation(Exception):
    """The record names another person or channel: nothing was written."""


async def open_conversation(
    store: ObjectStore, owner: ConversationOwner, thread_ts: str, *, starts: bool = False
) -> OpenedConversation:
    """Where `owner`'s event stands with thread `thread_ts`; `starts`: the event's message
    opens the thread (whatever is kept for it is then looked for at once, beside the
    record's read, rather than after it). Raises what storage raises."""
    key = conversation_record_key(thread_ts)
    if starts:
        stored, kept = await asyncio.gather(store.read(key), _anything_kept(store, thread_ts))
    else:
        stored, kept = await store.read(key), None
    if stored is not None:
        record = ConversationRecord.parse(stored.content)
        if record is None:
            # Only Orion writes it; unreadable, it proves nobody's claim: refused.
            return OpenedConversation(Standing.NOT_YOURS, stored)
        if owner.may_continue(record.owner):
            return OpenedConversation(Standing.OWN, stored, record)
        return OpenedConversation(Standing.NOT_YOURS, stored, record)
    if kept is None:
        kept = await _anything_kept(store, thread_ts)
    if not kept:
        return OpenedConversation(Standing.NEW if starts else Standing.UNRECORDED)
    if owner.in_channel:
        # A channel thread keeps nothing under sessions/: what is there is a person's.
        return OpenedConversation(Standing.NOT_YOURS)
    if any(e.thread_ts == thread_ts for e in await read_index(store, owner.user, expired_too=True)):
        return OpenedConversation(Standing.UNRECORDED)
    return OpenedConversation(Standing.NOT_YOURS)


async def _anything_kept(store: ObjectStore, thread_ts: str) -> bool:
    """Whether anything is kept for the thread (expired objects are not: they are gone for
    every reader, and the lifecycle rule deletes them)."""
    listing = await store.list(session_prefix(thread_ts))
    retention = retention_of(store)
    if retention is None:
        return bool(listing)
    cutoff = retention.cutoff()
    return any(not retention.expired(o.key, o.updated, cutoff=cutoff) for o in listing)


async def begin_conversation(
    store: ObjectStore, owner: ConversationOwner, thread_ts: str, *, started: datetime
) -> bool:
    """Record `owner` as the one who opened `thread_ts` (a thread start), unless it is
    someone else's already; whether it is `owner`'s now. Raises what storage raises.

    A thread Slack has just opened has nothing kept for it: then the record is created
    straight away (create-only: a record already there is read and compared instead)."""
    try:
        if not await _anything_kept(store, thread_ts):
            await _create(store, owner, thread_ts, (), started)
            return True
        opened = await open_conversation(store, owner, thread_ts)
        if opened.standing is Standing.UNRECORDED:
            await _create(store, owner, thread_ts, (), started)
    except NotYourConversation:
        return False
    return opened.allowed


async def _create(
    store: ObjectStore,
    owner: ConversationOwner,
    thread_ts: str,
    messages: Sequence[TranscriptMessage],
    started: datetime,
) -> StoredObject:
    """A new record (create-only), after the marker that lets forgetting the person (or
    erasing the channel) find it; when another write created the record first, `messages`
    are added to it if it is `owner`'s (NotYourConversation otherwise)."""
    marker = (
        channel_conversation_marker_key(owner.channel, thread_ts)
        if owner.in_channel
        else conversation_marker_key(owner.user, thread_ts)
    )
    marked: int | None = None
    # There already when a record of theirs was made before (forgotten since, or lost).
    with contextlib.suppress(PreconditionFailed):
        marked = await store.write(marker, "", if_generation=CREATE_ONLY)
    record = ConversationRecord(thread_ts, owner, started).with_messages(messages)
    content = record.render()
    key = conversation_record_key(thread_ts)
    try:
        generation = await store.write(key, content, if_generation=CREATE_ONLY)
    except PreconditionFailed:
        try:
            return await _append(store, owner, thread_ts, messages, None)
        except NotYourConversation:
            if marked is not None:  # it names no record of theirs: not left behind
                with contextlib.suppress(PreconditionFailed):
                    await store.delete(marker, if_generation=marked)
            raise
    return StoredObject(key, content, generation, datetime.now(UTC), len(content.encode()))


async def _append(
    store: ObjectStore,
    owner: ConversationOwner,
    thread_ts: str,
    messages: Sequence[TranscriptMessage],
    known: StoredObject | None,
) -> StoredObject:
    """`messages` added to the existing record of `owner`'s conversation (from `known`,
    the record as last seen, when given)."""
    return await _change(
        store, owner, thread_ts, lambda record: record.with_messages(messages), known
    )


async def _change(
    store: ObjectStore,
    owner: ConversationOwner,
    thread_ts: str,
    change: Callable[[ConversationRecord], ConversationRecord],
    known: StoredObject | None,
) -> StoredObject:
    """The existing record of `owner`'s conversation, changed (from `known`, the record
    as last seen, when given)."""

    def changed(current: str | None) -> str:
        record = ConversationRecord.parse(current) if current is not None else None
        if record is None or not owner.may_continue(record.owner):
            raise NotYourConversation(thread_ts)
        return change(record).render()

    key = conversation_record_key(thread_ts)
    stored = await update_object(
        store, key, changed, already_read=known if known is not None else NOT_READ
    )
    assert stored is not None  # `changed` never deletes
    return stored


class TurnTranscript:
    """What one turn adds to its conversation's transcript, written in order, each write
    from the record as the last one left it (one storage request per write, unless
    another writer came in between). Writing never fails the turn: a write that storage
    refuses is logged, and the next turn goes on with what the transcript holds."""

    def __init__(
        self,
        store: ObjectStore,
        owner: ConversationOwner,
        thread_ts: str,
        opened: OpenedConversation,
        *,
        earlier: Sequence[TranscriptMessage] = (),
    ) -> None:
        """`earlier`: what was said before the turn, when the record does not hold it yet
        (an unrecorded conversation's history, read from Slack)."""
        if not opened.allowed:
            raise NotYourConversation(thread_ts)
        self._store = store
        self._owner = owner
        self._thread_ts = thread_ts
        self._known = opened.stored
        self._earlier = tuple(earlier)
        self._lock = asyncio.Lock()
        self._writes: list[asyncio.Future[None]] = []
        # A channel's conversation: whose messages it holds (their markers are written),
        # and whose this turn wrote (each is checked against an erasure after the turn).
        self._marked = opened.record.authors if opened.record is not None else set()
        self.authors: set[str] = set()

    @property
    def store(self) -> ObjectStore:
        return self._store

    def add(self, *messages: TranscriptMessage) -> None:
        """Write `messages` after whatever this turn wrote before (in the background)."""
        self._after_previous(partial(self._write, messages))

    def take_back(self, ts: str) -> None:
        """Remove the message Slack knows as `ts`, after whatever this turn wrote before
        (in the background): a question Claude refused to answer is not kept."""
        self._after_previous(partial(self._take_back, ts))

    async def _take_back(self, ts: str) -> None:
        async with self._lock:
            if self._known is None:
                return  # nothing of the conversation was written
            try:
                self._known = await _change(
                    self._store, self._owner, self._thread_ts, lambda r: r.without(ts), self._known
                )
            except Exception as exc:
                log.warning(
                    "memory.transcript.write_failed", error=type(exc).__name__, exc_info=exc
                )

    def add_checked(self, messages: Sequence[TranscriptMessage], check: Check) -> None:
        """Write what `check` keeps of `messages` (in the background, in order: nothing
        this turn adds later is written before them)."""
        self._after_previous(partial(self._write_checked, messages, check))

    def _after_previous(self, work: Callable[[], Awaitable[None]]) -> None:
        """`work` started once the previous write has ended (a write cut off by a shutdown
        leaves the later ones unstarted, never half-begun)."""
        previous = self._writes[-1] if self._writes else None

        async def in_turn() -> None:
            if previous is not None:
                await previous  # never raises: every write logs its own failure
            await work()

        self._writes.append(asyncio.ensure_future(in_turn()))

    async def _write_checked(self, messages: Sequence[TranscriptMessage], check: Check) -> None:
        try:
            kept = await check(messages)
        except Exception as exc:  # unchecked, nothing of it is kept
            log.warning("memory.transcript.write_failed", error=type(exc).__name__, exc_info=exc)
            return
        await self._write(kept)

    async def written(self) -> None:
        """Once every write this turn started has ended (written, or failed and logged)."""
        await asyncio.gather(*self._writes)

    def messages(self) -> tuple[TranscriptMessage, ...] | None:
        """The conversation as this turn last wrote or read it (once `written`): what the
        turn end indexes for `recall`; None when Orion keeps none of it yet."""
        if self._known is None:
            return None
        record = ConversationRecord.parse(self._known.content)
        return record.messages if record is not None else None

    async def _write(self, messages: Sequence[TranscriptMessage]) -> None:
        async with self._lock:
            try:
                if self._owner.in_channel:
                    await self._mark_authors([*self._earlier, *messages])
                if self._known is None:
                    self._known = await _create(
                        self._store,
                        self._owner,
                        self._thread_ts,
                        [*self._earlier, *messages],
                        datetime.now(UTC),
                    )
                else:
                    self._known = await _append(
                        self._store, self._owner, self._thread_ts, messages, self._known
                    )
            except NotYourConversation:
                log.warning("memory.transcript.refused", reason="another person's conversation")
            except Exception as exc:
                log.warning(
                    "memory.transcript.write_failed", error=type(exc).__name__, exc_info=exc
                )
            else:
                log.debug("memory.transcript.write", messages=len(messages))

    async def _mark_authors(self, messages: Sequence[TranscriptMessage]) -> None:
        """Before an author's first message goes into a channel's transcript: the marker
        that lets forgetting them find it (create-only; one already there is theirs)."""
        authors = {m.user for m in messages if m.user is not None}
        self.authors |= authors
        new = sorted(authors - self._marked)

        async def mark(user_id: str) -> None:
            with contextlib.suppress(PreconditionFailed):
                await self._store.write(
                    said_marker_key(user_id, self._thread_ts), "", if_generation=CREATE_ONLY
                )

        await asyncio.gather(*(mark(user_id) for user_id in new))
        self._marked |= set(new)


async def read_conversation(store: ObjectStore, thread_ts: str) -> ConversationRecord | None:
    """The thread's record; None when there is none or it cannot be read."""
    stored = await store.read(conversation_record_key(thread_ts))
    return ConversationRecord.parse(stored.content) if stored is not None else None


def whose(record: ConversationRecord | None, user_id: str) -> bool | None:
    """Whether a record makes the thread `user_id`'s: True, False (someone else's, or a
    channel's, which is nobody's own), or None when there is no record (a conversation
    from before records were kept: Orion's other records, the person's index, say whose
    it is)."""
    if record is None:
        return None
    return not record.owner.in_channel and record.owner.user == user_id


async def forget_transcript(store: ObjectStore, user_id: str, thread_ts: str) -> bool:
    """Empty the transcript of `user_id`'s conversation, keeping whose the thread is (so
    that nobody else can take it, and Slack's copy is never read back into it); whether
    there was one of theirs."""
    forgotten = False

    def emptied(current: str | None) -> str | None:
        nonlocal forgotten
        record = ConversationRecord.parse(current) if current is not None else None
        forgotten = whose(record, user_id) is True
        if record is None or not forgotten:
            return current
        return record.forgotten().render()

    await update_object(store, conversation_record_key(thread_ts), emptied)
    return forgotten


async def forget_said(store: ObjectStore, user_id: str, thread_ts: str) -> bool:
    """Take what `user_id` wrote out of a channel's conversation (a person's own
    conversations are `forget_transcript`'s); whether anything of theirs was there."""
    removed = False

    def without(current: str | None) -> str | None:
        nonlocal removed
        record = ConversationRecord.parse(current) if current is not None else None
        if record is None or not record.owner.in_channel or user_id not in record.authors:
            return current
        removed = True
        return record.without_author(user_id).render()

    await update_object(store, conversation_record_key(thread_ts), without)
    return removed
