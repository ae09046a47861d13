"""How long storage may take right now: a deadline carried by the calling context.

Cancelling the coroutine at the end of a person's budget is not enough: a synchronous client
keeps its worker thread retrying long after. So the deadline travels with the context (tasks
inherit it) and each store operation bounds its timeouts and retries by what is left; work
with no deadline (after-turn writes) uses the store's defaults."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_deadline: ContextVar[float | None] = ContextVar("storage_deadline", default=None)


@contextmanager
def storage_deadline(seconds: float) -> Iterator[None]:
    """Storage calls made inside (or by tasks started inside) end within `seconds`.

    An enclosing deadline that ends sooner still applies.
    """
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
    """The current deadline on the `time.monotonic()` clock; None when there is none.

    Handed to worker threads, which compute what is left when they actually start.
    """
    return _deadline.get()


def time_left() -> float | None:
    """Seconds until the current deadline (never negative); None when there is none."""
    return seconds_until(_deadline.get())


def seconds_until(deadline: float | None) -> float | None:
    """Seconds until `deadline` (a `current_deadline()` kept for later), never negative."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())
