"""A circuit breaker around a remote store: learn once that it is down, skip it until it is back
(docs/architecture.md, "Inside app/storage"). The probe lists rather than reads: GCS answers a
read in a missing bucket like a missing object. A 412, 403 or 429 is an answer, not an outage."""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from app.observability.logging import get_logger
from app.storage.deadline import storage_deadline
from app.storage.store import (
    ObjectInfo,
    ObjectStore,
    PreconditionFailed,
    StoredObject,
    StoreUnavailable,
    StoreUnreachable,
    Unchanged,
    read_if_changed,
)

log = get_logger(__name__)

T = TypeVar("T")

# Read by the probe: a missing object is the cheapest answer a bucket can give.
PROBE_KEY = "health/probe"
FIRST_PROBE_S = 0.5
MAX_PROBE_INTERVAL_S = 15.0
PROBE_TIMEOUT_S = 2.0


class StoreOffline(StoreUnavailable):
    """The store is known to be down: the operation was not attempted."""


class GuardedStore:
    """A `ObjectStore` that fails fast while the store it wraps is down."""

    def __init__(self, inner: ObjectStore, *, first_probe_s: float = FIRST_PROBE_S) -> None:
        self.inner = inner
        self._first_probe_s = first_probe_s
        self._last_answer = float("-inf")  # monotonic time the store last answered
        self._probe: asyncio.Task[None] | None = None
        self._outage: StoreUnreachable | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"GuardedStore({self.inner!r})"

    @property
    def available(self) -> bool:
        """False from the first failure of an outage until a probe sees the store back."""
        return self._probe is None and not self._closed

    @property
    def outage(self) -> StoreUnreachable | None:
        """What opened the breaker (None while it is closed): readiness says why."""
        return self._outage if not self.available else None

    async def read(self, key: str) -> StoredObject | None:
        return await self._guarded(lambda: self.inner.read(key))

    async def read_if_changed(self, key: str, generation: int) -> StoredObject | Unchanged | None:
        return await self._guarded(lambda: read_if_changed(self.inner, key, generation))

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        return await self._guarded(
            lambda: self.inner.write(key, content, if_generation=if_generation)
        )

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        return await self._guarded(lambda: self.inner.delete(key, if_generation=if_generation))

    async def list(self, prefix: str) -> list[ObjectInfo]:
        return await self._guarded(lambda: self.inner.list(prefix))

    async def connect(self) -> None:
        """Connect ahead of the first operation. A connection that cannot be made for
        want of a network (no credentials to be had) is an outage like a request that
        cannot be sent; a connection made is not an answer from the store."""
        sent = time.monotonic()
        try:
            await self.inner.connect()
        except StoreUnreachable as error:
            self._unreachable(error, sent)
            raise

    async def close(self) -> None:
        """Stop probing (at shutdown) and close the store it wraps."""
        self._closed = True
        if self._probe is not None:
            self._probe.cancel()
        await self.inner.close()

    async def _guarded(self, operation: Callable[[], Awaitable[T]]) -> T:
        if not self.available:
            raise StoreOffline("storage is unavailable; skipped until it answers again")
        sent = time.monotonic()
        attempt = asyncio.ensure_future(operation())
        # Counted even after the caller stopped waiting: the call goes on in its worker
        # thread, and how it ends tells a slow store from a dead one.
        attempt.add_done_callback(lambda done: self._settled(done, sent))
        return await asyncio.shield(attempt)

    def _settled(self, attempt: asyncio.Future[Any], sent: float) -> None:
        if attempt.cancelled() or self._closed:
            return
        error = attempt.exception()
        if error is None or isinstance(error, PreconditionFailed):
            self._last_answer = time.monotonic()  # a result, a 404 or a 412: it answered
        elif isinstance(error, StoreUnreachable):
            self._unreachable(error, sent)
        # Anything else (an error answer, a key refused before sending, no time left to
        # send) says nothing about the store as a whole.

    def _unreachable(self, error: StoreUnreachable, sent: float) -> None:
        """An operation sent at `sent` could not reach the store: an outage, unless the
        store has answered anything since."""
        if self.available and self._last_answer < sent:
            self._open(error)

    def _open(self, error: StoreUnreachable) -> None:
        self._outage = error
        log.error("store.unavailable", store=repr(self.inner), exc_info=error)
        # A context of its own: the probe must not inherit the person's deadline or the
        # event's log fields.
        self._probe = asyncio.get_running_loop().create_task(
            self._probe_until_back(), name="store.probe", context=contextvars.Context()
        )

    async def _probe_until_back(self) -> None:
        interval, attempts, opened = self._first_probe_s, 0, time.monotonic()
        while True:
            await asyncio.sleep(interval)
            attempts += 1
            try:
                # The deadline bounds the store's own retries; the timeout, the worker
                # thread's last request (which may outlast the deadline a little).
                with storage_deadline(PROBE_TIMEOUT_S):
                    async with asyncio.timeout(PROBE_TIMEOUT_S * 2):
                        await self.inner.list(PROBE_KEY)
            except Exception as exc:
                log.debug("store.probe.failed", attempt=attempts, exc_info=exc)
                interval = min(interval * 2, MAX_PROBE_INTERVAL_S)
                continue
            break
        self._last_answer = time.monotonic()
        self._probe = None
        log.info(
            "store.recovered",
            store=repr(self.inner),
            probes=attempts,
            down_s=round(self._last_answer - opened, 1),
        )
