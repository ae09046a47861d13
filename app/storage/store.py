"""The object-store interface (GCS's semantics: flat keys, whole objects, a generation per
write) and optimistic updates, the only safe way for several instances to edit one object
without a lock service. Imported at start-up: no google/anthropic imports here."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, TypeVar, runtime_checkable

T = TypeVar("T")
R = TypeVar("R")

# `if_generation=CREATE_ONLY` writes only when the key does not exist yet (GCS semantics).
CREATE_ONLY = 0


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """One entry of a listing: enough to show sizes and to act on a key conditionally."""

    key: str
    size: int
    updated: datetime
    generation: int


@dataclass(frozen=True, slots=True)
class StoredObject:
    """The whole content of one object, and the generation that content belongs to."""

    key: str
    content: str
    generation: int
    updated: datetime
    size: int  # bytes of the UTF-8 encoded content, as the store counts them


class Unchanged:
    """A conditional read's answer: the object is still at the generation the caller has."""


UNCHANGED = Unchanged()


class StoreError(Exception):
    """Base class of every error an object store raises on purpose."""


class PreconditionFailed(StoreError):
    """The object's generation was not the one the caller expected (GCS HTTP 412)."""

    def __init__(self, key: str, expected: int) -> None:
        super().__init__(f"{key}: generation is no longer {expected}")
        self.key = key
        self.expected = expected


class ObjectTooLarge(StoreError):
    """The object is larger than any Orion writes: it is not read (nor retried)."""


class StoreUnavailable(StoreError):
    """The backing store failed, and retrying within the time budget did not help."""


class DeadlineReached(StoreUnavailable, TimeoutError):
    """The caller's deadline cut the request short: its time ran out, which says nothing
    of the store (a TimeoutError, as when no time was left to send it)."""


class StoreUnreachable(StoreUnavailable):
    """The backing store did not answer at all (no connection, server errors throughout,
    no response within a full request timeout): it looks down, not just this call."""


class NoCredentials(StoreUnreachable):
    """No credentials for the store could be found on this machine: nothing can be sent
    until some are set up (for a person at a terminal, a thing to fix)."""


class BucketNotFound(StoreUnreachable):
    """The store answered that the bucket itself does not exist (misspelt, or not created
    yet): nothing can be kept until it does."""


class AccessDenied(StoreUnavailable):
    """The store answered that these credentials may not do this (HTTP 403)."""


@runtime_checkable
class ObjectStore(Protocol):
    """Async access to objects by key (a relative path such as `people/U1/memory/notes.md`)."""

    async def read(self, key: str) -> StoredObject | None:
        """The object, or None when there is no object under `key`."""
        ...

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        """Store `content`; returns the new generation. `if_generation`: None overwrites,
        `CREATE_ONLY` (0) only creates, any other only over that generation; else
        `PreconditionFailed`."""
        ...

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        """Remove the object; False when it did not exist. A generation mismatch raises
        `PreconditionFailed`."""
        ...

    async def list(self, prefix: str) -> list[ObjectInfo]:
        """Every object whose key starts with `prefix` (a plain string prefix), by key."""
        ...

    async def connect(self) -> None:
        """Get ready for the first operation (import libraries, build clients) ahead of
        time, so the first conversation doesn't pay for it."""
        ...

    async def close(self) -> None:
        """Stop any background work and release threads (at shutdown)."""
        ...


Transform = Callable[[str | None], str | None]


class StoreLayer:
    """An `ObjectStore` over another, passing every operation through: a layer (redacting writes,
    hiding expired objects) overrides just the ones it changes."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"

    async def read(self, key: str) -> StoredObject | None:
        return await self.inner.read(key)

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        return await self.inner.write(key, content, if_generation=if_generation)

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        return await self.inner.delete(key, if_generation=if_generation)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        return await self.inner.list(prefix)

    async def read_if_changed(self, key: str, generation: int) -> StoredObject | Unchanged | None:
        # A layer that changes what `read` answers reads through its own `read` unless it
        # says how to pass a conditional read on: it is never bypassed.
        if type(self).read is not StoreLayer.read:
            return await self.read(key)
        return await read_if_changed(self.inner, key, generation)

    async def connect(self) -> None:
        await self.inner.connect()

    async def close(self) -> None:
        await self.inner.close()


async def read_if_changed(
    store: ObjectStore, key: str, generation: int
) -> StoredObject | Unchanged | None:
    """`store.read(key)`, or `UNCHANGED` when the object is still at `generation`: then a
    store that can ask conditionally (GCS: `ifGenerationNotMatch`, answered 304 without
    the content) was sent nothing back but that. A store that cannot is read whole."""
    conditional = getattr(store, "read_if_changed", None)
    stored = await (conditional(key, generation) if conditional else store.read(key))
    if isinstance(stored, StoredObject) and stored.generation == generation:
        return UNCHANGED
    return stored


class NotRead:
    """`update` has no earlier read of the object to start from."""


NOT_READ = NotRead()


async def update(
    store: ObjectStore,
    key: str,
    transform: Transform,
    attempts: int = 5,
    *,
    already_read: StoredObject | NotRead | None = NOT_READ,
    write_back: bool = False,
) -> StoredObject | None:
    """Apply `transform` (content or None → new content, or None to delete) without losing
    concurrent changes: on a 412 it runs again on a fresh read, up to `attempts` times, so it
    has no side effects. `already_read` saves the first read. Answers the object as stored
    (None when absent) with its generation, for the next update to start from. `write_back`:
    an unchanged `already_read` is written back over its version (one request proving it
    unchanged, 412 otherwise), restarting its retention."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    attempt = 0
    while True:
        if isinstance(already_read, NotRead):
            fresh, current = True, await store.read(key)
        else:
            fresh, current, already_read = False, already_read, NOT_READ
        old = current.content if current is not None else None
        new = transform(old)
        if new == old and (fresh or not write_back or current is None):
            if fresh:
                return current  # nothing to change: skip the write (and its 412 risk)
            continue  # nothing to change from the earlier read, which may be stale: re-read
        try:
            generation = await _commit(store, key, current, new)
        except PreconditionFailed:
            attempt += 1
            if attempt >= attempts:
                raise
            # Full jitter: writers that collided once should not collide again in lock step.
            await asyncio.sleep(random.uniform(0, min(0.2, 0.005 * 2**attempt)))
            continue
        if new is None:
            return None
        # As written: a layer beneath may have changed the content on its way (redaction),
        # which only costs the next update from it a retry.
        return StoredObject(key, new, generation, datetime.now(UTC), len(new.encode()))


async def _commit(
    store: ObjectStore, key: str, current: StoredObject | None, new: str | None
) -> int:
    """Write `new` over exactly the generation that was read (or create, or delete); the
    new generation (0 for a deletion)."""
    if current is None:
        assert new is not None  # both None is the no-op `update` returns early for
        return await store.write(key, new, if_generation=CREATE_ONLY)
    if new is None:
        if not await store.delete(key, if_generation=current.generation):
            # Deleted by someone else since our read: retry, transform sees it is gone.
            raise PreconditionFailed(key, current.generation)
        return 0
    return await store.write(key, new, if_generation=current.generation)


async def at_most(n: int, items: Iterable[T], action: Callable[[T], Awaitable[R]]) -> list[R]:
    """`action` on every item, at most `n` at a time (requests to the store); the results in
    order, or the first error raised."""
    limit = asyncio.Semaphore(n)

    async def one(item: T) -> R:
        async with limit:
            return await action(item)

    return await asyncio.gather(*(one(item) for item in items))
