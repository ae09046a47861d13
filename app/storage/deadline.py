"""How long storage may take right now: a deadline carried by the calling context (tasks inherit
it), because a cancelled coroutine leaves a synchronous client retrying in its worker thread
(docs/architecture.md, "Inside app/storage")."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_deadline: ContextVar[float | None] = ContextVar("storage_deadline", default=None)


@contextmanager
def storage_deadline(seconds: float) -> Iterator[None]:
    """Storage calls made inside (or by tasks started inside) end within `seconds`, or
    sooner when an enclosing deadline does."""
    at = time.monotonic() + seconds
    enclosing = _deadline.get()
    token = _deadline.set(at if enclosing is None else min(enclosing, at))
    try:
        yield
    finally:
        _deadline.reset(token)


@contextmanager
def own_deadline(seconds: float) -> Iterator[None]:
    """Like `storage_deadline`, but not bounded by an enclosing one: for work that must
    finish even when its caller's budget is spent (a write's safety check)."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def current_deadline() -> float | None:
    """The current deadline on the `time.monotonic()` clock, or None: handed to worker
    threads, which compute what is left when they actually start."""
    return _deadline.get()


def time_left() -> float | None:
    """Seconds until the current deadline (never negative); None when there is none."""
    return seconds_until(_deadline.get())


def seconds_until(deadline: float | None) -> float | None:
    """Seconds until `deadline` (a `current_deadline()` kept for later), never negative."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())
