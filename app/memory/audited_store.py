"""The store Claude's memory tool writes through: every change it makes is audited.

Each write and each delete that went through becomes one `audit.memory` line (app/
observability/audit.py) naming the scope it touched and the person whose message the
turn answers; in a channel, `after_change` also records who changed which file in the
channel's own change log (app/learning/channel_memory.py), which its members see.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from app.memory.scopes import to_memory_path
from app.observability.audit import Action, audit
from app.storage.store import ObjectStore, StoreLayer

AfterChange = Callable[[Action, str], Awaitable[None]]


class AuditedStore(StoreLayer):
    def __init__(
        self,
        inner: ObjectStore,
        *,
        scope: str,
        actor: str | None,
        after_change: AfterChange | None = None,
    ) -> None:
        super().__init__(inner)
        self._scope = scope
        self._actor = actor
        self._after_change = after_change

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        generation = await self.inner.write(key, content, if_generation=if_generation)
        await self._changed("write", key)
        return generation

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        deleted = await self.inner.delete(key, if_generation=if_generation)
        if deleted:
            await self._changed("delete", key)
        return deleted

    async def _changed(self, action: Action, key: str) -> None:
        audit(action, scope=self._scope, actor=self._actor, what=to_memory_path(key))
        if self._after_change is not None:
            await self._after_change(action, key)
