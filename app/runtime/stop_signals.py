"""Stopping on Ctrl-C or SIGTERM: gracefully on the first, at once on a second or `STOP_DEADLINE_S`
after it (docs/operations.md). `handle` may run in a signal handler: no lock, log or thread."""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import json
import os
import signal
import sys
from collections.abc import Callable

# Cloud Run sends SIGKILL 10 s after SIGTERM; the graceful stop gets 7 s of it for answers
# in flight (app/shutdown.py), and the rest for closing clients and flushing traces.
STOP_DEADLINE_S = 9.5
# What a shell reports for a process that Ctrl-C ended.
EXIT_ON_SIGNAL = 128 + signal.SIGINT
# How faulthandler's watchdog ends the process at the deadline.
EXIT_AT_DEADLINE = 1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    def __init__(self, graceful: Callable[[], None], *, deadline_s: float = STOP_DEADLINE_S):
        self._graceful = graceful
        self._deadline_s = deadline_s
        self.received = 0
        # The watchdog writes the threads' stacks somewhere when it fires: not on a
        # person's terminal. Opened now, as nothing may be opened in a signal handler.
        self._watchdog_output = open(os.devnull, "w")  # noqa: SIM115 - lives with the process

    def handle(self, signum: int) -> None:
        """Act on SIGINT or SIGTERM; safe inside a signal handler (see the module's doc)."""
        self.received += 1
        if self.received > 1:
            exit_now(f"a second {signal.Signals(signum).name}")
        faulthandler.dump_traceback_later(self._deadline_s, exit=True, file=self._watchdog_output)
        self._graceful()

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
    """End the process without waiting for anything (threads, clean-ups), saying why in
    one line written straight to stderr's file descriptor: no lock, no buffer."""
    if os.isatty(2):
        line = f"orion: stopped at once ({why})"
    else:
        fields = {"severity": "WARNING", "message": "orion.stopped_at_once", "reason": why}
        line = json.dumps(fields)
    with contextlib.suppress(OSError):
        os.write(2, f"{line}\n".encode())
    for stream in (sys.stdout, sys.stderr):
        # What is buffered goes too; a stream the interrupted code was writing to refuses
        # (RuntimeError, re-entered), and that buffer is lost.
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_ON_SIGNAL)
