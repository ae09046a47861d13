"""What this process is still doing for Slack: running listeners and the work they started without
waiting (app/runtime/background.py), which graceful shutdown waits for (app/shutdown.py)."""

from __future__ import annotations

import asyncio


class InFlight:
    """Counts running listeners so shutdown can wait for them to finish."""

    def __init__(self) -> None:
        self._count = 0

    @property
    def count(self) -> int:
        return self._count

    def enter(self) -> None:
        self._count += 1

    def leave(self) -> None:
        self._count -= 1

    async def wait_idle(self, grace_s: float) -> bool:
        """Whether the count reached zero within `grace_s`. Looked at every 50 ms, not
        awaited on an event: the count is the process's, and an asyncio.Event would bind
        to the first loop that waited on it (a test runs servers on several loops)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        while self._count:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(_IDLE_POLL_S)
        return True


_IDLE_POLL_S = 0.05

in_flight = InFlight()
