"""The note under an answer that changed memory: what the store confirmed changed and its undo's
id (docs/memory-notes.md); None when nothing changed, notes are hidden or the person was erased."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime

from app.learning.guard import Guard
from app.learning.memory_note import NoteLine, describe_changes
from app.learning.person_settings import memory_notes_choice
from app.learning.undo import delete_undo_record, save_undo_record
from app.memory.change_log import ChangeLog
from app.observability import tracing
from app.observability.logging import get_logger, since
from app.storage.store import ObjectStore

log = get_logger(__name__)


@dataclass(frozen=True)
class MemoryNote:
    lines: list[NoteLine]
    undo_id: str | None  # None: the changes are shown, but cannot be undone from here


@dataclass(frozen=True)
class NoteRequest:
    user_id: str
    thread_ts: str | None
    started_at: datetime  # when the turn began (an erasure after it cancels the note)
    guard: Guard  # the person's erasure guard, with their profile as the turn read it


async def note_for_turn(
    request: NoteRequest, changes: ChangeLog, *, shown_by_default: bool, budget_s: float
) -> MemoryNote | None:
    """The note for a turn's changes, with its undo record kept; None for no note. Past
    `budget_s` (for the erasure check, and as much for the record) it has no Undo."""
    found = changes.changes()
    if not found or not request.user_id:
        return None
    started = time.perf_counter()
    store = request.guard.store
    with tracing.observe("memory.note", metadata={"files": len(found)}) as span:
        user = request.user_id
        # Both reads at once: on slow storage the note waits one round trip, not two.
        chosen, erased = await asyncio.gather(
            asyncio.wait_for(memory_notes_choice(store, user), budget_s),
            asyncio.wait_for(request.guard.forgotten_since(request.thread_ts), budget_s),
            return_exceptions=True,
        )
        if isinstance(chosen, BaseException):
            # The operator's default stands in for a choice that cannot be read now.
            log.warning("memory.note.settings_failed", error=type(chosen).__name__, exc_info=chosen)
            chosen = None
        shown = shown_by_default if chosen is None else chosen
        if erased is True or not shown:
            span.update(output={"shown": False, "erased": erased is True})
            return None
        lines = describe_changes(user, found)
        undo_id: str | None = None
        erased_meanwhile = False
        try:
            if isinstance(erased, BaseException):
                raise erased  # not known whether to keep a record: keep none
            async with asyncio.timeout(budget_s):
                undo_id = await save_undo_record(
                    store, user, found, [str(line) for line in lines], created_at=request.started_at
                )
                if undo_id is not None and await request.guard.forgotten_since(request.thread_ts):
                    erased_meanwhile = True
                    await delete_undo_record(store, user, undo_id)  # the erasure came meanwhile
                    span.update(output={"shown": False, "erased": True})
                    return None
        except Exception as exc:
            error = "Timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
            log.warning("memory.note.undo_failed", error=error, exc_info=exc)
            if undo_id is not None:
                # Kept, but not known to be safe to offer (the erasure check failed, or
                # came true): an Undo nobody can click would only keep the old content,
                # maybe of someone forgotten meanwhile.
                await _drop_undo_record(store, user, undo_id, budget_s)
            if erased_meanwhile:
                # Forgotten during the turn: no note names what it saved about them, also
                # when their record could not be dropped just now.
                span.update(output={"shown": False, "erased": True})
                return None
            undo_id = None
        log.info("memory.note", files=len(found), undo=undo_id is not None, **since(started))
        span.update(output={"shown": True, "files": len(found), "undo": undo_id is not None})
        return MemoryNote(lines, undo_id)


async def _drop_undo_record(store: ObjectStore, user: str, undo_id: str, budget_s: float) -> None:
    try:
        async with asyncio.timeout(budget_s):
            await delete_undo_record(store, user, undo_id)
    except Exception as exc:
        # A record left behind is in the person's home: forgetting them still finds it,
        # and it expires with the retention window.
        error = "Timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
        log.warning("memory.note.undo_drop_failed", error=error, exc_info=exc)
