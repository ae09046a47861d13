"""Undo what one answer changed in a person's memory: exactly, once, and only for them
(docs/memory-notes.md, "Undo"): checked unchanged, claimed with a conditional write, each file
written back on the generation checked; through the owner's erasure guard."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from app.learning.guard import Forgotten, Guard
from app.learning.plain_text import clip
from app.learning.timestamps import parse_moment
from app.memory.change_log import MemoryChange
from app.memory.homes import person
from app.memory.scopes import is_undo_id, validate_user_id
from app.memory.tolerant_json import load_json_object
from app.observability.logging import get_logger
from app.storage.deadline import own_deadline, time_left
from app.storage.store import CREATE_ONLY, ObjectStore, PreconditionFailed, StoredObject

log = get_logger(__name__)

# A record holds every changed file's old content; past this an answer gets no Undo
# (the note still says what changed). Far above what a turn writes: nine files at the
# memory tool's largest (100 KB, kept as 200,000 hexadecimal digits) still fit.
MAX_RECORD_CHARS = 2_000_000
# Old content as the hexadecimal of its UTF-8 bytes, which the redacting layer under every
# write cannot take for a secret (docs/memory-notes.md, "Undo").
BEFORE_HEX = "before_hex"
MAX_NAMED = 5  # files named in a refusal; the rest counted
NAME_CHARS = 100  # each clipped to this (a path may be 512 characters long)
# What withdrawing a claim, or checking for an erasure, may take once the caller's storage
# deadline is spent: it is what cut the undo short, and these must still happen.
SETTLE_BUDGET_S = 2.0
UNDONE_AT = "undone_at"

# What the person is told, in Slack and in `orion chat` alike.
UNDONE = "Undone: your memory is back to what it was before this answer."
ALREADY_UNDONE = "Already undone: nothing more to do."
NOT_YOURS = "Only the person whose memory this is can undo it. Nothing was changed."
EXPIRED = (
    "This can't be undone any more: Orion keeps what an answer changed only as long as it "
    "keeps conversations."
)
ERASED = "Nothing to undo: you asked Orion to forget everything about you since this answer."
UNAVAILABLE = (
    "Orion couldn't undo that just now: its memory isn't answering. "
    "Please try again in a few minutes."
)


class UndoOutcome(StrEnum):
    UNDONE = "undone"
    ALREADY_UNDONE = "already_undone"
    NOT_YOURS = "not_yours"
    CHANGED_SINCE = "changed_since"  # nothing undone: a file changed after the answer
    ERASED = "erased"  # the owner asked to be forgotten since: nothing left to undo
    GONE = "gone"  # expired with the retention window, or never was


@dataclass(frozen=True)
class UndoResult:
    outcome: UndoOutcome
    lines: list[str] = field(default_factory=list)  # the record's note lines, when read
    changed_since: list[str] = field(default_factory=list)  # keys that blocked it
    owner: str | None = None


@dataclass(frozen=True)
class UndoRecord:
    owner: str
    created_at: datetime  # when the turn began: an erasure after it leaves nothing to undo
    changes: list[MemoryChange]
    lines: list[str]  # the note's lines, shown again (struck through) once undone
    undone_at: datetime | None = None

    def to_json(self) -> str:
        return json.dumps(
            {
                "owner": self.owner,
                "created_at": self.created_at.isoformat(),
                "changes": [
                    {
                        "key": c.key,
                        BEFORE_HEX: None if c.before is None else c.before.encode().hex(),
                        "after_generation": c.after_generation,
                    }
                    for c in self.changes
                ],
                "lines": self.lines,
                UNDONE_AT: self.undone_at.isoformat() if self.undone_at else None,
            },
            ensure_ascii=False,
        )

    @staticmethod
    def parse(raw: str) -> UndoRecord | None:
        data = load_json_object(raw, what="undo_record")
        owner, created = data.get("owner"), parse_moment(data.get("created_at"))
        items, lines = data.get("changes"), data.get("lines")
        if not isinstance(owner, str) or created is None or not isinstance(items, list):
            return None
        changes = [change for item in items if (change := _change(item)) is not None]
        if len(changes) < len(items):
            return None  # an undo that left out a file it could not read would be no undo
        return UndoRecord(
            owner,
            created,
            changes,
            [line for line in lines if isinstance(line, str)] if isinstance(lines, list) else [],
            parse_moment(data.get(UNDONE_AT)),
        )


def outcome_text(result: UndoResult, names: Sequence[str] = ()) -> str:
    """The sentence for an undo's outcome; `names`: the files that changed since, as the
    person knows them."""
    if result.outcome is UndoOutcome.CHANGED_SINCE:
        return changed_since(names)
    return {
        UndoOutcome.UNDONE: UNDONE,
        UndoOutcome.ALREADY_UNDONE: ALREADY_UNDONE,
        UndoOutcome.NOT_YOURS: NOT_YOURS,
        UndoOutcome.ERASED: ERASED,
        UndoOutcome.GONE: EXPIRED,
    }[result.outcome]


def changed_since(names: Sequence[str]) -> str:
    """The refusal when a file changed after the answer: nothing was undone."""
    shown = ", ".join(clip(name, NAME_CHARS) for name in names[:MAX_NAMED])
    more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
    return (
        f"Nothing was undone: {shown}{more} changed after this answer, and undoing now "
        "would lose that change. You can see and forget what Orion keeps on its Home tab."
    )


async def save_undo_record(
    store: ObjectStore,
    owner: str,
    changes: Sequence[MemoryChange],
    lines: Sequence[str],
    *,
    created_at: datetime,
) -> str | None:
    """Keep `changes` for an undo; its id, or None when the record would be too large."""
    validate_user_id(owner)
    record = UndoRecord(owner, created_at, list(changes), list(lines))
    content = record.to_json()
    if len(content) > MAX_RECORD_CHARS:
        log.info("memory.undo.too_large", chars=len(content), files=len(changes))
        return None
    undo_id = secrets.token_hex(16)
    await store.write(person(owner).undo_key(undo_id), content, if_generation=CREATE_ONLY)
    return undo_id


async def delete_undo_record(store: ObjectStore, owner: str, undo_id: str) -> None:
    await store.delete(person(owner).undo_key(undo_id))


async def undo_changes(
    store: ObjectStore, undo_id: str, user: str, *, noted_at: datetime | None = None
) -> UndoResult:
    """Undo record `undo_id` for `user` (who clicked: only their own home is looked in); `noted_at`:
    when the note was posted, to tell an erasure from an expiry when the record is gone."""
    home = person(user)
    key = home.undo_key(undo_id) if is_undo_id(undo_id) else None
    stored, profile = await asyncio.gather(
        store.read(key) if key is not None else asyncio.sleep(0), store.read(home.profile_key)
    )
    guard = Guard(store, home, profile)
    erased_at = guard.profile.erased_at
    record = UndoRecord.parse(stored.content) if stored is not None else None
    if stored is None or record is None:
        if erased_at is not None and (noted_at is None or erased_at >= noted_at):
            return UndoResult(UndoOutcome.ERASED)
        return UndoResult(UndoOutcome.GONE)
    if record.owner != user:
        return UndoResult(UndoOutcome.NOT_YOURS, owner=record.owner)
    result = UndoResult(UndoOutcome.UNDONE, record.lines, owner=record.owner)
    if record.undone_at is not None:
        return _as(result, UndoOutcome.ALREADY_UNDONE)
    if erased_at is not None and erased_at >= record.created_at:
        return _as(result, UndoOutcome.ERASED)
    store = guard.store  # every write of the undo passes the person's erasure guard
    current = await asyncio.gather(*(store.read(c.key) for c in record.changes))
    # A file already as before the turn was put back by an earlier click that storage cut
    # short (or changed back since): nothing to do for it, and nothing a later change lost.
    pending = [
        (change, now)
        for change, now in zip(record.changes, current, strict=True)
        if not _as_before(change, now)
    ]
    moved = [change.key for change, now in pending if _moved_on(change, now)]
    if moved:
        return _as(result, UndoOutcome.CHANGED_SINCE, moved)
    claimed = await _claim(store, stored, record)
    if claimed is None:
        return _as(result, UndoOutcome.ALREADY_UNDONE)
    try:
        raced = await _restore(store, stored, record, claimed, [c for c, _ in pending])
    finally:
        # Also when storage cut the restore short: what it did put back must not outlive
        # an erasure that came meanwhile.
        try:
            with _time_to_settle():
                await guard.settle()
        except Forgotten:
            return _as(result, UndoOutcome.ERASED)
    if raced:
        # Changed between the check and the write: those files keep the newer change.
        return _as(result, UndoOutcome.CHANGED_SINCE, raced)
    return result


async def revert_changes(store: ObjectStore, changes: Sequence[MemoryChange]) -> list[str]:
    """Put back, at once and without a record, what a turn changed (a turn whose answer was
    refused keeps nothing); the keys changed since, which keep the newer change."""
    outcomes = await asyncio.gather(*(_restore_one(store, change) for change in changes))
    return [change.key for change, ok in zip(changes, outcomes, strict=True) if not ok]


def _as(result: UndoResult, outcome: UndoOutcome, keys: list[str] | None = None) -> UndoResult:
    return UndoResult(outcome, result.lines, keys or [], result.owner)


def _as_before(change: MemoryChange, now: StoredObject | None) -> bool:
    """Whether the file is as it was before the turn."""
    if change.before is None:
        return now is None
    return now is not None and now.content == change.before


def _moved_on(change: MemoryChange, now: StoredObject | None) -> bool:
    """Whether the file is no longer as the turn left it."""
    if change.after_generation is None:
        return now is not None
    return now is None or now.generation != change.after_generation


async def _claim(store: ObjectStore, stored: StoredObject, record: UndoRecord) -> int | None:
    """Mark the record undone, unless another click did first; the claim's generation."""
    claimed = replace(record, undone_at=datetime.now(UTC))
    try:
        return await store.write(stored.key, claimed.to_json(), if_generation=stored.generation)
    except PreconditionFailed:
        return None


