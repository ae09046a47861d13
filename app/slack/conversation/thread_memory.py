"""The memory a conversation is answered with: restored from the store for every event.

Nothing of it is kept with the thread (its saved context holds Slack's context only), so
that forgetting a preference, a note or a conversation reaches the very next message of a
thread already open: there is no copy left to forget.
"""

from __future__ import annotations

from app.memory.restore import RestoredMemory, restore_memory
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.storage.deadline import time_left

log = get_logger(__name__)


async def restore_for(
    provider: ServiceProvider,
    user: str | None,
    thread_ts: str,
    *,
    new_thread: bool = False,
    welcome: bool = False,
    channel_summary_key: str | None = None,
) -> RestoredMemory | None:
    """What Orion remembers for this conversation, within the current storage deadline;
    None when memory is off or nothing could be read. Never raises: memory is a nicety,
    and a failure here must not cost the person a greeting or an answer. `new_thread`:
    the thread has just opened (it has no summary to read); `welcome`: read how to greet
    the person back too (a thread start); `channel_summary_key`: a channel's thread, whose
    summary is there (of the person, only how they like answers is used)."""
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
            welcome=welcome,
            channel_summary_key=channel_summary_key,
        )
    except Exception as exc:
        log.warning("slack.memory_restore_failed", error=type(exc).__name__, exc_info=exc)
        return None
