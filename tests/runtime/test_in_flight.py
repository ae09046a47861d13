"""The process's count of work in flight, waited on by shutdown (app/runtime/in_flight.py)."""

from __future__ import annotations

import asyncio

from app.runtime.in_flight import InFlight


def test_shutdown_waits_for_the_work_in_flight_on_whichever_loop_it_runs() -> None:
    # Tests run several servers, each on its own event loop, over the one process-wide
    # count: a wait on one loop must not break the next on another.
    counted = InFlight()

    async def drain(work_s: float) -> bool:
        counted.enter()
        asyncio.get_running_loop().call_later(work_s, counted.leave)
        return await counted.wait_idle(5.0)

    assert asyncio.run(drain(0.1)) is True
    assert asyncio.run(drain(0.1)) is True
    assert counted.count == 0


def test_a_wait_gives_up_when_the_work_outlasts_it() -> None:
    counted = InFlight()
    counted.enter()
    assert asyncio.run(counted.wait_idle(0.1)) is False
    counted.leave()