async def _restore(
    store: ObjectStore,
    stored: StoredObject,
    record: UndoRecord,
    claimed: int,
    changes: Sequence[MemoryChange],
) -> list[str]:
    """Put `changes` back; the keys that changed meanwhile (and were left alone). Should
    storage fail midway, or the caller's deadline cancel it, the claim is withdrawn so the
    person can click again: what was put back already then counts as done."""
    # Every restore settles before anything else happens (no write still in flight when
    # the claim is withdrawn or the erasure checked).
    try:
        outcomes = await asyncio.gather(
            *(_restore_one(store, c) for c in changes), return_exceptions=True
        )
    except asyncio.CancelledError:
        # The gather ends only once each restore has: withdraw as on a failure. Claiming
        # only after the restore succeeded instead would let two clicks restore at once.
        await _withdraw_claim(store, stored, record, claimed)
        raise
    failed = next((o for o in outcomes if isinstance(o, BaseException)), None)
    if failed is not None:
        await _withdraw_claim(store, stored, record, claimed)
        raise failed
    return [change.key for change, ok in zip(changes, outcomes, strict=True) if not ok]


async def _withdraw_claim(
    store: ObjectStore, stored: StoredObject, record: UndoRecord, claimed: int
) -> None:
    """Mark the record not undone again — only the claim itself (`claimed`): a record an
    erasure deleted meanwhile stays deleted."""
    try:
        with _time_to_settle():
            await store.write(stored.key, record.to_json(), if_generation=claimed)
    except Exception as exc:
        log.warning("memory.undo.unclaim_failed", exc_info=exc)


