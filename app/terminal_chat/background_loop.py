"""An event loop on a thread of its own, so that the main thread can wait for a person.

The main thread reads lines (with readline, which needs it) and receives Ctrl-C as
KeyboardInterrupt wherever it waits, even for an answer; the loop meanwhile streams the
answer and keeps the learning of earlier turns going between prompts.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# How long an interrupted coroutine may take to wind down (close a stream, say).
WIND_DOWN_S = 5.0
WAKE_UP_S = 0.2


class BackgroundLoop:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="orion-chat-loop", daemon=True)

    def __enter__(self) -> BackgroundLoop:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(WIND_DOWN_S)
        if not self._thread.is_alive():
            self._loop.close()

    def _serve(self) -> None:
        # Ctrl-C and SIGTERM are for the main thread alone. Python runs signal handlers
        # there only, and the kernel may hand a process's signal to any thread that does
        # not block it: to this one (or to the worker threads it starts, which inherit
        # the mask), the main thread, asleep in readline, would never hear of it.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        self._loop.run_forever()

    def run(self, work: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
        """Run `work` on the loop and wait for its result. A KeyboardInterrupt (or any
        exception raised in this thread by a signal handler) while waiting cancels `work`,
        waits for it to wind down, then propagates. `timeout` ends the wait (and `work`)
        with TimeoutError."""
        finished = threading.Event()
        started: list[asyncio.Task[T]] = []

        def start() -> None:
            task = self._loop.create_task(_within(work, timeout))
            task.add_done_callback(lambda _: finished.set())  # runs if cancelled early too
            started.append(task)

        self._loop.call_soon_threadsafe(start)
        try:
            # In short waits: Python runs signal handlers (Ctrl-C's KeyboardInterrupt) only
            # when the main thread wakes up.
            while not finished.wait(WAKE_UP_S):
                pass
        except BaseException:
            # After `start` (callbacks run in order), so there is a task to cancel.
            self._loop.call_soon_threadsafe(lambda: started[0].cancel())
            deadline = time.monotonic() + WIND_DOWN_S
            while not finished.wait(WAKE_UP_S) and time.monotonic() < deadline:
                pass
            raise
        return started[0].result()


async def _within(work: Coroutine[Any, Any, T], limit_s: float | None) -> T:
    if limit_s is None:
        return await work
    async with asyncio.timeout(limit_s):
        return await work
