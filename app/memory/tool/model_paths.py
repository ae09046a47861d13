"""The memory tool's keys (`users/{user}/…`, app/memory/scopes.py) mapped to where they live, each
root in its owner's home (app/memory/homes.py), and listings back, for one scope only: a key
outside the scope's roots is refused here too, whatever the tool checked."""

from __future__ import annotations

from dataclasses import replace

from app.memory.homes import channel, person
from app.memory.key_prefixes import GLOBAL
from app.memory.scopes import ChannelMemoryScope, MemoryScope, ScopeRules
from app.storage.store import ObjectInfo, ObjectStore, StoredObject, StoreLayer


def storage_roots(scope: ScopeRules) -> dict[str, str]:
    """Each of the scope's roots (`users/U1/`) and where it lives (`people/U1/memory/`)."""
    if isinstance(scope, MemoryScope):
        home = person(scope.user_id)
        return {
            GLOBAL.prefix: GLOBAL.prefix,
            scope.user_root: home.memory_prefix,
            scope.session_root: home.notes_prefix(scope.thread_ts),
        }
    if isinstance(scope, ChannelMemoryScope):
        return {
            GLOBAL.prefix: GLOBAL.prefix,
            scope.channel_root: channel(scope.channel_id).memory_prefix,
        }
    raise TypeError(f"no storage for {type(scope).__name__}")


class ModelPathStore(StoreLayer):
    """An `ObjectStore` in the memory tool's keys, over the store's."""

    def __init__(self, inner: ObjectStore, scope: ScopeRules) -> None:
        super().__init__(inner)
        self._roots = storage_roots(scope)

    def to_storage(self, key: str) -> str:
        for root, stored in self._roots.items():
            if key.startswith(root):
                return stored + key[len(root) :]
            if f"{key}/" == root:
                return stored.removesuffix("/")
        raise ValueError("outside this conversation's memory")

    def to_model(self, key: str) -> str:
        for root, stored in self._roots.items():
            if key.startswith(stored):
                return root + key[len(stored) :]
        raise ValueError("outside this conversation's memory")

    async def read(self, key: str) -> StoredObject | None:
        stored = await self.inner.read(self.to_storage(key))
        return replace(stored, key=key) if stored is not None else None

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        return await self.inner.write(self.to_storage(key), content, if_generation=if_generation)

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        return await self.inner.delete(self.to_storage(key), if_generation=if_generation)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        found = await self.inner.list(self.to_storage(prefix))
        return [replace(o, key=self.to_model(o.key)) for o in found]


def person_memory_key(user_id: str, model_key: str) -> str:
    """Where a file of the person's memory (`users/{user}/notes.md`, as the memory tool
    names it) lives; ValueError for any other path."""
    root = f"users/{user_id}/"
    if not model_key.startswith(root) or len(model_key) == len(root):
        raise ValueError("not one of this person's notes")
    return person(user_id).memory_prefix + model_key[len(root) :]
