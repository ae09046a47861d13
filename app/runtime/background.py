"""Work a listener starts and does not wait for: the memory hooks around a reply.

Each task is counted in `in_flight`, so graceful shutdown waits for it as for a listener,
and kept referenced until it ends (the event loop itself holds tasks only weakly). It
inherits the listener's context: log fields (trace id, user, thread) and the open trace,
so its spans join the turn's trace. It never raises: the hooks log their own failures,
and anything that still escapes is logged here — as is work cut off before its end (a
shutdown's drain that ran out: app/shutdown.py), which is memory lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

from app.observability import tracing
from app.observability.logging import get_logger
from app.runtime.in_flight import in_flight

log = get_logger(__name__)

_running: set[asyncio.Task[None]] = set()


def run_in_background(work: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
    in_flight.enter()
    task = asyncio.create_task(_guarded(work, name), name=name)
    _running.add(task)
    task.add_done_callback(lambda done: _finished(done, work))
    return task


async def _guarded(work: Coroutine[Any, Any, None], name: str) -> None:
    try:
        await work
    except Exception as exc:
        # Work after the reply: a failure loses memory, not the person's answer.
        log.warning("slack.background.failed", task=name, error=type(exc).__name__, exc_info=exc)
    finally:
        if tracing.enabled():
            # The listener flushed when it ended; these spans ended later.
            with contextlib.suppress(Exception):
                await asyncio.to_thread(tracing.flush)


def _finished(task: asyncio.Task[None], work: Coroutine[Any, Any, None]) -> None:
    _running.discard(task)
    in_flight.leave()
    if task.cancelled():
        log.warning("slack.background.cut_off", task=task.get_name())
        work.close()  # cancelled before it began: it never will
