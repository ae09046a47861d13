"""The store Claude's memory tool writes through: every change it makes is audited.

Each write and each delete that went through becomes one `audit.memory` line (app/
observability/audit.py) naming the scope it touched and the person whose message the
turn answers. (In a channel, who changed which file also goes to the channel's own change
log when the turn ends: app/learning/channel_memory.py.)
"""

from __future__ import annotations

from app.memory.scopes import to_memory_path
from app.observability.audit import Action, audit
from app.storage.store import ObjectStore, StoreLayer


class AuditedStore(StoreLayer):
    def __init__(self, inner: ObjectStore, *, scope: str, actor: str | None) -> None:
        super().__init__(inner)
        self._scope = scope
        self._actor = actor

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        generation = await self.inner.write(key, content, if_generation=if_generation)
        self._changed("write", key)
        return generation

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        deleted = await self.inner.delete(key, if_generation=if_generation)
        if deleted:
            self._changed("delete", key)
        return deleted

    def _changed(self, action: Action, key: str) -> None:
        audit(action, scope=self._scope, actor=self._actor, what=to_memory_path(key))
