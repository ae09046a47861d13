"""Answers still being written, as real asyncio tasks (as `Answerer._respond` runs them):
each waits until the test lets it finish, so a Stop can find it running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Answer:
    """An answer still being written: finishes with its text when the test says so."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._written = asyncio.Event()
        self.task = asyncio.ensure_future(self._write())

    async def _write(self) -> str:
        await self._written.wait()
        return self.text

    async def finish(self) -> str:
        self._written.set()
        return await self.task


@asynccontextmanager
async def settled(*answers: Answer) -> AsyncIterator[None]:
    """Leave no task behind, whatever the test did to them."""
    try:
        yield
    finally:
        for answer in answers:
            answer.task.cancel()
        await asyncio.gather(*(a.task for a in answers), return_exceptions=True)
