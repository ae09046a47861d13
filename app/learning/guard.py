"""The erasure guard: every write an event makes for an owner passes here, and `settle` takes it
back after an erasure meanwhile (docs/architecture.md, "One erasure guard")."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime

from app.learning.profile import Profile
from app.memory.homes import Home
from app.memory.retention import cutoff_of
from app.memory.tolerant_json import Unreadable
from app.observability.logging import get_logger
from app.storage.deadline import own_deadline
from app.storage.store import (
    NOT_READ,
    ObjectStore,
    PreconditionFailed,
    StoredObject,
    StoreError,
    StoreLayer,
    update,
)

log = get_logger(__name__)

# How long taking writes back may take, whatever is left of the event's own deadline.
TAKE_BACK_BUDGET_S = 5.0


class Forgotten(Exception):
    """The owner, or the conversation, was forgotten while the event ran: what it wrote
    was taken back."""


class _Recording(StoreLayer):
    """The store as the event writes to it: each write into the owner's home noted (what
    an erasure takes back; another owner's objects are theirs to keep)."""

    def __init__(self, inner: ObjectStore, written: dict[str, int], home: Home) -> None:
        super().__init__(inner)
        self._written = written
        self._home = home

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        generation = await self.inner.write(key, content, if_generation=if_generation)
        if key.startswith(self._home.prefix):
            self._written[key] = generation  # the version written
        return generation


class Guard:
    """One event's writes for one owner (`home`), from its profile as the event read it
    (`read`: the stored object, None when there was none). `since`: when the event began,
    for an event that began before an erasure whose mark it may then have read."""

    def __init__(
        self,
        store: ObjectStore,
        home: Home,
        read: StoredObject | None,
        *,
        since: datetime | None = None,
    ) -> None:
        self.home = home
        self._since = since
        self._store = store
        self._read = read
        try:
            self.profile, self.readable = Profile.to_update(read.content if read else None), True
        except Unreadable:  # the event answers without memory (app/learning/opening.py)
            self.profile, self.readable = Profile(), False
        self._written: dict[str, int] = {}
        self.store: ObjectStore = _Recording(store, self._written, home)

    @classmethod
    async def reading(
        cls, store: ObjectStore, home: Home, *, since: datetime | None = None
    ) -> Guard:
        """A guard for an event that has not read the profile yet."""
        return cls(store, home, await store.read(home.profile_key), since=since)

    def noted(self, key: str, generation: int) -> None:
        """A write made past `store` (an update that already knows its result)."""
        self._written[key] = generation

    async def settle(
        self,
        change: Callable[[Profile], Profile] | None = None,
        *,
        thread_ts: str | None = None,
        write_back: bool = True,
    ) -> Profile:
        """The profile with `change` applied, unless the owner (or conversation `thread_ts`) was
        forgotten since the event read it: its writes taken back, `Forgotten` raised. Storage errors
        raise; an unreadable profile is left (logged). `write_back=False`: nothing to change, read
        again."""
        earlier = self.profile
        cutoff = cutoff_of(self._store)
        forgotten: list[str] = []

        def transform(current: str | None) -> str | None:
            profile = Profile.to_update(current)  # unreadable: nothing written over it
            if profile.erased_since(earlier) or self._erased_after_start(profile):
                forgotten[:] = ["owner"]
                return current
            if thread_ts is not None and profile.forgot_since(earlier, thread_ts):
                forgotten[:] = ["conversation"]
                return current
            forgotten.clear()
            if change is None:
                return current
            return change(profile).render(cutoff=cutoff)

        # Written over exactly the version the event read (or created, where there was
        # none); with nothing to change, written back as read (one request either way).
        try:
            stored = await update(
                self._store,
                self.home.profile_key,
                transform,
                # Unreadable as read: read again (an erasure since has made it readable).
                already_read=self._read if self.readable else NOT_READ,
                write_back=write_back,
            )
        except Unreadable:
            self.readable = False
            return self.profile
        if forgotten:
            await self._take_back(whole=forgotten[0] == "owner", thread_ts=thread_ts)
            raise Forgotten(forgotten[0])
        self._read, self.readable = stored, True
        self.profile = Profile.parse(stored.content if stored is not None else None)
        return self.profile

    def _erased_after_start(self, profile: Profile) -> bool:
        since, erased_at = self._since, profile.erased_at
        return since is not None and erased_at is not None and erased_at >= since

    async def forgotten_since(self, thread_ts: str | None = None) -> bool:
        """Whether the owner (or, `thread_ts`, that conversation) was forgotten since the
        event read the profile (one read; nothing taken back: `settle` does that)."""
        stored = await self._store.read(self.home.profile_key)
        now = Profile.parse(stored.content if stored else None)
        return now.erased_since(self.profile) or (
            thread_ts is not None and now.forgot_since(self.profile, thread_ts)
        )

    async def _take_back(self, *, whole: bool, thread_ts: str | None) -> None:
        """The event's writes (`whole`), or those of the forgotten conversation, each only
        at the version the event left."""
        keys = dict(self._written)
        if not whole and thread_ts is not None:
            # The conversation's object and notes, and the undo record of what the turn
            # changed (it may hold the notes' old content).
            conversation = self.home.conversation_key(thread_ts)
            kept = (self.home.notes_prefix(thread_ts), self.home.prefix + "undo/")
            keys = {k: g for k, g in keys.items() if k == conversation or k.startswith(kept)}
        log.info("memory.erased_during_event", kind="owner" if whole else "conversation")
        with own_deadline(TAKE_BACK_BUDGET_S):
            await asyncio.gather(
                *(self._delete(key, generation) for key, generation in keys.items())
            )
            if not whole and thread_ts is not None and self.home.search_key in self._written:
                from app.learning.search_index import remove_documents

                await remove_documents(self._store, self.home, {thread_ts})

    async def _delete(self, key: str, generation: int) -> None:
        with contextlib.suppress(PreconditionFailed):
            try:
                await self._store.delete(key, if_generation=generation)
            except StoreError as exc:
                log.warning("memory.take_back_failed", exc_info=exc)
