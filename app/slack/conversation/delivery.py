"""An event's first moves: the retry claim and the memory read together under one budget; the
status at once, or for a retry only once its claim is won (another instance may be answering)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from app.storage.deadline import current_deadline, storage_deadline

T = TypeVar("T")


class Delivery(Generic[T]):
    """One delivery of an event: its claim and its memory read, both started at once."""

    def __init__(
        self,
        is_taken: Callable[[], Awaitable[bool]],
        *,
        retried: bool,
        budget_s: float,
        memory: Callable[[], Awaitable[T]],
    ) -> None:
        """`is_taken`: the claim (True: another delivery has the event; the event's own
        claim, `EventDeduplicator.claims(body)`, or a create-only write of its own)."""
        with storage_deadline(budget_s):
            # When the budget ends: nothing later waits past it on the person's path.
            self.deadline = current_deadline()
            self.memory: asyncio.Future[T] = asyncio.ensure_future(memory())
            self._claiming = asyncio.ensure_future(is_taken())
        self._retried = retried

    async def claim(self, show_working: Callable[[], Awaitable[None]]) -> bool:
        """True when this delivery is the one to answer, with `show_working` run as early
        as is safe; False (its memory read cancelled) when another delivery has it."""
        if not self._retried:
            await show_working()
        if await self._claiming:
            self.memory.cancel()
            return False
        if self._retried:
            await show_working()
        return True
