"""How long conversations are kept (`MEMORY_SESSION_RETENTION_DAYS` from each object's last write):
expired reads as absent, though listings still show it, so forgetting an owner deletes it too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial

from app.memory.homes import expires_with_conversations
from app.storage.store import (
    CREATE_ONLY,
    ObjectStore,
    PreconditionFailed,
    StoredObject,
    StoreLayer,
    Unchanged,
    read_if_changed,
)

DEFAULT_RETENTION_DAYS = 30


@dataclass(frozen=True)
class SessionRetention:
    """The retention window; `clock` says what time it is (tests move it forward)."""

    days: int = DEFAULT_RETENTION_DAYS
    clock: Callable[[], datetime] = field(default=partial(datetime.now, UTC), compare=False)

    def __post_init__(self) -> None:
        if self.days < 1:
            raise ValueError("the retention window is at least one day")

    def cutoff(self) -> datetime:
        """Objects last written before this are expired."""
        return self.clock() - timedelta(days=self.days)

    @staticmethod
    def applies_to(key: str) -> bool:
        return expires_with_conversations(key)

    def expired(self, key: str, updated: datetime, *, cutoff: datetime | None = None) -> bool:
        return self.applies_to(key) and updated < (cutoff or self.cutoff())


class ExpiringSessionsStore(StoreLayer):
    """An `ObjectStore` in which conversations older than the retention window are gone,
    before the lifecycle rule or the sweep has deleted them."""

    def __init__(self, inner: ObjectStore, retention: SessionRetention) -> None:
        super().__init__(inner)
        self.retention = retention

    def __repr__(self) -> str:
        return f"ExpiringSessionsStore({self.inner!r}, days={self.retention.days})"

    async def read(self, key: str) -> StoredObject | None:
        stored = await self.inner.read(key)
        if stored is not None and self.retention.expired(key, stored.updated):
            return None
        return stored

    async def read_if_changed(self, key: str, generation: int) -> StoredObject | Unchanged | None:
        stored = await read_if_changed(self.inner, key, generation)
        if isinstance(stored, StoredObject) and self.retention.expired(key, stored.updated):
            return None
        # UNCHANGED: whether what the caller has has expired since is the caller's to
        # judge, from when it was written (app/learning/search_index.py does).
        return stored

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        try:
            return await self.inner.write(key, content, if_generation=if_generation)
        except PreconditionFailed:
            if if_generation != CREATE_ONLY or not self.retention.applies_to(key):
                raise
            # "Create, since it is absent": it may have read as absent because it expired.
            current = await self.inner.read(key)
            if current is None or not self.retention.expired(key, current.updated):
                raise
        try:
            # Replace exactly that expired version: a writer who got there first wins.
            return await self.inner.write(key, content, if_generation=current.generation)
        except PreconditionFailed:
            raise PreconditionFailed(key, CREATE_ONLY) from None


def retention_of(store: ObjectStore) -> SessionRetention | None:
    """The window `store` enforces on its reads (a store as Orion keeps memories), if any: readers
    of Orion's records skip entries by the same window the store hides conversations by."""
    layer: object = store
    while layer is not None:
        if isinstance(layer, ExpiringSessionsStore):
            return layer.retention
        # Every layer keeps what it wraps as `inner` (StoreLayer, the breaker's GuardedStore).
        layer = getattr(layer, "inner", None)
    return None


def cutoff_of(store: ObjectStore) -> datetime | None:
    """Entries of Orion's records older than this are expired (None: no window)."""
    retention = retention_of(store)
    return retention.cutoff() if retention is not None else None
