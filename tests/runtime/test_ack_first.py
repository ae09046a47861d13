"""The ack-first gate: handling waits for a burst's acknowledgements, but never for long."""

from __future__ import annotations

import asyncio

from app.runtime.ack_first import AckFirst


async def _work_after(gate: AckFirst, log: list[str], name: str) -> None:
    await gate.wait()
    log.append(name)


async def test_work_waits_until_acknowledgements_stop() -> None:
    gate = AckFirst(quiet_s=0.2, max_wait_s=10)
    log: list[str] = []
    gate.acknowledged()
    workers = [asyncio.create_task(_work_after(gate, log, f"work{n}")) for n in range(3)]
    for n in range(5):
        await asyncio.sleep(0.01)
        gate.acknowledged()
        log.append(f"ack{n}")
    await asyncio.gather(*workers)
    assert log == ["ack0", "ack1", "ack2", "ack3", "ack4", "work0", "work1", "work2"]


async def test_a_steady_stream_of_acknowledgements_does_not_hold_work_forever() -> None:
    gate = AckFirst(quiet_s=0.2, max_wait_s=0.1)
    log: list[str] = []
    gate.acknowledged()
    worker = asyncio.create_task(_work_after(gate, log, "work"))
    for n in range(40):
        await asyncio.sleep(0.01)
        gate.acknowledged()
        log.append(f"ack{n}")
    await worker
    assert "work" in log and log.index("work") < len(log) - 1


async def test_a_cancelled_waiter_leaves_the_others_waiting_and_then_working() -> None:
    gate = AckFirst(quiet_s=0.05, max_wait_s=10)
    log: list[str] = []
    gate.acknowledged()
    cancelled = asyncio.create_task(_work_after(gate, log, "cancelled"))
    kept = asyncio.create_task(_work_after(gate, log, "kept"))
    await asyncio.sleep(0)
    cancelled.cancel()
    await kept
    assert log == ["kept"]
    assert cancelled.cancelled()
