"""The one list of every tool Claude can use, built per turn for one user and thread."""

from __future__ import annotations

from app.agent.tool_registry import ToolRegistry
from app.learning.memory_tools import ForgetTool, MemoryOverviewTool
from app.learning.recall import RecallLog, RecallTool
from app.memory.scopes import MemoryScope
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.store import ObjectStore


def tools_for_turn(
    *, store: ObjectStore | None, scope: MemoryScope, recalls: RecallLog | None = None
) -> ToolRegistry:
    """Memory tools only when memory is enabled (a store is given). `recalls`: where
    searches record the conversations they found (to show them to the person).

    All are bound to `scope`: whose memories they reach comes from the turn, never from
    the model's input.
    """
    if store is None:
        return ToolRegistry()
    return ToolRegistry(
        [
            ScopedMemoryTool(store, scope),
            RecallTool(store, scope, log=recalls),
            MemoryOverviewTool(store, scope),
            ForgetTool(store, scope),
        ]
    )