@contextlib.contextmanager
def _time_to_settle() -> Iterator[None]:
    """Storage calls that must happen even though the caller's deadline ran out (it may
    be what cut the undo short) get SETTLE_BUDGET_S of their own; with more time left, or
    no deadline, the caller's stands."""
    left = time_left()
    if left is not None and left < SETTLE_BUDGET_S:
        with own_deadline(SETTLE_BUDGET_S):
            yield
    else:
        yield


async def _restore_one(store: ObjectStore, change: MemoryChange) -> bool:
    try:
        if change.before is None:
            assert change.after_generation is not None  # a net change
            await store.delete(change.key, if_generation=change.after_generation)
        elif change.after_generation is None:
            await store.write(change.key, change.before, if_generation=CREATE_ONLY)
        else:
            await store.write(change.key, change.before, if_generation=change.after_generation)
    except PreconditionFailed:
        return False
    return True


def _change(item: Any) -> MemoryChange | None:
    if not isinstance(item, dict) or not isinstance(item.get("key"), str):
        return None
    try:
        before = _before(item)
    except ValueError:
        return None
    generation = item.get("after_generation")
    if not isinstance(generation, int) and (generation is not None or before is None):
        return None  # not a generation, or neither an old content nor a generation
    # What the turn left is not kept: only its generation matters to an undo.
    return MemoryChange(item["key"], before, None, generation)


def _before(item: dict[str, Any]) -> str | None:
    """A file's old content: from its hexadecimal digits, or as text in a record kept
    before they were. ValueError when it is not there as it should be."""
    hexed = BEFORE_HEX in item
    before = item[BEFORE_HEX] if hexed else item.get("before")
    if before is not None and not isinstance(before, str):
        raise ValueError("not text")
    # ValueError (UnicodeDecodeError is one) when the digits are not UTF-8's
    return bytes.fromhex(before).decode() if hexed and before else before
