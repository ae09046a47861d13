"""Restore one conversation's memory: load the scopes, render them for the prompt."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from app.memory.formatting import format_memory_context
from app.memory.loader import LoadedMemories, Scope, load_memories
from app.memory.preferences_file import shaping_preferences
from app.storage.store import ObjectStore


@dataclass(frozen=True)
class RestoredMemory:
    loaded: LoadedMemories
    context: str | None
    # When the reads began: a copy of this memory kept anywhere must not outlive an
    # erasure of its person that came after (app/learning/erasure.py).
    started_at: datetime

    @property
    def complete(self) -> bool:
        """Every scope answered (found or missing); none failed or ran out of time."""
        return not (self.loaded.failed or self.loaded.timed_out)


async def restore_memory(
    store: ObjectStore,
    *,
    user_id: str,
    thread_ts: str,
    budget_s: float,
    token_budget: int,
    new_thread: bool = False,
    welcome: bool = False,
    channel_summary_key: str | None = None,
) -> RestoredMemory:
    """`channel_summary_key`: the turn is in a channel thread, whose summary is there; of
    the person's own memory only how they like answers (their language, the shape of an
    answer) is then used, nothing else of theirs."""
    started_at = datetime.now(UTC)
    loaded = await load_memories(
        store,
        user_id=user_id,
        thread_ts=thread_ts,
        budget_s=budget_s,
        new_thread=new_thread,
        welcome=welcome,
        summary_key=channel_summary_key,
    )
    if channel_summary_key is not None:
        loaded = loaded.with_content(
            Scope.USER, shaping_preferences(loaded.contents.get(Scope.USER))
        )
    return RestoredMemory(
        loaded=loaded,
        context=format_memory_context(loaded.sections(), token_budget=token_budget),
        started_at=started_at,
    )
