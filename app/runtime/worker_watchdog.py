"""What a worker process (`HTTP_WORKERS`, app/http_workers.py) needs beyond what one
process has: an end when it can no longer serve, and Orion's bounded stop.

- **A wedged event loop.** uvicorn's supervisor asks each worker whether it lives over a
  pipe that a thread of the worker answers, so a worker whose loop is stuck still
  "lives"; and Cloud Run's liveness probe reaches whichever worker takes its connection.
  So a thread here has the loop note the time every second, and ends the process once
  the loop has not done so for `WEDGED_AFTER_S`: the supervisor then starts another.
- **A supervisor that is gone** (killed outright) leaves its workers holding the port
  with nobody to stop them: the same thread ends the worker when its parent changes.
- **Stopping.** A worker runs uvicorn's own server, whose signal handlers only set it
  stopping. `stop_as_one_process_does` puts Orion's handling in front of them (app/
  runtime/stop_signals.py): the first SIGTERM or SIGINT is passed on, so the worker
  drains as one process does, and the process is gone `STOP_DEADLINE_S` after it; a
  second one ends it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from types import FrameType
from typing import Any

from app.runtime.stop_signals import STOP_DEADLINE_S, STOP_SIGNALS, StopSignals, exit_now

# Far longer than anything Orion does on its loop (tens of milliseconds at worst), shorter
# than the 90 s after which Cloud Run's liveness probe would give up on the instance.
WEDGED_AFTER_S = 60.0
CHECK_EVERY_S = 1.0


class WorkerWatchdog:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        wedged_after_s: float = WEDGED_AFTER_S,
        check_every_s: float = CHECK_EVERY_S,
    ) -> None:
        self._loop = loop
        self._wedged_after_s = wedged_after_s
        self._check_every_s = check_every_s
        self._parent = os.getppid()
        self._beat = time.monotonic()

    def start(self) -> None:
        threading.Thread(target=self._watch, name="orion-worker-watchdog", daemon=True).start()

    def _note_time(self) -> None:
        self._beat = time.monotonic()

    def _watch(self) -> None:
        while True:
            time.sleep(self._check_every_s)
            if os.getppid() != self._parent:
                exit_now("its supervisor is gone")
            try:
                self._loop.call_soon_threadsafe(self._note_time)
            except RuntimeError:  # the loop is closed: the worker is ending anyway
                return
            silent_s = time.monotonic() - self._beat
            if silent_s > self._wedged_after_s:
                exit_now(f"its event loop answered nothing for {silent_s:.0f} s")


def stop_as_one_process_does(*, deadline_s: float = STOP_DEADLINE_S) -> None:
    """Put Orion's stop handling in front of the SIGTERM and SIGINT handlers installed
    now (a uvicorn worker's server has installed its own, with `signal.signal`, by the
    time its app is built). Must run in the main thread."""
    previous: dict[int, Any] = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    received: list[tuple[int, FrameType | None]] = []

    def pass_on() -> None:
        signum, frame = received[-1]
        handler = previous[signum]
        if callable(handler):
            handler(signum, frame)

    stops = StopSignals(pass_on, deadline_s=deadline_s)

    def handle(signum: int, frame: FrameType | None) -> None:
        received.append((signum, frame))
        stops.handle(signum)

    for signum in STOP_SIGNALS:
        with contextlib.suppress(ValueError):  # not the main thread: nothing to put
            signal.signal(signum, handle)
