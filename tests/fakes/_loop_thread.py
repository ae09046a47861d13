"""An asyncio event loop running in a daemon thread.

Every fake serves from its own loop so that it keeps answering while the code under test
blocks its own thread (sync tests, benchmark scripts) or runs its own loop (async tests).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError(f"{self._name} is not running")
        return self._loop

    def start(self) -> None:
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(started.set)
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        started.wait()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = 10.0) -> T:
        """Run `coro` on the loop and wait for its result from the calling thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            self.run(_drain(), timeout=5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        if not thread.is_alive():
            # Close only a stopped loop; a wedged thread keeps its loop (it is a daemon anyway).
            loop.close()
        self._loop = None
        self._thread = None


async def _drain() -> None:
    """Cancel leftover tasks and let closing transports finish: a transport's close completes
    on a later loop iteration, and a loop stopped before that leaks the socket."""
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for _ in range(3):
        await asyncio.sleep(0)
    await asyncio.get_running_loop().shutdown_asyncgens()
