"""People this process keeps waiting: a greeting not shown yet, a turn not at Claude yet.

Work nobody waits for (a thread start's settle, what a turn taught) starts once nobody
waits, or after `DEFER_AT_MOST_S`: on one core, a burst's CPU goes first to what people
see (docs/architecture.md, "One process per instance")."""

from __future__ import annotations

import asyncio
import contextlib

# Past this, deferred work goes ahead anyway: a steady stream of people must not
# starve what their turns taught.
DEFER_AT_MOST_S = 2.0


class Waiter:
    """One person waiting, until `done()` (once; later calls do nothing) or the end of
    its `with`."""

    def __init__(self, waiting: Waiting) -> None:
        self._waiting: Waiting | None = waiting

    def done(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            waiting.left()

    def __enter__(self) -> Waiter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.done()


class Waiting:
    def __init__(self) -> None:
        self.count = 0
        self._deferred: list[asyncio.Future[None]] = []

    def person(self) -> Waiter:
        self.count += 1
        return Waiter(self)

    def left(self) -> None:
        self.count -= 1
        if self.count == 0:
            deferred, self._deferred = self._deferred, []
            for sleeper in deferred:
                # Each on its own loop's thread (tests serve from several loops).
                sleeper.get_loop().call_soon_threadsafe(_wake, sleeper)

    async def until_nobody(self) -> None:
        """Return once nobody waits, or after `DEFER_AT_MOST_S`."""
        if self.count == 0:
            return
        sleeper = asyncio.get_running_loop().create_future()
        self._deferred.append(sleeper)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(sleeper, DEFER_AT_MOST_S)


def _wake(sleeper: asyncio.Future[None]) -> None:
    if not sleeper.done():
        sleeper.set_result(None)


waiting = Waiting()
