"""Work a listener starts and does not wait for: counted for the drain, referenced until it ends,
in the listener's context. Never raises: what escapes, or a drain cuts off, is logged here."""

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


def run_in_background(work: Coroutine[Any, Any, object], *, name: str) -> asyncio.Task[None]:
    in_flight.enter()
    task = asyncio.create_task(_guarded(work, name), name=name)
    _running.add(task)
    task.add_done_callback(lambda done: _finished(done, work))
    return task


async def _guarded(work: Coroutine[Any, Any, object], name: str) -> None:
    try:
        await work
    except Exception as exc:
        # Work after the reply: a failure loses memory, not the person's answer.
        log.warning("slack.background.failed", task=name, exc_info=exc)
    finally:
        if tracing.enabled():
            # The listener flushed when it ended; these spans ended later.
            with contextlib.suppress(Exception):
                await asyncio.to_thread(tracing.flush)


def _finished(task: asyncio.Task[None], work: Coroutine[Any, Any, object]) -> None:
    _running.discard(task)
    in_flight.leave()
    if task.cancelled():
        log.warning("slack.background.cut_off", task=task.get_name())
        work.close()  # cancelled before it began: it never will
