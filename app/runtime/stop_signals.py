"""Stopping on Ctrl-C or SIGTERM: gracefully on the first signal, within a bounded time.

The first SIGINT or SIGTERM asks the server to stop gracefully (answers in flight may
finish, app/shutdown.py). A second one — a person pressing Ctrl-C again — ends the
process at once. And whatever the graceful stop waits for, the process is gone
`STOP_DEADLINE_S` after the first signal: a worker thread blocked in a storage or HTTP
call cannot be interrupted, and Python would otherwise wait for it at exit (with
google-cloud-storage's default timeouts, a minute or more).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable

from app.observability.logging import get_logger

log = get_logger(__name__)

# Cloud Run sends SIGKILL 10 s after SIGTERM; the graceful stop gets 7 s of it for answers
# in flight (app/shutdown.py), and the rest for closing clients and flushing traces.
STOP_DEADLINE_S = 9.5
# What a shell reports for a process that a signal ended.
EXIT_ON_SIGNAL = 128 + signal.SIGINT
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """Counts the stop signals of one process and acts on them."""

    def __init__(self, graceful: Callable[[], None], *, deadline_s: float = STOP_DEADLINE_S):
        self._graceful = graceful
        self._deadline_s = deadline_s
        self.received = 0

    def handle(self, signum: int) -> None:
        """Call from a signal handler (or the event loop's). The deadline is armed before
        anything else, and nothing here may fail before it is (see `_log`)."""
        self.received += 1
        name = signal.Signals(signum).name
        if self.received > 1:
            exit_now(f"a second {name}")
        watchdog = threading.Timer(self._deadline_s, exit_now, args=("the stop deadline",))
        watchdog.daemon = True  # must not itself keep the process alive
        watchdog.start()
        self._graceful()
        _log(log.info, "orion.stopping", signal=name, deadline_s=self._deadline_s)

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Handle SIGINT and SIGTERM on `loop` (from the main thread; elsewhere, as in
        tests that run Orion on a thread of their own, nothing is installed)."""
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self.handle, signum)


def interrupt_on_sigterm() -> None:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, until a server installs its own
    handlers: a process stopped while it starts (or runs a one-off command) ends the same
    way for both, quietly (app/cli.py)."""
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def exit_now(why: str) -> None:
    """End the process without waiting for anything (threads, clean-ups)."""
    _log(log.warning, "orion.stopped_at_once", reason=why)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_ON_SIGNAL)


def _log(emit: Callable[..., object], event: str, **fields: object) -> None:
    """Log from a signal handler. Python runs the handler in the main thread between two
    of its operations, possibly in the middle of writing a log line to the same stream:
    the write then fails ("reentrant call inside BufferedWriter"). Losing that one line
    is the lesser harm; the stop itself must go on (and no other way to report is left)."""
    with contextlib.suppress(RuntimeError):
        emit(event, **fields)
