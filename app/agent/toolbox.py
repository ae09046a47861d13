"""The one list of every tool Claude can use, built per turn for one user and thread — or,
in a channel, for the channel."""

from __future__ import annotations

from app.agent.tool_registry import ToolRegistry
from app.learning.channel_memory import ChannelChange
from app.learning.channel_memory_tool import ChannelMemoryTool
from app.learning.channel_recall import ChannelRecallScope, ChannelRecallTool
from app.learning.memory_tools import ForgetTool, MemoryOverviewTool
from app.learning.recall import LinkTo, RecallLog, RecallTool
from app.memory.audited_store import AuditedStore
from app.memory.change_log import ChangeLog, RecordingStore
from app.memory.scopes import ChannelMemoryScope, MemoryScope
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.observability.audit import channel_scope, person_scope
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
    the memory tool changes is recorded in `changes`, for the note under the answer (the
    `forget` tool's deletions are what the person asked for), and audited.
    """
    if store is None:
        return ToolRegistry()
    recorded = store if changes is None else RecordingStore(store, changes)
    audited = AuditedStore(
        ModelPathStore(recorded, scope), scope=person_scope(scope.user_id), actor=scope.user_id
    )
    return ToolRegistry(
        [
            ScopedMemoryTool(audited, scope),
            RecallTool(store, scope, log=recalls, link=link),
            MemoryOverviewTool(store, scope),
            ForgetTool(store, scope),
        ]
    )


def channel_tools_for_turn(
    *,
    store: ObjectStore | None,
    recall: ChannelRecallScope,
    actor: str,
    changes: ChangeLog | None = None,
    logged: list[ChannelChange] | None = None,
    link: LinkTo | None = None,
) -> ToolRegistry:
    """The tools of a turn in a channel thread: the memory tool on the channel's own
    directory (each change audited, and logged as `actor`'s in the channel's change log,
    which its members see, when the turn ends: `changes`; `logged`, that log as the turn
    read it, says who last changed a file it shows) and `recall` over what the
    channel may see. Nothing of any person's own memory: no overview, no forget, no
    `/memories/users/`."""
    if store is None:
        return ToolRegistry()
    scope = ChannelMemoryScope(recall.channel_id)
    recorded = store if changes is None else RecordingStore(store, changes)
    audited = AuditedStore(
        ModelPathStore(recorded, scope), scope=channel_scope(recall.channel_id), actor=actor
    )
    return ToolRegistry(
        [
            ChannelMemoryTool(audited, recall.channel_id, changes=logged or []),
            ChannelRecallTool(store, recall, actor=actor, link=link),
        ]
    )
