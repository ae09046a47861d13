"""The agent's ReplySink for a terminal: the answer streams as it is written.

Until the first words arrive (memory to restore, a slow first token), a spinner on a
terminal says Orion is at it; piped output gets only the answer.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import TYPE_CHECKING, TextIO

from app.observability.invisible_text import INVISIBLE

if TYPE_CHECKING:
    from app.agent.memory_task import MemoryTask

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
FRAME_S = 0.1
WAITING = "thinking…"
# Back to the start of the line, and clear it.
_CLEAR_LINE = "\r\x1b[K"
# What a terminal would act on rather than show: control characters (ESC starts the
# sequences that move the cursor, clear the screen or set the window's title; CR rewrites
# the line) but the line break and the tab.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` as a terminal shows it and nothing else: without control characters, and
    without the invisible ones (a direction override that would turn the line around).
    An answer or a greeting can hold stored words, which a person or a prompt-injected
    Claude may have written."""
    return INVISIBLE.sub("", _CONTROL.sub("", text))


class TerminalReply:
    def __init__(self, out: TextIO, *, prefix: str) -> None:
        self._out = out
        self._prefix = prefix  # what the answer's first line starts with ("orion> ")
        self._spinner: asyncio.Task[None] | None = None
        self.started = False  # any of the answer shown yet

    async def __aenter__(self) -> TerminalReply:
        self._out.write(self._prefix)
        self._out.flush()
        if self._out.isatty():
            self._spinner = asyncio.create_task(self._spin())
        return self

    async def __aexit__(self, *_: object) -> None:
        self._stop_spinning()

    async def append(self, markdown: str) -> None:
        self._stop_spinning()
        self.started = True
        self._out.write(printable(markdown))
        self._out.flush()

    async def show_progress(self, status: str) -> None:
        self._stop_spinning()
        self._out.write(f"\n  ({printable(status)})\n")
        self._out.flush()

    async def show_task(self, task: MemoryTask) -> None:
        """Nothing more to print: `show_progress` already names each step on a terminal."""

    def link_to(self, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
        return None  # a terminal conversation has no Slack thread to link to

    async def _spin(self) -> None:
        for frame in itertools.cycle(FRAMES):
            self._out.write(f"{_CLEAR_LINE}{self._prefix}{frame} {WAITING}")
            self._out.flush()
            await asyncio.sleep(FRAME_S)

    def _stop_spinning(self) -> None:
        spinner, self._spinner = self._spinner, None
        if spinner is None:
            return
        # The spinner waits in its sleep (one loop, one thread): once cancelled, it never
        # writes again, so the line can be cleared now.
        spinner.cancel()
        self._out.write(f"{_CLEAR_LINE}{self._prefix}")
        self._out.flush()
