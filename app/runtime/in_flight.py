"""What this process is still doing for Slack: every running listener and every piece of
work one started without waiting for it (app/runtime/background.py). Graceful shutdown
waits for the count to reach zero (app/shutdown.py)."""

from __future__ import annotations

import asyncio


class InFlight:
    """Counts running listeners so shutdown can wait for them to finish."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def count(self) -> int:
        return self._count

    def enter(self) -> None:
        self._count += 1
        self._idle.clear()

    def leave(self) -> None:
        self._count -= 1
        if self._count == 0:
            self._idle.set()

    async def wait_idle(self, grace_s: float) -> bool:
        try:
            async with asyncio.timeout(grace_s):
                await self._idle.wait()
            return True
        except TimeoutError:
            return False


in_flight = InFlight()
