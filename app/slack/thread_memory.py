"""The memory Orion keeps with an assistant thread's context (see thread_context_store)."""

from __future__ import annotations

from typing import Any

from app.memory.restore import RestoredMemory

MEMORY_CONTEXT_KEY = "orion_memory_context"
MEMORY_SCOPES_KEY = "orion_memory_scopes"
MEMORY_LOAD_MS_KEY = "orion_memory_load_ms"


def thread_context_with_memory(
    slack_context: dict[str, Any], restored: RestoredMemory
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
        context[MEMORY_CONTEXT_KEY] = restored.context or ""
    return context


def memory_context_from(thread_context: dict[str, Any] | None) -> str | None:
    """The saved memory block; None when the thread has none saved (old thread, restart)."""
    if not thread_context or MEMORY_CONTEXT_KEY not in thread_context:
        return None
    return thread_context[MEMORY_CONTEXT_KEY]
