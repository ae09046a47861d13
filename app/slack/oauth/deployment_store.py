"""The store beneath every workspace's scope, as the OAuth stores reach it.

The Bolt app (and with it the installation and state stores) is built before the store
is: the store connects in the background (app/services.py). This hands each operation to
the deployment store once it is built; between build attempts it fails at once, as the
store being down does (`StoreUnavailable`), so an install shows its failure page and an
event goes unanswered rather than waiting.
"""

from __future__ import annotations

from app.runtime.retrying_build import NotBuilt
from app.services import ServiceProvider
from app.storage.store import ObjectInfo, ObjectStore, StoredObject, StoreUnavailable


class ProvidedDeploymentStore:
    """An `ObjectStore`: the provider's `Storage.deployment_store`."""

    def __init__(self, provider: ServiceProvider) -> None:
        self._provider = provider

    async def _store(self) -> ObjectStore:
        try:
            storage = await self._provider.storage()
        except NotBuilt as exc:
            raise StoreUnavailable("the store is not built yet") from exc
        if storage.deployment_store is None:  # only distribution mode builds one
            raise StoreUnavailable("no deployment store outside distribution mode")
        return storage.deployment_store

    async def read(self, key: str) -> StoredObject | None:
        return await (await self._store()).read(key)

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        return await (await self._store()).write(key, content, if_generation=if_generation)

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        return await (await self._store()).delete(key, if_generation=if_generation)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        return await (await self._store()).list(prefix)

    async def connect(self) -> None:
        """The provider connects it."""

    async def close(self) -> None:
        """The provider closes it."""
