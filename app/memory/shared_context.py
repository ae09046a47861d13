"""The organisation's context (`global/`), read once per instance, not per person (a burst:
docs/architecture.md); a failed read is never kept, a write here drops the kept copy."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass

from app.memory.key_prefixes import GLOBAL
from app.storage.store import ObjectStore, StoredObject, StoreLayer
from app.storage.team_scope import Tenant, current_tenant

DEFAULT_MAX_AGE_S = 10.0
# Copies kept at once: every workspace's context.md, and room for the misses of paths
# nobody wrote, far below what would matter to the instance's memory.
MAX_KEPT = 1024


# A shared object: whose (the workspace bound in distribution mode, else None) and its key.
_Shared = tuple[Tenant | None, str]


@dataclass(frozen=True, slots=True)
class _Kept:
    stored: StoredObject | None
    sent_at: float  # time.monotonic() when the read that returned it was sent


class SharedContextCache(StoreLayer):
    """An `ObjectStore` that shares reads of the organisation's context (`global/`)."""

    def __init__(self, inner: ObjectStore, *, max_age_s: float = DEFAULT_MAX_AGE_S) -> None:
        super().__init__(inner)
        self._max_age_s = max_age_s
        self._kept: OrderedDict[_Shared, _Kept] = OrderedDict()
        self._reading: dict[_Shared, asyncio.Future[StoredObject | None]] = {}

    async def read(self, key: str) -> StoredObject | None:
        if not key.startswith(GLOBAL.prefix):
            return await self.inner.read(key)
        shared = (current_tenant(), key)
        kept = self._kept.get(shared)
        if kept is not None and time.monotonic() - kept.sent_at < self._max_age_s:
            self._kept.move_to_end(shared)
            return kept.stored
        reading = self._reading.get(shared)
        if reading is None:
            # Its own task, so that one reader giving up (its budget ran out) does not
            # cancel the read for everyone who joined it. (It inherits the tenant.)
            reading = asyncio.ensure_future(self._read_and_keep(shared))
            self._reading[shared] = reading
            reading.add_done_callback(lambda done: self._done(shared, done))
        return await asyncio.shield(reading)

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        self._forget(key)
        try:
            return await self.inner.write(key, content, if_generation=if_generation)
        finally:
            self._forget(key)

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        self._forget(key)
        try:
            return await self.inner.delete(key, if_generation=if_generation)
        finally:
            self._forget(key)

    async def _read_and_keep(self, shared: _Shared) -> StoredObject | None:
        sent_at = time.monotonic()
        stored = await self.inner.read(shared[1])
        if self._reading.get(shared) is asyncio.current_task():
            # Not dropped meanwhile by a write through this layer: what it read stands.
            self._kept[shared] = _Kept(stored, sent_at)
            self._kept.move_to_end(shared)
            while len(self._kept) > MAX_KEPT:
                self._kept.popitem(last=False)
        return stored

    def _done(self, shared: _Shared, reading: asyncio.Future[StoredObject | None]) -> None:
        if self._reading.get(shared) is reading:
            del self._reading[shared]
        if not reading.cancelled():
            # Retrieved, not logged: every reader still waiting gets it and logs it once
            # (the loader's scope_failed); a reader whose budget ran out has logged its
            # timeout. Logging here too would say one failure twice.
            reading.exception()

    def _forget(self, key: str) -> None:
        shared = (current_tenant(), key)
        self._kept.pop(shared, None)
        self._reading.pop(shared, None)
