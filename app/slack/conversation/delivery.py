"""The first moves on an event a person waits on (a thread start, a message): claim the
event, read the memory, and show that Orion is on it, in the order that is both fast and
safe. The same for both experiences.

The retry-dedupe claim and the memory read go out together, under one storage budget, so
the person waits for one storage round trip, not two. The status is shown as early as is
safe: a first delivery shows it at once, beside the claim (nobody else has this delivery;
if it loses the claim all the same, the winner's reply replaces the status); a delivery
Slack marks as a retry shows nothing until it has won, since another instance may be
answering the first delivery, and that one's status must not be overwritten or cleared.
"""

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
