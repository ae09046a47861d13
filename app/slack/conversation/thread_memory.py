"""The memory Orion keeps with a conversation's thread context (see thread_context_store):
restored when the conversation starts, saved with the thread, read by every later turn."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from app.memory.restore import RestoredMemory, restore_memory
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.storage.breaker import StoreOffline
from app.storage.deadline import time_left

log = get_logger(__name__)

MEMORY_CONTEXT_KEY = "orion_memory_context"
MEMORY_SCOPES_KEY = "orion_memory_scopes"
MEMORY_LOAD_MS_KEY = "orion_memory_load_ms"
# Whose memory the context holds, and when it was read: saving it checks that the person
# has not asked to be forgotten since (thread_context_store.py).
MEMORY_USER_KEY = "orion_memory_user"
MEMORY_READ_AT_KEY = "orion_memory_read_at"


def thread_context_with_memory(
    slack_context: dict[str, Any], restored: RestoredMemory, user: str
) -> dict[str, Any]:
    """Slack's own context fields plus the restored memory, ready to save.

    A restore that missed a scope (failed or timed out) is not saved as the thread's
    memory: each later turn then loads it again, so the memory returns once storage does.
    """
    context = {
        **slack_context,
        MEMORY_SCOPES_KEY: ",".join(scope.value for scope in restored.loaded.found),
        MEMORY_LOAD_MS_KEY: str(restored.loaded.duration_ms),
    }
    if restored.complete:
        context |= {
            MEMORY_CONTEXT_KEY: restored.context or "",
            MEMORY_USER_KEY: user,
            MEMORY_READ_AT_KEY: restored.started_at.isoformat(),
        }
    return context


def memory_read(context: dict[str, Any]) -> tuple[str, datetime] | None:
    """Whose memory a context holds and when it was read; None when it holds none."""
    user, read_at = context.get(MEMORY_USER_KEY), context.get(MEMORY_READ_AT_KEY)
    if MEMORY_CONTEXT_KEY not in context or not isinstance(user, str):
        return None
    if not isinstance(read_at, str):
        return None
    try:
        return user, datetime.fromisoformat(read_at)
    except ValueError:
        return None


def memory_context_from(thread_context: dict[str, Any] | None) -> str | None:
    """The saved memory block; None when the thread has none saved (old thread, restart)."""
    if not thread_context or MEMORY_CONTEXT_KEY not in thread_context:
        return None
    return thread_context[MEMORY_CONTEXT_KEY]


async def restore_for(
    provider: ServiceProvider, user: str | None, thread_ts: str, *, new_thread: bool = False
) -> RestoredMemory | None:
    """What Orion remembers for this conversation, within the current storage deadline;
    None when memory is off or nothing could be read. Never raises: memory is a nicety,
    and a failure here must not cost the person a greeting or an answer. `new_thread`:
    the thread has just opened (it has no summary to read)."""
    try:
        # Only getting the store (a fresh instance may still be connecting) is cut off at
        # the deadline: the restore keeps what arrived by then.
        async with provider.storage_within() as storage:
            memory_store = storage.memory_store
        if memory_store is None or not user:
            return None
        left = time_left()
        return await restore_memory(
            memory_store,
            user_id=user,
            thread_ts=thread_ts,
            budget_s=provider.settings.memory_load_timeout_s if left is None else left,
            token_budget=provider.settings.memory_context_token_budget,
            new_thread=new_thread,
        )
    except Exception as exc:
        log.warning("slack.memory_restore_failed", error=type(exc).__name__, exc_info=exc)
        return None


async def saved_memory(find: Callable[[], Awaitable[dict[str, Any] | None]]) -> str | None:
    """The memory saved with the conversation (`find` reads its thread context); None, so
    that the agent reloads it, when there is none or it cannot be read."""
    try:
        return memory_context_from(await find())
    except StoreOffline:
        return None
    except Exception as exc:
        log.warning("slack.thread_context.unavailable", error=type(exc).__name__, exc_info=exc)
        return None


async def keep_with_thread(
    save: Callable[[dict[str, Any]], Awaitable[Any]],
    slack_context: dict[str, Any],
    restored: RestoredMemory,
    user: str,
) -> None:
    """Save the restored memory with the thread's context (`save` writes it), after the
    person has their greeting or answer: they are not waiting for it, and a message that
    comes first simply loads the memory itself."""
    try:
        await save(thread_context_with_memory(slack_context, restored, user))
    except StoreOffline:
        log.debug("slack.thread_context.save_skipped", reason="store unavailable")
    except Exception as exc:
        log.warning("slack.thread_context.save_failed", error=type(exc).__name__, exc_info=exc)
