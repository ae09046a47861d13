"""Work nobody waits for yields to work somebody does.

One instance serves up to 80 events at once, in one interpreter: the CPU is what they
share. When 80 people open threads at the same moment, each greeting needs a few
milliseconds of CPU (Slack calls, storage requests) before the person sees it, and each is
followed by work nobody watches (saving the thread's context, a turn's summary). Run as it
comes, that after-work of the first greetings takes its turn on the CPU before the
greetings of the last: everyone waits for everyone's after-work. So each event counts
itself as `waiting` from its arrival until the person has their greeting (or Claude has
their question), and after-work first waits `until_nobody_waits` — for at most a few
seconds, so that under a load that never lets up it still gets done, only later.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# Under a load that never lets up, after-work still runs this long after it was ready.
MAX_DEFER_S = 3.0


class PeopleWaiting:
    def __init__(self) -> None:
        self._count = 0
        self._nobody: asyncio.Event | None = None  # made on first use, on the running loop

    @property
    def count(self) -> int:
        return self._count

    def arrive(self) -> Waiting:
        """A person now waits for their first sight of Orion's greeting (or answer), until
        `served()` (or the end of a `with` block)."""
        self._count += 1
        return Waiting(self)

    def _served(self) -> None:
        self._count -= 1
        if self._count == 0 and self._nobody is not None:
            self._nobody.set()

    async def until_nobody_waits(self, max_wait_s: float = MAX_DEFER_S) -> None:
        """Return once nobody waits (at once, usually), or after `max_wait_s`."""
        if self._count == 0:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max_wait_s):
                while self._count > 0:  # someone may have come since it was set
                    if self._nobody is None or self._nobody.is_set():
                        self._nobody = asyncio.Event()
                    await self._nobody.wait()


_by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PeopleWaiting] = (
    weakref.WeakKeyDictionary()
)


def people_waiting() -> PeopleWaiting:
    """Those waiting on the running event loop: in production, every listener of the
    instance (they share its CPU); a process running several loops (tests, one server
    each) keeps each loop's count apart."""
    loop = asyncio.get_running_loop()
    people = _by_loop.get(loop)
    if people is None:
        people = _by_loop[loop] = PeopleWaiting()
    return people


class Waiting:
    """One person waiting; `served()` may be called more than once (only the first counts)."""

    def __init__(self, people: PeopleWaiting) -> None:
        self._people: PeopleWaiting | None = people

    def served(self) -> None:
        if self._people is not None:
            self._people._served()
            self._people = None

    def __enter__(self) -> Waiting:
        return self

    def __exit__(self, *_: object) -> None:
        self.served()


async def after_people(work: Coroutine[Any, Any, T]) -> T:
    """`work`, once nobody waits (or after MAX_DEFER_S)."""
    try:
        await people_waiting().until_nobody_waits()
    except BaseException:
        work.close()  # cancelled while waiting (shutdown): it never started
        raise
    return await work
