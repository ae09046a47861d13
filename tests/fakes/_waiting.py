"""Polling until a condition holds, from sync code or from a coroutine.

The code under test often finishes after the event that triggered it was acknowledged (Bolt
runs listeners after the ack), so tests wait for the outcome instead of sleeping. The sync
variant refuses to run on an event loop's thread: blocking there would freeze the very app
the test is waiting for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL_INTERVAL = 0.01
# How long a wait goes on before it fails: what a busy machine may take (the suite is run
# with other work beside it, docs/testing.md). A wait ends as soon as its condition holds,
# so this is spent only by a test that fails.
PATIENCE_S = 30.0
# The same for what waits on a real Orion process starting (`orion serve`, `orion chat`):
# its imports alone are seconds of CPU, and on two cores shared with other work a start
# took up to 45 s (docs/testing.md).
PROCESS_PATIENCE_S = 120.0
# A held request (FakeSlack.hold, FakeClaude.hold, FaultyProxy.hold) goes on by itself after
# this, so a failed test cannot hang.
HOLD_LIMIT_S = 120.0


def _describe(what: str | Callable[[], str]) -> str:
    return what() if callable(what) else what


def wait_until(
    predicate: Callable[[], T],
    timeout: float = PATIENCE_S,
    what: str | Callable[[], str] = "condition",
) -> T:
    """Return the first truthy value of `predicate()`; raise TimeoutError after `timeout` s."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "blocking wait called on an event loop thread; use the *_async variant with await"
        )
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {_describe(what)}")
        time.sleep(POLL_INTERVAL)


async def wait_until_async(
    predicate: Callable[[], T],
    timeout: float = PATIENCE_S,  # noqa: ASYNC109 - same signature as wait_until
    what: str | Callable[[], str] = "condition",
) -> T:
    """Like `wait_until`, but yields to the running loop between polls."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {_describe(what)}")
        await asyncio.sleep(POLL_INTERVAL)
