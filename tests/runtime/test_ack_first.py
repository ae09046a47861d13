"""The ack-first gate: handling waits for a burst's acknowledgements, but never for long.

The gate measures time on the event loop's clock. These tests move that clock themselves
(`VirtualClock`), so what they assert does not depend on how fast the machine is: a gate
that opened too early shows up as work logged before an acknowledgement it should have
waited for, however busy the machine; and no test sleeps.
"""

from __future__ import annotations

import asyncio
import math

import pytest

from app.runtime.ack_first import AckFirst

# Loop turns a due timer needs to wake a waiter: the timer's callback resolves the gate's
# future, the shield passes it on, the waiting task runs. A few more for good measure.
_TURNS_TO_WAKE = 8


class VirtualClock:
    """The running loop's clock, standing still until the test moves it.

    It starts on the next whole second of the real clock (never behind it, so no timer
    already scheduled on the loop is put off) and moves by binary fractions, so that time
    differences come out exact: the gate compares them with its thresholds.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.now = float(math.ceil(loop.time()))

    def time(self) -> float:
        return self.now

    async def advance(self, seconds: float) -> None:
        """Move the clock on, then let everything that became due run."""
        self.now += seconds
        for _ in range(_TURNS_TO_WAKE):
            await asyncio.sleep(0)


@pytest.fixture
async def clock(monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    loop = asyncio.get_running_loop()
    virtual = VirtualClock(loop)
    # The loop schedules its timers by its own `time()`: both move with the virtual clock.
    monkeypatch.setattr(loop, "time", virtual.time)
    return virtual


async def _work_after(gate: AckFirst, log: list[str], name: str) -> None:
    await gate.wait()
    log.append(name)


async def test_work_waits_until_acknowledgements_stop(clock: VirtualClock) -> None:
    gate = AckFirst(quiet_s=0.25, max_wait_s=10)
    log: list[str] = []
    gate.acknowledged()
    workers = [asyncio.create_task(_work_after(gate, log, f"work{n}")) for n in range(3)]
    # Each acknowledgement comes before the quiet period is up, and together they last
    # longer than it: the work waits for the last one, not the first.
    for n in range(5):
        await clock.advance(0.125)
        gate.acknowledged()
        log.append(f"ack{n}")
    await clock.advance(0.125)
    assert log == ["ack0", "ack1", "ack2", "ack3", "ack4"], "not quiet for long enough yet"

    await clock.advance(0.125)
    assert log == ["ack0", "ack1", "ack2", "ack3", "ack4", "work0", "work1", "work2"]
    assert all(worker.done() for worker in workers)


async def test_a_steady_stream_of_acknowledgements_does_not_hold_work_forever(
    clock: VirtualClock,
) -> None:
    gate = AckFirst(quiet_s=0.25, max_wait_s=1.0)
    log: list[str] = []
    gate.acknowledged()
    worker = asyncio.create_task(_work_after(gate, log, "work"))
    await clock.advance(0)  # the worker is waiting from now on
    for n in range(40):
        await clock.advance(0.125)
        gate.acknowledged()
        log.append(f"ack{n}")
    assert worker.done()
    # Held for `max_wait_s` (eight acknowledgements' worth), then let go mid-stream.
    assert 7 <= log.index("work") <= 8, log


async def test_a_cancelled_waiter_leaves_the_others_waiting_and_then_working(
    clock: VirtualClock,
) -> None:
    gate = AckFirst(quiet_s=0.0625, max_wait_s=10)
    log: list[str] = []
    gate.acknowledged()
    cancelled = asyncio.create_task(_work_after(gate, log, "cancelled"))
    kept = asyncio.create_task(_work_after(gate, log, "kept"))
    await clock.advance(0)  # both are waiting
    cancelled.cancel()
    await clock.advance(0)
    assert cancelled.cancelled()
    assert log == [] and not kept.done(), "still quiet for less than quiet_s"

    await clock.advance(0.0625)
    assert log == ["kept"]
    assert kept.done() and cancelled.cancelled()
