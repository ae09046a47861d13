"""Acknowledgements before work: hold acknowledged events' handling until acks catch up.

A burst of events reaches the server over a few milliseconds, and the event loop reads
the sockets in several rounds. Handing each acknowledged event to Bolt at once would run
the first ones' dispatch (about a millisecond of CPU each) between the acknowledgements
of the rest. Slack's deadline is on the acknowledgement, not on the answer, so work
waits until no event has been acknowledged for `quiet_s`; under a steady stream it waits
at most `max_wait_s`. Both are small beside a turn's Claude call.
"""

from __future__ import annotations

import asyncio

QUIET_S = 0.002
MAX_WAIT_S = 0.05


class AckFirst:
    def __init__(self, *, quiet_s: float = QUIET_S, max_wait_s: float = MAX_WAIT_S) -> None:
        self._quiet_s = quiet_s
        self._max_wait_s = max_wait_s
        self._last_ack = float("-inf")
        self._held_since = 0.0
        self._opened: asyncio.Future[None] | None = None

    def acknowledged(self) -> None:
        self._last_ack = asyncio.get_running_loop().time()

    async def wait(self) -> None:
        """Return once acknowledgements are quiet, or after `max_wait_s`."""
        loop = asyncio.get_running_loop()
        if self._opened is None:
            # One timer and one future for everything held, however many events wait.
            self._opened = loop.create_future()
            self._held_since = loop.time()
            loop.call_soon(self._open_when_quiet)
        await asyncio.shield(self._opened)  # a cancelled waiter must not cancel the rest

    def _open_when_quiet(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        quiet_for = now - self._last_ack
        if quiet_for < self._quiet_s and now - self._held_since < self._max_wait_s:
            loop.call_later(self._quiet_s - quiet_for, self._open_when_quiet)
            return
        opened, self._opened = self._opened, None
        if opened is not None and not opened.done():
            opened.set_result(None)
