"""Stopping without leaving anyone in silence, for both ways in (docs/operations.md, "Starting,
stopping and restarts"): answers that finish within `FINISH_WITHIN_S` finish, the others are cut
off with an *Ask again* button, memory work gets until `MEMORY_WORK_UNTIL_S`, then traces flush."""

from __future__ import annotations

import asyncio
import time

from app.observability import tracing
from app.observability.logging import get_logger
from app.runtime.in_flight import in_flight
from app.services import ServiceProvider
from app.slack.conversation.running_turns import RunningTurns

log = get_logger(__name__)

# Seconds after the stop signal (Cloud Run's SIGKILL comes at 10).
FINISH_WITHIN_S = 6.5
MEMORY_WORK_UNTIL_S = 8.0


class Stopping:
    """When the process was asked to stop, and the drain that follows."""

    def __init__(self) -> None:
        self.since: float | None = None  # time.monotonic() of the first stop signal

    @property
    def begun(self) -> bool:
        return self.since is not None

    def begin(self) -> None:
        """Note the moment; safe inside a signal handler (no lock, no log)."""
        if self.since is None:
            self.since = time.monotonic()

    async def drain(self, provider: ServiceProvider, turns: RunningTurns) -> None:
        self.begin()
        assert self.since is not None
        pending = in_flight.count
        # Logged here, on the event loop: the signal handler may not log.
        log.info("orion.stopping", in_flight=pending, answering=turns.count)
        finished = await in_flight.wait_idle(self._left(FINISH_WITHIN_S))
        cut_off = 0
        if not finished:
            cut_off = turns.cut_off_all()
            finished = await in_flight.wait_idle(self._left(MEMORY_WORK_UNTIL_S))
        log.info("orion.shutdown", in_flight_at_start=pending, cut_off=cut_off, drained=finished)
        await provider.close()
        if tracing.enabled():
            await asyncio.to_thread(tracing.shutdown)

    def _left(self, until_s: float) -> float:
        assert self.since is not None
        return max(0.0, self.since + until_s - time.monotonic())
