"""The one list of every tool Claude can use, built per turn for one user and thread."""

from __future__ import annotations

from app.agent.tool_registry import ToolRegistry
from app.learning.memory_tools import ForgetTool, MemoryOverviewTool
from app.learning.recall import LinkTo, RecallLog, RecallTool
from app.memory.change_log import ChangeLog, RecordingStore
from app.memory.scopes import MemoryScope
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.store import ObjectStore


def tools_for_turn(
    *,
    store: ObjectStore | None,
    scope: MemoryScope,
    recalls: RecallLog | None = None,
    changes: ChangeLog | None = None,
    link: LinkTo | None = None,
) -> ToolRegistry:
    """Memory tools only when memory is enabled (a store is given). `recalls`: where
    searches record the conversations they found (to show them to the person).

    All are bound to `scope`: whose memories they reach comes from the turn, never from
    the model's input. `link`: how a search links to the conversations it found. What
    the memory tool changes is recorded in `changes`, for the
    note under the answer (the `forget` tool's deletions are what the person asked for).
    """
    if store is None:
        return ToolRegistry()
    memory_store = store if changes is None else RecordingStore(store, changes)
    return ToolRegistry(
        [
            ScopedMemoryTool(memory_store, scope),
            RecallTool(store, scope, log=recalls, link=link),
            MemoryOverviewTool(store, scope),
            ForgetTool(store, scope),
        ]
    )
