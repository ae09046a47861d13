"""The turns this process is answering now, by conversation, so a Stop can cancel one.

agent_view shows a native Stop button while a session is `processing`; pressing it sends
`agent_session_stopped` for the conversation (channel and thread). With several worker
processes on the instance (`HTTP_WORKERS`), the Stop may reach another worker than the
one answering: a Stop that finds no turn here asks the others (app/runtime/
worker_siblings.py). Instances share nothing but the bucket, so a Stop that reaches
another instance finds nothing; that instance still sets the session back to `active`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

from app.runtime.worker_siblings import WorkerSiblings

Conversation = tuple[str, str]  # (channel, thread_ts)


class Stopped(StrEnum):
    HERE = "here"
    BY_A_SIBLING = "by_a_sibling"  # another worker process of this instance
    NOTHING = "nothing"  # no turn runs in this conversation on this instance


class RunningTurns:
    def __init__(self, siblings: WorkerSiblings | None = None) -> None:
        self._running: dict[Conversation, asyncio.Future[Any]] = {}
        self._stopped: set[asyncio.Future[Any]] = set()
        self._siblings = siblings
        if siblings is not None:
            siblings.answer_with(self.stop_here)

    @contextmanager
    def running(self, channel: str, thread_ts: str, work: asyncio.Future[Any]) -> Iterator[None]:
        key = (channel, thread_ts)
        self._running[key] = work
        try:
            yield
        finally:
            if self._running.get(key) is work:
                del self._running[key]
            self._stopped.discard(work)

    async def stop(self, channel: str, thread_ts: str) -> Stopped:
        """Cancel the conversation's running turn, wherever on this instance it runs."""
        if self.stop_here(channel, thread_ts):
            return Stopped.HERE
        if self._siblings is not None and await self._siblings.stop_elsewhere(channel, thread_ts):
            return Stopped.BY_A_SIBLING
        return Stopped.NOTHING

    def stop_here(self, channel: str, thread_ts: str) -> bool:
        """Cancel the conversation's running turn; False when none runs in this process."""
        work = self._running.get((channel, thread_ts))
        if work is None or work.done():
            return False
        self._stopped.add(work)
        work.cancel()
        return True

    def was_stopped(self, work: asyncio.Future[Any]) -> bool:
        return work in self._stopped
