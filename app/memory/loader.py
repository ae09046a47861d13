"""Load what an event needs of its owner's memory, every object at once and once, on one budget:
what has arrived when it runs out is used, the rest cancelled; a failing read is a warning."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from app.observability import tracing
from app.observability.logging import get_logger, since
from app.storage.breaker import StoreOffline
from app.storage.deadline import storage_deadline
from app.storage.store import ObjectStore, StoredObject

log = get_logger(__name__)


class Scope(StrEnum):
    GLOBAL = "global"  # the organisation's context
    USER = "user"  # the person's preferences
    PROFILE = "profile"  # Orion's record of the owner: welcome, settings, erasure
    CONVERSATION = "conversation"  # the conversation: whose, transcript, summary


@dataclass(frozen=True)
class LoadedMemories:
    objects: dict[Scope, StoredObject] = field(default_factory=dict)
    found: tuple[Scope, ...] = ()
    missing: tuple[Scope, ...] = ()
    failed: tuple[Scope, ...] = ()
    timed_out: tuple[Scope, ...] = ()
    duration_ms: float = 0.0

    def content(self, scope: Scope) -> str | None:
        stored = self.objects.get(scope)
        return stored.content if stored is not None else None

    def answered(self, scope: Scope) -> bool:
        """Whether storage said what `scope` holds (found or absent) in time."""
        return scope in self.found or scope in self.missing

    def read(self, scope: Scope) -> StoredObject | None:
        """The object as read (None: absent); only for a scope that `answered`."""
        return self.objects.get(scope)

    @property
    def complete(self) -> bool:
        """Every read answered (found or missing); none failed or ran out of time."""
        return not (self.failed or self.timed_out)


async def load_memories(
    store: ObjectStore, keys: Mapping[Scope, str], *, budget_s: float
) -> LoadedMemories:
    """Read every key at once, within `budget_s`."""
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

        objects: dict[Scope, StoredObject] = {}
        missing, failed, timed_out, offline = [], [], [], []
        for scope, task in tasks.items():
            if task not in done or isinstance(task.exception(), TimeoutError):
                # A read its deadline cut short may end just before the wait does.
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
            else:
                objects[scope] = stored
        result = LoadedMemories(
            objects=objects,
            found=tuple(objects),
            missing=tuple(missing),
            failed=tuple(failed),
            timed_out=tuple(timed_out),
            **since(started),
        )
        outcome: dict[str, object] = {
            name: [s.value for s in getattr(result, name)]
            for name in ("found", "missing", "failed", "timed_out")
        }
        outcome["duration_ms"] = result.duration_ms
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
