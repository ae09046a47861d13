"""The turns this process is answering now, their transcript writes still under way (the next
message waits for them), and why one ended early (docs/architecture.md, "Stop")."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

from app.storage.deadline import time_left

Conversation = tuple[str, str]  # (channel, thread_ts)


class EndedEarly(StrEnum):
    STOPPED = "stopped"
    CUT_OFF = "cut_off"


class RunningTurns:
    def __init__(self) -> None:
        self._running: dict[Conversation, asyncio.Future[Any]] = {}
        self._ended: dict[asyncio.Future[Any], EndedEarly] = {}
        self._writing: dict[Conversation, asyncio.Future[Any]] = {}
        self._askers: dict[Conversation, str | None] = {}

    @property
    def count(self) -> int:
        return len(self._running)

    @contextmanager
    def running(
        self, channel: str, thread_ts: str, work: asyncio.Future[Any], asker: str | None = None
    ) -> Iterator[None]:
        key = (channel, thread_ts)
        self._running[key] = work
        self._askers[key] = asker
        try:
            yield
        finally:
            if self._running.get(key) is work:
                del self._running[key]
                del self._askers[key]
            self._ended.pop(work, None)

    def writing(self, channel: str, thread_ts: str, write: asyncio.Future[Any]) -> None:
        """The conversation's transcript write, until it ends."""
        key = (channel, thread_ts)
        self._writing[key] = write

        def ended(_: asyncio.Future[Any]) -> None:
            if self._writing.get(key) is write:
                del self._writing[key]

        write.add_done_callback(ended)

    async def written(self, channel: str, thread_ts: str) -> None:
        """Once the conversation's last transcript write here has ended, or half the storage budget
        has gone: the next turn must not read the record without the exchange just answered."""
        write = self._writing.get((channel, thread_ts))
        if write is not None:
            left = time_left()
            await asyncio.wait({write}, timeout=None if left is None else left / 2)

    def asker(self, channel: str, thread_ts: str) -> str | None:
        """Who asked the conversation's turn running in this process (None: none runs)."""
        return self._askers.get((channel, thread_ts))

    def stop(self, channel: str, thread_ts: str) -> bool:
        """Cancel the conversation's running turn; False when none runs in this process."""
        work = self._running.get((channel, thread_ts))
        return work is not None and self._end(work, EndedEarly.STOPPED)

    def cut_off_all(self) -> int:
        """Cancel every running turn (the process is stopping); how many there were."""
        return sum(self._end(work, EndedEarly.CUT_OFF) for work in list(self._running.values()))

    def why_ended(self, work: asyncio.Future[Any]) -> EndedEarly | None:
        """Why `work` was cancelled by this registry; None when it was not."""
        return self._ended.get(work)

    def _end(self, work: asyncio.Future[Any], why: EndedEarly) -> bool:
        if work.done() or work in self._ended:
            return False
        self._ended[work] = why
        work.cancel()
        return True
