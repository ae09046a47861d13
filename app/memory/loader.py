"""Load what Orion remembers for one conversation: its scopes, in parallel, on a budget.

The global context, the person's preferences, the thread's summary and how to welcome the
person back are read at the same time (the global context is the same for everyone: the
store a caller passes may share it, app/memory/shared_context.py). When the budget runs
out, whatever has arrived is used and the rest is cancelled, and every read is bounded by
the same budget inside the store too (its retries included). A missing scope is normal
(first-time user, new thread, a thread whose summary is older than the retention window,
which the store reads as absent: app/memory/retention.py); a failing one is a warning —
except while the store is known to be down, which its breaker has already logged once; if
everything fails the conversation goes on without memory.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from enum import StrEnum

from app.memory.formatting import MemorySections
from app.memory.scopes import (
    global_context_key,
    session_context_key,
    user_preferences_key,
    welcome_key,
)
from app.observability import tracing
from app.observability.logging import get_logger
from app.storage.breaker import StoreOffline
from app.storage.deadline import storage_deadline
from app.storage.store import ObjectStore

log = get_logger(__name__)


class Scope(StrEnum):
    GLOBAL = "global"
    USER = "user"
    SESSION = "session"
    # How to greet the person back (app/learning/welcome.py): read with the rest, for the
    # greeting only, never put in Claude's prompt.
    WELCOME = "welcome"


@dataclass(frozen=True)
class LoadedMemories:
    contents: dict[Scope, str] = field(default_factory=dict)
    found: tuple[Scope, ...] = ()
    missing: tuple[Scope, ...] = ()
    failed: tuple[Scope, ...] = ()
    timed_out: tuple[Scope, ...] = ()
    duration_ms: float = 0.0

    def with_content(self, scope: Scope, content: str | None) -> LoadedMemories:
        """These memories with `scope`'s content replaced (None: dropped)."""
        contents = {s: c for s, c in self.contents.items() if s is not scope}
        if content is not None:
            contents[scope] = content
        return replace(self, contents=contents)

    def sections(self) -> MemorySections:
        return MemorySections(
            preferences=self.contents.get(Scope.USER),
            global_context=self.contents.get(Scope.GLOBAL),
            session_summary=self.contents.get(Scope.SESSION),
        )


async def load_memories(
    store: ObjectStore,
    *,
    user_id: str,
    thread_ts: str,
    budget_s: float,
    new_thread: bool = False,
    welcome: bool = False,
    summary_key: str | None = None,
) -> LoadedMemories:
    """`new_thread`: the thread has just opened, so it has no summary yet: not asked for
    (one storage request fewer per greeting), reported as missing. `welcome`: read how to
    greet the person back too (only a thread start greets). `summary_key`: where the
    thread's summary is, when not a person's session (a channel thread's)."""
    keys = {
        Scope.GLOBAL: global_context_key(),
        Scope.USER: user_preferences_key(user_id),
        Scope.SESSION: summary_key or session_context_key(thread_ts),
        Scope.WELCOME: welcome_key(user_id),
    }
    if new_thread:
        del keys[Scope.SESSION]
    if not welcome:
        del keys[Scope.WELCOME]
    with tracing.observe(
        "tool.memory.load", input={"scopes": [s.value for s in keys], "budget_s": budget_s}
    ) as span:
        started = time.perf_counter()
        with storage_deadline(budget_s):
            tasks = {scope: asyncio.ensure_future(store.read(key)) for scope, key in keys.items()}
        try:
            done, _ = await asyncio.wait(tasks.values(), timeout=budget_s)
        finally:
            # What has not arrived is not waited for, also when the caller gives up first.
            for task in tasks.values():
                task.cancel()

        contents: dict[Scope, str] = {}
        missing, failed, timed_out, offline = [], [], [], []
        if new_thread:
            missing.append(Scope.SESSION)
        for scope, task in tasks.items():
            if task not in done:
                timed_out.append(scope)
            elif (error := task.exception()) is not None:
                failed.append(scope)
                if isinstance(error, StoreOffline):
                    offline.append(scope)
                else:
                    log.warning(
                        "tool.memory.load.scope_failed",
                        scope=scope.value,
                        error=type(error).__name__,
                        exc_info=error,
                    )
            elif (stored := task.result()) is None:
                missing.append(scope)
                log.debug("tool.memory.load.scope_missing", scope=scope.value)
            else:
                contents[scope] = stored.content
        result = LoadedMemories(
            contents=contents,
            found=tuple(contents),
            missing=tuple(missing),
            failed=tuple(failed),
            timed_out=tuple(timed_out),
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        outcome = {
            "found": [s.value for s in result.found],
            "missing": [s.value for s in result.missing],
            "failed": [s.value for s in result.failed],
            "timed_out": [s.value for s in result.timed_out],
            "duration_ms": result.duration_ms,
        }
        span.update(output=outcome)
        if timed_out:
            log.warning("tool.memory.load.timeout", **outcome)
        elif failed and len(offline) < len(failed):
            log.warning("tool.memory.load.failed", **outcome)
        elif failed:
            log.info("tool.memory.load.skipped", reason="store unavailable", **outcome)
        else:
            log.info("tool.memory.load.success", **outcome)
        return result
