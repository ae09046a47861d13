"""Graceful shutdown shared by both adapters: finish in-flight turns, flush traces."""

from __future__ import annotations

import asyncio

from app.observability import tracing
from app.observability.logging import get_logger
from app.runtime.in_flight import in_flight
from app.services import ServiceProvider

log = get_logger(__name__)

# Cloud Run allows 10 s between SIGTERM and SIGKILL; leave room for the trace flush.
IN_FLIGHT_GRACE_S = 7.0


async def drain(provider: ServiceProvider) -> None:
    pending = in_flight.count
    # Logged here, on the event loop: the signal handler that asked for the stop may not
    # log (app/runtime/stop_signals.py).
    log.info("orion.stopping", in_flight=pending, grace_s=IN_FLIGHT_GRACE_S)
    finished = await in_flight.wait_idle(IN_FLIGHT_GRACE_S)
    log.info("orion.shutdown", in_flight_at_start=pending, drained=finished)
    await provider.close()
    if tracing.enabled():
        await asyncio.to_thread(tracing.shutdown)
