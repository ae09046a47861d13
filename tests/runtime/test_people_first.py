"""After-work waits for the people waiting, but never for ever (app/runtime/people_first.py)."""

from __future__ import annotations

import asyncio

from app.runtime.people_first import PeopleWaiting


def test_after_work_starts_once_the_last_person_waiting_is_served() -> None:
    async def scenario() -> list[str]:
        people, seen = PeopleWaiting(), []
        first, second = people.arrive(), people.arrive()

        async def after_work() -> None:
            await people.until_nobody_waits(max_wait_s=30)
            seen.append("after-work")

        task = asyncio.ensure_future(after_work())
        await asyncio.sleep(0)
        first.served()
        first.served()  # served twice counts once: the second person still waits
        await asyncio.sleep(0.01)
        seen.append("second served")
        second.served()
        await task
        return seen

    assert asyncio.run(scenario()) == ["second served", "after-work"]


def test_after_work_runs_anyway_when_people_never_stop_coming() -> None:
    async def scenario() -> int:
        people = PeopleWaiting()
        people.arrive()  # never served: a load that never lets up
        await people.until_nobody_waits(max_wait_s=0.05)
        return people.count

    assert asyncio.run(scenario()) == 1


def test_nobody_waiting_means_no_wait_at_all() -> None:
    async def scenario() -> bool:
        people = PeopleWaiting()
        with people.arrive():
            pass
        waited = asyncio.ensure_future(people.until_nobody_waits(max_wait_s=30))
        await asyncio.sleep(0)
        return waited.done()

    assert asyncio.run(scenario()) is True
