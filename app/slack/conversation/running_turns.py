"""The turns this instance is answering now, by conversation, so a Stop can cancel one.

agent_view shows a native Stop button while a session is `processing`; pressing it sends
`agent_session_stopped` for the conversation (channel and thread). Instances share
nothing but the bucket, so a Stop that reaches another instance than the one answering
finds nothing here; that instance still sets the session back to `active`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

Conversation = tuple[str, str]  # (channel, thread_ts)


class RunningTurns:
    def __init__(self) -> None:
        self._running: dict[Conversation, asyncio.Future[Any]] = {}
        self._stopped: set[asyncio.Future[Any]] = set()

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

    def stop(self, channel: str, thread_ts: str) -> bool:
        """Cancel the conversation's running turn; False when none runs here."""
        work = self._running.get((channel, thread_ts))
        if work is None or work.done():
            return False
        self._stopped.add(work)
        work.cancel()
        return True

    def was_stopped(self, work: asyncio.Future[Any]) -> bool:
        return work in self._stopped
